"""Benchmark: what the paper's grid (16 models × 8 tasks × the first 2000 prompts) costs with
``infodiv grid``, projected from measured per-run costs.

- Analysis (decompositions, curves with every verdict, the run's page): measured here, as
  ``infodiv grid`` runs it (:func:`infodiv.study.grid_analysis.analyse_run` on a local Dask
  cluster of one single-threaded worker process, CPU seconds from ``time.process_time`` in
  the worker), on a small run: the first ``--n`` rows of an extracted run (``--run``; default
  SmolLM2-135M-Instruct on AG News, M = 61, C = 4) with ``infodiv run``'s default settings.
  Projected to each cell linearly in the cell's rows (the task's first 2000, all of a shorter
  split) and in its members M (the paper's Table 4).
- Extraction: from FLOPs (2 × parameters × tokens per prompt; tokens per prompt from the
  staged prompts' characters at SST-2's measured tokens per character) and the GPU
  measurement in ``benchmarks/results/extract_cuda_bf16.json`` (one H200, bf16, a model of
  SmolLM2-135M's shapes): the extraction over plain-forward time ratio, and two bounds on the
  forward: *upper*, the FLOP rate measured there (launch-bound at 135M, so larger models run
  faster per FLOP); *lower*, the H200's dense bf16 peak (989 TFLOP/s), or the measured
  per-layer launch floor where that is longer.
- Wall time: the extraction runs on the node's GPU while the analyses run on CPU workers, so
  a grid takes at least the longer of the two and at most their sum.

Writes ``benchmarks/results/grid.json`` and prints the projection.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_RUN = ROOT / "runs" / "agnews" / "smollm2-agnews-chat-template-block"
GPU_RESULTS = ROOT / "benchmarks" / "results" / "extract_cuda_bf16.json"
OUT = ROOT / "benchmarks" / "results" / "grid.json"
PROMPTS = 2000
#: the paper's models (its Table 4): parameters and members M (1 + 2 per block execution)
MODELS = {
    "facebook/MobileLLM-125M": (125e6, 61), "facebook/MobileLLM-125M-layer-share": (125e6, 121),
    "facebook/MobileLLM-350M": (350e6, 65), "facebook/MobileLLM-350M-layer-share": (350e6, 129),
    "meta-llama/Llama-3.2-1B-Instruct": (1.0e9, 33),
    "meta-llama/Llama-3.2-3B-Instruct": (3.0e9, 57),
    "microsoft/Phi-3-mini-128k-instruct": (3.8e9, 65),
    "microsoft/Phi-3.5-mini-instruct": (3.8e9, 65),
    "meta-llama/Llama-2-7b-hf": (7.0e9, 65), "mistralai/Mistral-7B-Instruct-v0.1": (7.0e9, 65),
    "mistralai/Mistral-7B-Instruct-v0.3": (7.0e9, 65),
    "meta-llama/Meta-Llama-3-8B-Instruct": (8.0e9, 65),
    "meta-llama/Llama-3.1-8B-Instruct": (8.0e9, 65), "meta-llama/Llama-2-13b-hf": (13e9, 81),
    "microsoft/Phi-3-medium-4k-instruct": (14e9, 81), "microsoft/phi-4": (14.7e9, 81),
}
TASKS = ("ag_news", "arc", "boolq", "mnli", "qqp", "rte", "sst2", "wic")
#: dense bf16 peak of one H200 (and of one H100 SXM), FLOP/s
GPU_PEAK = 989e12
#: the SmolLM2-135M shapes of the GPU measurement: parameters and block executions
REF_PARAMS, REF_LAYERS = 135e6, 30
BATCH = 16


def measure_analysis(run: Path, n: int, scratch: Path, settings) -> dict:
    """CPU and wall seconds of each analysis stage of the first ``n`` rows of ``run``, as one
    ``infodiv grid`` task on a one-process local cluster."""
    import logging

    from dask.distributed import Client, LocalCluster

    from extraction.contributions import Contributions
    from infodiv.study.grid_analysis import analyse_run, analysis_code, warm_up
    from infodiv.study.runfolder import RunFolder

    c = Contributions.load(run).take(range(n))
    root = scratch / f"{run.name}-n{n}"
    if root.exists():
        shutil.rmtree(root)
    folder = RunFolder(root, {"model": c.meta["model"].get("model_id"), "task": c.meta["task"],
                              "n": n, "copied_from": str(run)}, "benchmarks/bench_grid.py")
    folder.prepare("new")
    c.save(folder.contributions)
    folder.done("extract", "copied", 0.0)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        client.run(warm_up)
        t0 = time.perf_counter()
        result = client.submit(analyse_run, str(root.resolve()), settings, "process",
                               analysis_code(), pure=False).result()
        wall = time.perf_counter() - t0
    if result["error"]:
        raise SystemExit(f"bench_grid: the analysis failed: {result['error']}")
    stages = result["stages"]
    return {"run": str(run.relative_to(ROOT) if run.is_relative_to(ROOT) else run),
            "model": c.meta["model"].get("model_id"), "task": c.meta["task"],
            "N": c.n_examples, "M": c.n_members, "C": c.n_options, "stages": stages,
            "cpu_s": sum(s["cpu_s"] for s in stages.values() if s["cpu_s"] is not None),
            "wall_s": wall}


def task_sizes(data_dir: Path, reference: dict) -> dict:
    """Per task: rows (the first 2000, or the whole shorter split) and tokens per prompt
    (characters × SST-2's measured tokens per character); a task without staged data gets
    2000 rows and the mean tokens of the others."""
    from extraction.tasks import get_task

    def chars(task, k):
        return statistics.fmean(len(task.prompt(i)) for i in range(min(k, len(task))))

    sst2 = reference["tasks"]["zero_shot"]
    per_char = sst2["mean_tokens"] / chars(get_task("sst2", data_dir=data_dir,
                                                    n=sst2["n_prompts"]), sst2["n_prompts"])
    sizes = {}
    for name in TASKS:
        try:
            task = get_task(name, data_dir=data_dir, n=PROMPTS)
        except Exception as exc:  # noqa: BLE001 - data not staged here
            sizes[name] = {"rows": PROMPTS, "tokens": None, "note": str(exc).split("\n")[0]}
            continue
        sizes[name] = {"rows": len(task), "tokens": round(chars(task, 500) * per_char, 1)}
    known = [s["tokens"] for s in sizes.values() if s["tokens"] is not None]
    for s in sizes.values():
        if s["tokens"] is None:
            s["tokens"] = round(statistics.fmean(known), 1)
    return {"tokens_per_char": per_char, "tasks": sizes}


def gpu_reference(doc: dict) -> dict:
    """The GPU measurement's forward rate, per-layer launch floor and extraction ratio."""
    t = doc["tasks"]["zero_shot"]
    plain = statistics.median(t["wall_s"]["plain_same_work"])
    extract = statistics.median(t["wall_s"]["extract"])
    flops = 2 * REF_PARAMS * t["tokens"]
    return {"device": doc["device"], "dtype": doc["dtype"], "n_prompts": t["n_prompts"],
            "tokens": t["tokens"], "plain_s": plain, "extract_s": extract,
            "extract_over_plain": extract / plain, "flop_rate": flops / plain,
            "launch_floor_s": plain / (t["n_batches"] * REF_LAYERS)}


def project(analysis: dict, sizes: dict, gpu: dict, node_cores: int) -> dict:
    """Every cell's extraction seconds (lower, upper) and analysis CPU seconds, the totals,
    and the wall time on one GPU node and beside 1, 8 and 64 CPU workers."""
    cells, ext_lo, ext_hi, cpu = [], 0.0, 0.0, 0.0
    for model, (params, m) in MODELS.items():
        layers = (m - 1) // 2
        for task, s in sizes["tasks"].items():
            flops = 2 * params * s["tokens"] * s["rows"]
            floor = gpu["launch_floor_s"] * layers * -(-s["rows"] // BATCH)
            lo = max(flops / GPU_PEAK, floor) * gpu["extract_over_plain"]
            hi = max(flops / gpu["flop_rate"], floor) * gpu["extract_over_plain"]
            a = analysis["cpu_s"] * (s["rows"] / analysis["N"]) * (m / analysis["M"])
            cells.append({"model": model, "task": task, "M": m, "rows": s["rows"],
                          "extract_s": [round(lo, 2), round(hi, 2)], "analysis_cpu_s": round(a)})
            ext_lo, ext_hi, cpu = ext_lo + lo, ext_hi + hi, cpu + a

    def wall(workers):
        return [round(max(ext_lo, cpu / workers)), round(ext_hi + cpu / workers)]

    return {"runs": len(cells), "extract_gpu_s": [round(ext_lo), round(ext_hi)],
            "analysis_cpu_s": round(cpu), "analysis_cpu_h": round(cpu / 3600, 1),
            "one_gpu_node": {"cores": node_cores, "wall_s": wall(node_cores)},
            "cpu_workers": {str(n): {"wall_s": wall(n)} for n in (1, 8, 64)},
            "cells": cells}


def main(argv=None) -> int:
    from infodiv.study.settings import StudySettings

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, default=DEFAULT_RUN,
                    help="a Contributions run directory (arrays.npz + meta.json)")
    ap.add_argument("--n", type=int, default=200, help="rows of --run to analyse")
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--node-cores", type=int, default=16,
                    help="CPU cores of the GPU node that run its analyses")
    ap.add_argument("--scratch", type=Path, default=ROOT / "runs" / "grid-scratch" / "bench")
    ap.add_argument("--results", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if not (args.run / "meta.json").is_file():
        ap.error(f"--run {args.run}: no meta.json (extract a run first: infodiv extract "
                 "--model smollm2-135m --task ag_news --out DIR)")
    settings = StudySettings()
    load0 = os.getloadavg()
    analysis = measure_analysis(args.run, args.n, args.scratch, settings)
    gpu = gpu_reference(json.loads(GPU_RESULTS.read_text()))
    sizes = task_sizes(args.data_dir, json.loads(GPU_RESULTS.read_text()))
    doc = {"analysis": analysis, "analysis_settings": {
               "n_bootstrap": settings.inference.n_bootstrap,
               "power_replicates": settings.inference.power_replicates,
               "objectives": list(settings.curves.objectives),
               "info_methods": list(settings.decompose.info_methods)},
           "gpu_reference": {"file": str(GPU_RESULTS.relative_to(ROOT)), **gpu},
           "gpu_peak_flops": GPU_PEAK, "task_sizes": sizes,
           "projection": project(analysis, sizes, gpu, args.node_cores),
           "load_average_start": list(load0), "load_average_end": list(os.getloadavg()),
           "machine": {"cpus": os.cpu_count(), "processor": platform.processor(),
                       "python": platform.python_version()}}
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(doc, indent=1) + "\n")
    p = doc["projection"]
    print(json.dumps({"analysis": {k: analysis[k] for k in ("N", "M", "cpu_s", "wall_s")},
                      **{k: p[k] for k in p if k != "cells"}}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
