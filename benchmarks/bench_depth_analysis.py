"""Benchmark: process CPU seconds of ``infodiv zoo depth-report`` per analysed model.

Reads the per-model analyses that ``scripts/depth_analysis.sh`` left in
``runs/depth/k<K>/analysis/<model>.json`` (each records the process CPU seconds of its stages,
measured with ``time.process_time`` while it ran: extraction, figures and information, the
claims through the engine with their power, the Theorem 8 report, the shared resamples) and
writes ``benchmarks/results/depth_analysis.json``: per model its sizes (n, M, B, K, power
surrogates) and stage CPU, and a projection for a root's planned models: their number times the
largest per-model CPU measured (an assumption, stated in the file: no planned model costs more
than the most expensive one measured; every planned model has M <= 17, and on the shared
machine the process CPU of one model varies with the load).

Run: ``python benchmarks/bench_depth_analysis.py [runs/depth/k2 ...]`` after the analysis.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "depth_analysis.json"
PLANNED_PER_ROOT = 24    # depths 8 6 4 3 2 1 and shared twins 4 2, seeds 0 1 2


def main(roots) -> dict:
    models = []
    for root in map(Path, roots):
        for path in sorted((root / "analysis").glob("*.json")):
            doc = json.loads(path.read_text())
            s = doc["key"]["settings"]
            models.append({"root": str(root), "model": doc["model"]["model"],
                           "n_examples": doc["n_examples"],
                           "n_members": doc["model"]["n_members"],
                           "B": s["n_bootstrap"], "K": s["n_permutations"],
                           "power_per_kind": s["n_power"],
                           "theorem8_resamples": s["report_resamples"],
                           "shared_resamples": s["resamples"], "cpu_s": doc["cpu_s"]})
    if not models:
        raise SystemExit(f"no analysed model under {', '.join(map(str, roots))}")
    totals = [m["cpu_s"]["total"] for m in models]
    out = {"what": "process CPU seconds of infodiv zoo depth-report per model (time."
                   "process_time of each stage while it ran, one torch/BLAS thread)",
           "models": models,
           "cpu_s_per_model": {"min": min(totals), "max": max(totals),
                               "mean": sum(totals) / len(totals), "n_models": len(totals)},
           "grid_cpu_h_projection_per_root": PLANNED_PER_ROOT * max(totals) / 3600,
           "projection_assumes": f"{PLANNED_PER_ROOT} planned models per root, none costing "
                                 "more than the most expensive model measured"}
    OUT.write_text(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    doc = main(sys.argv[1:] or ["runs/depth/k2"])
    for m in doc["models"]:
        print(f"{m['model']}: M = {m['n_members']}, n = {m['n_examples']}, B = {m['B']}, "
              f"K = {m['K']}, power {m['power_per_kind']}: {m['cpu_s']['total']:.0f} CPU s "
              f"({', '.join(f'{k} {v:.0f}' for k, v in m['cpu_s'].items() if k != 'total')})")
    print(f"projection per root: {doc['grid_cpu_h_projection_per_root']:.1f} CPU h")
