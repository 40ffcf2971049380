"""Benchmark: ``infodiv demo`` end to end, wall and CPU time against its target, and its
analysis stages in process CPU seconds beside the implementation they replaced.

End to end (the default): runs ``infodiv demo --out <tmp> [--n N]`` in a child process (a
fresh run folder, so nothing is reused), and records its wall time, the CPU time of the child
and its children, the peak resident memory, the load average before and after (the target is
stated for an idle 2-core machine: a load average above about 0.5 at the start means the wall
time measures other work too), the stage timings from the run's ``run.json`` and the demo's
settings (B, K, objectives). The ratio ``wall / target`` is the target's: met when <= 1. The
same call first runs the demo with accuracy as its only objective (``--objective accuracy``)
as its baseline, and records what judging usable information beside it costs
(``wall_over_baseline``, ``cpu_over_baseline``).

Side by side (``sides``; ``--stages-only RUN`` measures them alone on an existing demo run
folder): the curves stage (and with ``--decompose`` the decompositions) of the demo's run with
the demo's settings, in process CPU seconds with one job and one BLAS thread, against the
reference implementation loaded from git (``benchmarks/_analysis_sides.py``: the analysis
files as they stood before the speed-up), the two sides one after the other in the same call,
with the load average around each and whether their reports agree number for number.
``--n-bootstrap``/``--power`` shrink B (= K) and the power surrogates of both sides alike.
Writes ``benchmarks/results/demo.json`` (``--stages-only`` replaces only its ``sides``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 150.0
#: the baseline of the same call: the demo judging the model's own readout only
BASELINE = ("--objective", "accuracy")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_demo(n: int | None, out: Path, extra=()) -> dict:
    argv = [sys.executable, "-m", "infodiv.cli", "demo", "--out", str(out), "--quiet", *extra]
    if n is not None:
        argv += ["--n", str(n)]
    load0 = os.getloadavg()
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    cpu = _children_cpu() - cpu0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"bench_demo: infodiv demo failed ({proc.returncode}): "
                         f"{proc.stderr.strip().splitlines()[-1:]}")
    folder = next(out.glob("*/run.json")).parent
    run = json.loads((folder / "run.json").read_text())
    return {"command": " ".join(argv[2:]), "wall_s": wall,
            "cpu_s": cpu, "peak_rss_gib": usage.ru_maxrss / 2**20,
            "load_average_start": list(load0), "load_average_end": list(os.getloadavg()),
            "stages_s": run.get("timings_s", {}), "config": run.get("config", {}),
            "run_command": run.get("command"), "summary": proc.stdout.strip().splitlines()[-12:]}


def sides(run_dir, args) -> dict:
    """The analysis stages beside the reference (module docstring)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _analysis_sides import side_by_side

    stages = ("decompose", "curves") if args.decompose else ("curves",)
    out = side_by_side(run_dir, n_bootstrap=args.n_bootstrap, power=args.power, stages=stages)
    out["run"] = "the demo's run (SmolLM2-135M, AG News, block members)"
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=None, help="rows (default: the demo's own)")
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "demo.json")
    p.add_argument("--stages-only", type=Path, default=None, metavar="RUN",
                   help="only the side-by-side stages, on this demo run folder")
    p.add_argument("--decompose", action="store_true",
                   help="the decompositions side by side too")
    p.add_argument("--n-bootstrap", type=int, default=None, help="B (= K) of both sides")
    p.add_argument("--power", type=int, default=None, help="power surrogates of both sides")
    args = p.parse_args(argv)
    if args.stages_only is not None:
        res = json.loads(args.out.read_text()) if args.out.is_file() else {}
        res["sides"] = sides(args.stages_only, args)
        args.out.write_text(json.dumps(res, indent=1) + "\n")
        print(f"sides: ratio {res['sides']['ratio']}, identical {res['sides'].get('identical')}"
              f" -> {args.out}")
        return 0
    with tempfile.TemporaryDirectory(prefix="infodiv-bench-demo-") as tmp:
        base = run_demo(args.n, Path(tmp) / "accuracy-only", BASELINE)
        res = run_demo(args.n, Path(tmp) / "default")
        res["sides"] = sides(next(Path(tmp, "default").glob("*/run.json")).parent, args)
    res["baseline"] = {"what": "the same demo with accuracy as its only objective "
                               f"({' '.join(BASELINE)}), run first in the same call",
                       **{k: base[k] for k in ("wall_s", "cpu_s", "stages_s",
                                               "load_average_start", "load_average_end")}}
    res["wall_over_baseline"] = res["wall_s"] / base["wall_s"]
    res["cpu_over_baseline"] = res["cpu_s"] / base["cpu_s"]
    res.update(target_s=TARGET_S, wall_over_target=res["wall_s"] / TARGET_S,
               met=res["wall_s"] <= TARGET_S, cpu_count=os.cpu_count(),
               machine=platform.processor() or platform.machine(),
               date_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    args.out.write_text(json.dumps(res, indent=1) + "\n")
    print(f"demo: {res['wall_s']:.0f} s wall, {res['cpu_s']:.0f} s CPU, load "
          f"{res['load_average_start'][0]:.2f} -> {res['load_average_end'][0]:.2f}; "
          f"wall / {TARGET_S:.0f} s = {res['wall_over_target']:.2f}; against accuracy only "
          f"({base['wall_s']:.0f} s wall, {base['cpu_s']:.0f} s CPU): wall "
          f"{res['wall_over_baseline']:.2f}x, CPU {res['cpu_over_baseline']:.2f}x -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
