"""Cost of the default label decomposition (usable information), against its reference.

``estimators.information_decomposition(u, y)`` with its defaults (the cross-fitted joint with
nested family and strength selection, every member's term, the label null, the paired
bootstrap) on synthetic members (:mod:`estimators.members_truth`, n = 2000), timed in process
CPU seconds with one BLAS thread, beside the reference: the same estimator as it stood at
commit :data:`REFERENCE` (independent grid fits of every inner fold and strength from zero,
transforms refitted per inner fold, every member's probes fitted in lock-step numpy arrays),
loaded from git into a private package. The two run alternately on the same samples
(``--repeats`` pairs per case), so load on the machine hits both alike; the ratio of each pair
is recorded, with their geometric mean and range. The first call of the compiled kernels in a
fresh process (loading numba's cache, or compiling on a first run) is timed apart.

Cost against the number of members (``--scaling``, new code only): M = 61, 301, 1000 at
C = 4 (members of :class:`estimators.members_truth.MemberModel`), with the least-squares slope
of log CPU against log M.

Writes ``benchmarks/results/usable_speed.json``.
Usage: ``python benchmarks/bench_usable_speed.py [--repeats 3] [--scaling 61,301,1000]``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "usable_speed.json"
#: the commit whose estimator is the reference
REFERENCE = "ad3ffd5"
REFERENCE_FILES = ("_logistic.py", "_probe_families.py", "usable.py", "relevancy.py",
                   "label_decomposition.py")
CASES = ((61, 4), (61, 2), (8, 4))


def load_reference(commit: str = REFERENCE):
    """``label_decomposition`` of ``commit`` as a private package (imports of its own modules
    made relative; the rest of ``estimators`` is today's)."""
    tmp = Path(tempfile.mkdtemp(prefix="usable_reference_"))
    pkg = tmp / "usable_reference"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name in REFERENCE_FILES:
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:estimators/{name}"],
                              check=True, capture_output=True, text=True).stdout
        for mod in ("_logistic", "_probe_families", "relevancy", "usable"):
            text = text.replace(f"from estimators import {mod}", f"from . import {mod}")
            text = text.replace(f"from estimators.{mod} import", f"from .{mod} import")
        (pkg / name).write_text(text)
    sys.path.insert(0, str(tmp))
    return importlib.import_module("usable_reference.label_decomposition").label_decomposition


def _model(m, c):
    from estimators.members_truth import MemberModel

    return MemberModel(f"C{c}_M{m}", c, m, 2.5 if c == 4 else 2.0)


def _cpu(fn, *args):
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.process_time()
        out = fn(*args)
        return out, time.process_time() - t0


def _summary(d, truth):
    return {"joint": d.joint, "relevancy": d.relevancy, "diversity": d.diversity,
            "joint_error": d.joint - truth["joint"],
            "relevancy_error": d.relevancy - truth["relevancy"],
            "diversity_error": d.diversity - truth["diversity"]}


def run_pairs(reference, repeats: int) -> dict:
    from estimators import information_decomposition
    from estimators.members_truth import truth

    out = {}
    for m, c in CASES:
        model = _model(m, c)
        tr = truth(model)
        rows = []
        for rep in range(repeats):
            u, y = model.sample(2000, np.random.default_rng([rep, m, c]))
            ref, t_ref = _cpu(reference, u, y)
            new, t_new = _cpu(information_decomposition, u, y)
            rows.append({"seed": rep, "reference_cpu_s": t_ref, "cpu_s": t_new,
                         "ratio": t_ref / t_new, "load_average": list(os.getloadavg()),
                         "reference": _summary(ref, tr), "new": _summary(new, tr)})
            print(f"(2000, {m}, {c}) rep {rep}: reference {t_ref:6.2f} s, new {t_new:5.2f} s, "
                  f"ratio {t_ref / t_new:5.1f}; I {ref.joint:.3f} / {new.joint:.3f}, "
                  f"R {ref.relevancy:.3f} / {new.relevancy:.3f} (truth {tr['joint']:.3f}, "
                  f"{tr['relevancy']:.3f})", flush=True)
        ratios = np.array([r["ratio"] for r in rows])
        out[f"(2000, {m}, {c})"] = {
            "shape": [2000, m, c], "truth": {k: tr[k] for k in ("joint", "relevancy",
                                                                "diversity")},
            "pairs": rows, "ratio_geometric_mean": float(np.exp(np.log(ratios).mean())),
            "ratio_range": [float(ratios.min()), float(ratios.max())],
            "reference_cpu_s_median": float(np.median([r["reference_cpu_s"] for r in rows])),
            "cpu_s_median": float(np.median([r["cpu_s"] for r in rows]))}
    return out


def run_scaling(sizes, repeats: int) -> dict:
    from estimators import information_decomposition

    rows = []
    for m in sizes:
        model = _model(m, 4)
        times = []
        for rep in range(repeats):
            u, y = model.sample(2000, np.random.default_rng([rep, m, 4]))
            _, t = _cpu(information_decomposition, u, y)
            times.append(t)
        rows.append({"n_members": m, "cpu_s": times, "cpu_s_median": float(np.median(times)),
                     "load_average": list(os.getloadavg())})
        print(f"M = {m}: {np.median(times):.2f} CPU s", flush=True)
    x = np.log([r["n_members"] for r in rows])
    t = np.log([r["cpu_s_median"] for r in rows])
    slope = float(np.polyfit(x, t, 1)[0]) if len(rows) > 1 else float("nan")
    return {"shape": "(2000, M, 4)", "rows": rows, "loglog_slope": slope}


def first_call() -> dict:
    """CPU seconds of the first call in this process (numba's cache loaded or compiled)."""
    from estimators import information_decomposition

    u, y = _model(4, 4).sample(300, np.random.default_rng(0))
    _, first = _cpu(information_decomposition, u, y)
    _, second = _cpu(information_decomposition, u, y)
    return {"first_call_cpu_s": first, "second_call_cpu_s": second, "shape": [300, 4, 4]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scaling", default="61,301,1000")
    parser.add_argument("--scaling-repeats", type=int, default=1)
    parser.add_argument("--reference", default=REFERENCE)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    result = {"reference_commit": args.reference, "threads": 1, "n": 2000,
              "load_average_start": list(os.getloadavg()), "first_call": first_call()}
    print(json.dumps(result["first_call"]), flush=True)
    reference = load_reference(args.reference)
    _cpu(reference, *_model(4, 4).sample(300, np.random.default_rng(0)))
    result["pairs"] = run_pairs(reference, args.repeats)
    sizes = [int(s) for s in args.scaling.split(",") if s]
    if sizes:
        result["scaling"] = run_scaling(sizes, args.scaling_repeats)
    result["load_average_end"] = list(os.getloadavg())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    for key, entry in result["pairs"].items():
        print(f"{key}: reference / new = {entry['ratio_geometric_mean']:.1f} "
              f"(range {entry['ratio_range'][0]:.1f}-{entry['ratio_range'][1]:.1f})")
    if sizes:
        print(f"log-log slope of CPU against M: {result['scaling']['loglog_slope']:.2f}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
