"""Cost and real-run numbers of the verdicts added to existing curves reports (issue 9).

For every committed curves report (read only: docs/results/<name>/report.json) and objective,
runs :func:`infodiv.inference.added.add_verdicts` (the diversity-effect verdict: label null of
the diversity regression rerun on the report's seeds, planted-redundancy power and the
shuffled-label rate) on a copy of the document, and records the verdict, its power and
false-positive rate, whether the rerun null reproduces the stored one, and the CPU seconds of
this process (one thread). Writes benchmarks/results/inference_added.json (merged per case, so
cases can be run one at a time). Usage::

    nice -n 19 env OMP_NUM_THREADS=1 python benchmarks/bench_inference_added.py \\
        [--cases smollm2-135m-sst2-block:accuracy_calibrated ...] \\
        [--selection smollm2-135m-sst2-block ...]

``selection``: :func:`infodiv.inference.added.add_selection_verdicts` (B = K = 50 selections
and 2 x 20 surrogates) per report folder.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extraction.contributions import Contributions  # noqa: E402
from infodiv.inference.added import add_selection_verdicts, add_verdicts  # noqa: E402
from infodiv.reports.serialize import jsonable  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "inference_added.json"
DEFAULT = ["smollm2-135m-sst2-block:accuracy_calibrated",
           "smollm2-135m-sst2-block:cross_entropy_calibrated",
           "smollm2-135m-sst2-block:accuracy", "smollm2-135m-sst2-block:mi_gaussian",
           "stories260k-sst2-block:accuracy_calibrated",
           "stories260k-sst2-block:cross_entropy_calibrated",
           "stories260k-sst2-block:accuracy", "stories260k-sst2-block:mi_gaussian",
           "smollm2-135m-sst2-head:accuracy", "smollm2-135m-sst2-head-calibrated:"
           "accuracy_calibrated"]


def _run_dir(report_dir: Path) -> Path:
    regen = report_dir / "regeneration.json"
    if regen.exists():
        return ROOT / json.loads(regen.read_text())["run_dir"]
    return ROOT / "runs" / report_dir.name


def diversity_case(name: str, objective: str) -> dict:
    report_dir = ROOT / "docs" / "results" / name
    doc = json.loads((report_dir / "report.json").read_text())
    contrib = Contributions.load(_run_dir(report_dir))
    c0, w0 = time.process_time(), time.perf_counter()
    v = add_verdicts(doc, contrib, objective)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    entry = doc["objectives"][objective]
    div = entry["inference"]["diversity"]
    return jsonable({
        "run": name, "objective": objective, "N": contrib.n_examples,
        "M": contrib.n_members, "verdict": v,
        "partial_r": {k: div["partial_r"].get(k) for k in ("value", "ci", "null")},
        "beta": {k: div["beta"].get(k) for k in ("value", "ci", "null")},
        "null_check": entry["report"]["diversity"]["verdict_null_check"],
        "planted_redundancy": entry["report"]["power"]["detector"]["planted_redundancy"],
        "cpu_s": cpu, "wall_s": wall, "load_1min": os.getloadavg()[0]})


def selection_case(name: str) -> dict:
    report_dir = ROOT / "docs" / "results" / name
    doc = json.loads((report_dir / "report.json").read_text())
    contrib = Contributions.load(_run_dir(report_dir))
    c0, w0 = time.process_time(), time.perf_counter()
    verdicts = add_selection_verdicts(doc, contrib)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    inf = doc["selection"]["inference"]
    return jsonable({"run": name, "objective": inf["objective"], "N": contrib.n_examples,
                     "M": contrib.n_members, "verdicts": verdicts,
                     "statistics": inf["statistics"], "n_resamples": inf["n_resamples"],
                     "n_null": inf["n_null"], "cpu_s": cpu, "cpu_s_parts": inf["cpu_s"],
                     "wall_s": wall, "load_1min": os.getloadavg()[0]})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="*", default=DEFAULT, help="<report folder>:<objective>")
    ap.add_argument("--selection", nargs="*", default=[],
                    help="report folders whose selection verdicts to add (full cost)")
    a = ap.parse_args(argv)
    for case in a.cases:
        name, objective = case.split(":")
        try:
            res = diversity_case(name, objective)
        except (OSError, ValueError, KeyError, AttributeError) as exc:
            res = {"error": f"{type(exc).__name__}: {exc}"}
        _save("diversity_effect", case, res)
        print(case, res.get("verdict", {}).get("text", res.get("error")),
              f"cpu {res.get('cpu_s', float('nan')):.1f} s", flush=True)
    for name in a.selection:
        try:
            res = selection_case(name)
        except (OSError, ValueError, KeyError) as exc:
            res = {"error": f"{type(exc).__name__}: {exc}"}
        _save("selection", name, res)
        for test, v in (res.get("verdicts") or {}).items():
            print(name, test, v["text"], flush=True)
        print(name, f"cpu {res.get('cpu_s', float('nan')):.1f} s", flush=True)
    _summary()
    return 0


def _summary() -> None:
    """Per report folder: CPU seconds of every added part and their sum."""
    doc = json.loads(OUT.read_text()) if OUT.exists() else {}
    runs: dict = {}
    for case, res in (doc.get("diversity_effect") or {}).items():
        if "cpu_s" in res:
            runs.setdefault(case.split(":")[0], {})[f"diversity_effect:{res['objective']}"] = \
                res["cpu_s"]
    for name, res in (doc.get("selection") or {}).items():
        if "cpu_s" in res:
            runs.setdefault(name, {})["selection"] = res["cpu_s"]
    doc["summary"] = {name: {"cpu_s": parts, "total_cpu_s": sum(parts.values())}
                      for name, parts in runs.items()}
    OUT.write_text(json.dumps(doc, indent=1) + "\n")


def _save(section: str, key: str, value: dict) -> None:
    """Merge one case into the results file (re-read first: runs may overlap)."""
    doc = json.loads(OUT.read_text()) if OUT.exists() else {}
    doc.update(machine={"python": platform.python_version(), "cpu_count": os.cpu_count(),
                        "threads": os.environ.get("OMP_NUM_THREADS")},
               meaning="add_verdicts / add_selection_verdicts on the committed reports (copies; "
                       "docs/results untouched): cpu_s = this process, one thread; wall_s on "
                       "the shared machine")
    doc.setdefault(section, {})[key] = value
    OUT.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
