"""The analysis stages of a run, timed in process CPU seconds beside the implementation they
replaced (shared by ``bench_demo.py`` and ``bench_head.py``).

The reference is today's ``infodiv`` with the files of the analysis speed-up
(:data:`CHANGED`) as they stood at commit :data:`REFERENCE` (and :data:`ADDED` left out),
copied into a private folder that a child process puts first on its path. Each side runs in
its own child process with one BLAS thread and one job (process CPU is then the stage's
whole cost): a warm-up on the first rows (numba kernels loaded or compiled, not timed), then
each stage on the whole run, writing its report into a folder of its own. The parent runs the
sides alternately, compares the two curves reports number for number (``identical``) and
records the load average around each side.

Child usage (internal): ``python benchmarks/_analysis_sides.py --child RUN OUT.json REPORTS
[--n-bootstrap B] [--power P] [--stages decompose,curves,replicates]``
(``replicates``: one example-resample and one label-permutation replicate of the claims per
objective, the engine's unit of cost).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the commit before the analysis speed-up
REFERENCE = "2b68f50"
#: files of infodiv the speed-up changed (replaced by their REFERENCE versions) and added
CHANGED = ("claims/premise.py", "claims/diversity_effect.py", "diversity.py",
           "inference/claim.py", "inference/engine.py", "inference/nulls.py",
           "inference/surrogates.py", "setfunctions/base.py", "setfunctions/readout.py",
           "setfunctions/calibration.py")
ADDED = ("setfunctions/_prefix.py",)


def reference_tree(parent: Path) -> Path:
    """A folder holding the reference ``infodiv`` package (module docstring)."""
    tree = parent / "reference"
    shutil.copytree(ROOT / "infodiv", tree / "infodiv", ignore=shutil.ignore_patterns(
        "*.pyc"))
    for name in CHANGED:
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{REFERENCE}:infodiv/{name}"],
                              check=True, capture_output=True, text=True).stdout
        (tree / "infodiv" / name).write_text(text)
    for name in ADDED:
        (tree / "infodiv" / name).unlink(missing_ok=True)
    return tree


def _settings(n_bootstrap: int | None, power: int | None):
    from dataclasses import replace

    from infodiv.commands.demo import CURVES, DECOMPOSE, INFERENCE
    from infodiv.study.settings import StudySettings

    inf = replace(INFERENCE, n_jobs=1)
    if n_bootstrap is not None:
        inf = replace(inf, n_bootstrap=n_bootstrap)
    if power is not None:
        inf = replace(inf, power_replicates=power)
    return StudySettings(decompose=DECOMPOSE, curves=CURVES, inference=inf)


def _warm_up(run) -> None:
    """Every compiled kernel of the set functions called once (on a few rows)."""
    import numpy as np

    from infodiv.setfunctions import make_set_function

    orders = np.stack([np.arange(run.n_members), np.arange(run.n_members)[::-1]])
    for objective in ("accuracy", "mi_readout"):
        f = make_set_function(run, objective)
        f.orders_scores(orders)
        f.set_scores([orders[0, :2], orders[1, :3]])


def _replicates(contrib, _out, settings) -> dict:
    """Process CPU of one example-resample and two label-permutation replicates of the curve
    and control claims, per objective, with the study's design (the engine's per-replicate
    unit: a verdict costs about B + n_mc of the first and K of the second; the first
    permutation also computes what all of them share, ``permutation_first``)."""
    import numpy as np

    from infodiv.claims import get_claims
    from infodiv.inference.claim import Design
    from infodiv.inference.engine import ClaimStatistics
    from infodiv.inference.replicates import run_replicates

    out = {}
    claims = get_claims(settings.curves.claims)
    for index, objective in enumerate(settings.curves.objectives):
        design = Design(objective, {"ridge": settings.curves.ridge},
                        n_orders=settings.inference.n_orders,
                        n_triples=settings.curves.n_triples, n_random=settings.selection.n_random)
        pipe = ClaimStatistics(claims, design)
        null = pipe.under_null() if hasattr(pipe, "under_null") else pipe
        cell = {}
        seeds = np.random.SeedSequence([0, index]).spawn(3)   # rows of each objective's own
        for kind, pipeline, seed in (("bootstrap", pipe, seeds[0]),
                                     ("permutation_first", null, seeds[1]),
                                     ("permutation", null, seeds[2])):
            c0 = time.process_time()
            run_replicates(contrib, pipeline, kind.split("_")[0], [seed])
            cell[kind] = time.process_time() - c0
        out[objective] = cell
    return out


def _child(argv) -> int:
    import numpy as np
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    import infodiv
    from infodiv.runfiles import load_run
    from infodiv.study.curves import curves_stage
    from infodiv.study.pipeline import decompose_stage

    p = argparse.ArgumentParser()
    p.add_argument("run")
    p.add_argument("out")
    p.add_argument("reports")
    p.add_argument("--n-bootstrap", type=int, default=None)
    p.add_argument("--power", type=int, default=None)
    p.add_argument("--stages", default="curves")
    a = p.parse_args(argv)
    contrib = load_run(a.run)[0]
    settings = _settings(a.n_bootstrap, a.power)
    stages = {"decompose": lambda c, out, s: decompose_stage(c, out, s),
              "curves": lambda c, out, s: curves_stage(c, out, s, log=lambda *x: None),
              "replicates": _replicates}
    res = {"infodiv": str(Path(infodiv.__file__).parent), "cpu_s": {}, "wall_s": {},
           "load_average": {}}
    with threadpool_limits(1):
        t0 = time.process_time()   # warm-up: compiled kernels loaded (or compiled), not timed
        _warm_up(contrib.take(np.arange(min(80, contrib.n_examples))))
        res["warm_up_cpu_s"] = time.process_time() - t0
        for name in a.stages.split(","):
            res["load_average"][name] = [list(os.getloadavg())]
            c0, w0 = time.process_time(), time.perf_counter()
            got = stages[name](contrib, Path(a.reports) / name, settings)
            res["cpu_s"][name] = time.process_time() - c0
            if name == "replicates":
                res["replicates"] = got
            res["wall_s"][name] = time.perf_counter() - w0
            res["load_average"][name].append(list(os.getloadavg()))
    Path(a.out).write_text(json.dumps(res))
    return 0


def _numbers(doc):
    """The report without its timings (what must agree between the sides)."""
    if isinstance(doc, dict):
        return {k: _numbers(v) for k, v in doc.items()
                if k not in ("cpu_s", "timings_s", "seconds", "dir")}
    if isinstance(doc, list):
        return [_numbers(v) for v in doc]
    return doc


def side_by_side(run_dir, *, n_bootstrap=None, power=None, stages=("curves",),
                 first="reference") -> dict:
    """Both sides on ``run_dir`` (module docstring): per side ``cpu_s``, ``wall_s`` and the
    load average of each stage, the ratio reference / new per stage, and whether the curves
    reports agree exactly."""
    out = {"reference_commit": REFERENCE, "changed_files": [f"infodiv/{n}" for n in CHANGED],
           "n_bootstrap": n_bootstrap, "power_replicates": power, "order": []}
    with tempfile.TemporaryDirectory(prefix="infodiv-sides-") as tmp:
        tmp = Path(tmp)
        paths = {"reference": reference_tree(tmp), "new": ROOT}
        order = [first, "new" if first == "reference" else "reference"]
        for side in order:
            env = dict(os.environ, PYTHONPATH=str(paths[side]), OMP_NUM_THREADS="1")
            argv = [sys.executable, str(Path(__file__).resolve()), "--child", str(run_dir),
                    str(tmp / f"{side}.json"), str(tmp / f"{side}-reports"),
                    "--stages", ",".join(stages)]
            argv += ["--n-bootstrap", str(n_bootstrap)] if n_bootstrap else []
            argv += ["--power", str(power)] if power is not None else []
            proc = subprocess.run(argv, env=env, cwd=str(paths[side]), capture_output=True,
                                  text=True)
            if proc.returncode:
                raise SystemExit(f"{side} side failed: {proc.stderr[-2000:]}")
            out[side] = json.loads((tmp / f"{side}.json").read_text())
            out["order"].append(side)
            print(f"{side}: " + ", ".join(f"{k} {v:.1f} CPU s" for k, v in
                                          out[side]["cpu_s"].items()), flush=True)
        if not out["reference"]["infodiv"].startswith(str(tmp)):
            raise SystemExit(f"the reference side imported {out['reference']['infodiv']}")
        out["ratio"] = {k: out["reference"]["cpu_s"][k] / out["new"]["cpu_s"][k]
                        for k in stages}
        if "replicates" in stages:
            out["ratio_replicates"] = {
                obj: {kind: out["reference"]["replicates"][obj][kind] / cpu
                      for kind, cpu in cell.items()}
                for obj, cell in out["new"]["replicates"].items()}
        if "curves" in stages:
            docs = [json.loads((tmp / f"{s}-reports" / "curves" / "report.json").read_text())
                    for s in ("reference", "new")]
            out["identical"] = _numbers(docs[0]) == _numbers(docs[1])
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        sys.exit(_child(sys.argv[2:]))
    raise SystemExit(__doc__)
