"""The extra modes of ``bench_extract.py``: ``--parity-reps`` (only the sides the ``<= 1.0``
targets compare, more repetitions), ``--ab-reps`` (the last-block pruning's A/B),
``--noise-reps`` (the machine's timing noise) and ``--flops`` (the work each side does, counted
by torch.profiler rather than timed)."""

from __future__ import annotations

import json
import os
import time

from _extract_sides import commit, config_tasks, time_sides


def pruning_estimate(model) -> dict:
    """Multiply-accumulates per token of one block and the share the last-block pruning skips
    (o_proj and MLP at every position but the read one; q/k/v and attention still run)."""
    cfg = model.config
    d, f, layers = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers
    dh = getattr(cfg, "head_dim", None) or d // cfg.num_attention_heads
    q = o = d * cfg.num_attention_heads * dh
    kv = 2 * d * cfg.num_key_value_heads * dh
    mlp = 3 * d * f                      # gate, up, down (SwiGLU)
    block = q + kv + o + mlp
    return {"macs_per_token_per_block": block, "pruned_share_of_last_block":
            round((o + mlp) / block, 4), "layers": layers,
            "expected_share_of_body_saved": round((o + mlp) / block / layers, 4)}


def pruning_ab(model, tok, task, reps: int, batch_size: int) -> dict:
    """``extract`` with and without savings (nothing shared on 0-shot SST-2: the difference is
    the last-block pruning and the reference check), alternated ``reps`` times."""
    from extraction.runner import extract

    cpu = {"savings": [], "no_savings": []}
    for _ in range(reps):
        for name, flag in (("savings", True), ("no_savings", False)):
            c = time.process_time()
            extract(model, tok, task, batch_size=batch_size, progress=False, savings=flag)
            cpu[name].append(round(time.process_time() - c, 3))
    mean = {k: sum(v) / len(v) for k, v in cpu.items()}
    return {"n_prompts": len(task), "reps": reps, "cpu_s": cpu,
            "ratio_min": round(min(cpu["savings"]) / min(cpu["no_savings"]), 4),
            "ratio_mean": round(mean["savings"] / mean["no_savings"], 4),
            "estimate": pruning_estimate(model)}


def flop_counts(thunks: dict) -> dict:
    """Floating-point operations torch.profiler counts (``with_flops``: the matrix products)
    in one call of each side: the work each does, counted rather than timed (no noise)."""
    from torch.profiler import ProfilerActivity, profile

    out = {}
    for name, fn in thunks.items():
        with profile(activities=[ProfilerActivity.CPU], with_flops=True) as prof:
            fn()
        out[name] = int(sum(e.flops for e in prof.key_averages() if e.flops))
    return out


def noise(model, tok, pad_id: int, task, reps: int, batch_size: int) -> dict:
    """The machine's own timing noise: one identical plain forward (the task's largest batch)
    ``reps`` times back to back; the spread any ratio of two sides inherits."""
    import numpy as np
    from _extract_sides import plain_forward, setting

    st = setting("noise", task, tok, model, batch_size)
    batch = st["batches"][:1]
    plain_forward(model, st["seqs"], batch, pad_id, keep_last=True)   # warm-up
    cpu = []
    for _ in range(reps):
        c = time.process_time()
        plain_forward(model, st["seqs"], batch, pad_id, keep_last=True)
        cpu.append(time.process_time() - c)
    x = np.asarray(cpu)
    return {"what": "the same plain forward of one batch, back to back",
            "rows": len(batch[0]), "tokens": int(st["lengths"][batch[0]].max() * len(batch[0])),
            "cpu_s": [round(v, 4) for v in cpu], "cv": float(x.std(ddof=1) / x.mean()),
            "max_over_min": float(x.max() / x.min()),
            "lag1_autocorrelation": float(np.corrcoef(x[:-1], x[1:])[0, 1]),
            "load_average": [round(v, 2) for v in os.getloadavg()]}


def parity(args, model, tok, pad_id: int, data_dir, out_path) -> int:
    """``--parity-reps N``: only the sides the ``<= 1.0`` targets compare, ``N`` repetitions
    each, so that the interval is narrow enough to decide: ``plain`` and ``extract`` where
    nothing is shared, ``plain_same_work`` and ``extract`` where a prefix is (``extract /
    plain`` is decided there already). Merged into ``--out`` as ``parity``."""
    return focused(args, model, tok, pad_id, data_dir, out_path, "parity", args.parity_reps,
                   lambda st, var: ("plain_same_work" if st["prefix"] else "plain", "extract"))


def peer_focus(args, model, tok, pad_id: int, data_dir, out_path, variants) -> int:
    """``--peer-reps N --peers a,b``: only ``extract`` and the named peer variants, ``N``
    repetitions each (the ``>= 1.3`` targets a full matrix left undecided). Merged into
    ``--out`` as ``peer_focus``; ``variants({setting: option ids})`` builds the peers."""
    names = args.peers.split(",")
    return focused(args, model, tok, pad_id, data_dir, out_path, "peer_focus", args.peer_reps,
                   lambda st, var: ("extract", *names), variants)


def focused(args, model, tok, pad_id: int, data_dir, out_path, section: str, reps: int,
            choose, variants=None) -> int:
    """``reps`` repetitions of the sides ``choose(setting, its peer variants)`` of every
    configuration, merged into ``--out`` under ``section`` and saved after every repetition;
    a rerun continues a configuration after the repetitions already there when its prompts,
    sides and ``extraction/`` code (git tree, committed) are the same, up to ``reps``.
    ``variants``: called once with ``{setting: option ids}``, returns the peers per setting."""
    from _extract_sides import machine, measured_code, resumable, setting, sides
    from _ratios import ratio_table

    doc = json.loads(out_path.read_text()) if out_path.exists() else {}
    run = {k: getattr(args, k) for k in ("batch_size", "shots", "threads", "device", "dtype")}
    if doc.get(section, {}).get("run") != run:
        doc[section] = {"run": run, "tasks": {}}
    tasks = doc[section]["tasks"]
    dev = next(model.parameters()).device
    sync, code, where = torch_sync(dev), measured_code(), machine()
    settings = {lab: (task, setting(lab, task, tok, model, args.batch_size, chat_template=chat))
                for lab, (task, chat) in
                config_tasks(args, data_dir, args.configs.split(",")).items()}
    peers = variants({lab: st["enc"].option_ids for lab, (_, st) in settings.items()}) \
        if variants is not None else {}
    for lab, (task, st) in settings.items():
        var = peers.get(lab, {})
        keep = tuple(choose(st, var))
        every = sides(st, model, tok, {k: var[k] for k in keep if k in var}, pad_id, dev,
                      args.batch_size)
        old = tasks.get(lab, {})
        same = resumable(old, len(task), code, keep, where)
        have = len(old["cpu_s"][keep[0]]) if same else 0
        if have >= reps:
            print(f"{section}: {lab} already measured ({have} repetitions)", flush=True)
            continue
        if have:
            print(f"{section}: resuming {lab} after {have} repetitions", flush=True)
        thunks = {k: every[k] for k in keep}
        for fn in thunks.values():   # warm-up
            fn()
        c0 = time.process_time() - (old["config_cpu_s"] if same else 0.0)
        entry = {"n_prompts": len(task), "shared_prefix_tokens": st["prefix_tokens"],
                 "extraction_tree": code, "code_commit": commit(), "machine": where,
                 "earlier_runs": (old.get("earlier_runs", []) + [earlier(old)]
                                  if old.get("ratios") and not same else
                                  old.get("earlier_runs", [])),
                 "load_average_at_start": old["load_average_at_start"] if same else
                 [round(x, 2) for x in os.getloadavg()]}

        def save(cpu, wall, entry=entry, lab=lab, c0=c0, peers=tuple(k for k in keep if k in var)):
            entry |= {"reps": len(next(iter(cpu.values()))),
                      "cpu_s": {k: [round(x, 3) for x in v] for k, v in cpu.items()},
                      "wall_s": {k: [round(x, 3) for x in v] for k, v in wall.items()},
                      "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
                      "config_cpu_s": round(time.process_time() - c0, 1),
                      "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            if entry["reps"] >= 2:
                entry["ratios"] = ratio_table(cpu, peers)["paired"]
            tasks[lab] = entry
            out_path.write_text(json.dumps(doc, indent=2) + "\n")

        time_sides(f"{section} {lab}", thunks, reps, sync,
                   done=(old["cpu_s"], old["wall_s"]) if same else None, on_rep=save)
        print(json.dumps({k: (r["geometric_mean"], r["ci_low"], r["ci_high"], r["verdict"])
                          for k, r in tasks[lab]["ratios"].items()}), flush=True)
    return 0


def earlier(old: dict) -> dict:
    """What a focused entry measured, kept when a new run replaces it (another machine or
    tree): its sides' ratios with their intervals and verdicts, repetitions, code and date."""
    return {k: old.get(k) for k in ("reps", "ratios", "extraction_tree", "code_commit",
                                    "machine", "date_utc")}


def torch_sync(dev):
    """Wait for asynchronous GPU work before reading the clocks (nothing to wait for on CPU)."""
    import torch

    return torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)


def pruning_modes(args, model, tok, pad_id: int, data_dir, out_path, load_avg) -> int:
    """``--ab-reps`` / ``--noise-reps`` / ``--flops``: the last-block pruning's A/B, the
    machine's timing noise and the FLOP counts."""
    from extraction.runner import extract
    from extraction.tasks import get_task

    doc = json.loads(out_path.read_text()) if out_path.exists() else {}
    zero = get_task("sst2", data_dir=data_dir, n=args.n)
    if args.ab_reps:
        extract(model, tok, get_task("sst2", data_dir=data_dir, n=4), batch_size=4,
                progress=False)   # warm-up
        doc["last_block_pruning"] = pruning_ab(model, tok, zero, args.ab_reps,
                                               args.batch_size) | {
            "load_average_at_start": [round(x, 2) for x in load_avg],
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()]}
    if args.noise_reps:
        from _extract_sides import machine

        doc["noise"] = noise(model, tok, pad_id, zero, args.noise_reps, args.batch_size) | {
            "machine": machine(), "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if args.flops:
        from _extract_sides import setting, sides

        dev = next(model.parameters()).device
        tasks = dict(doc.get("flops", {}).get("tasks", {}))   # merged: the others stay
        for lab, (task, chat) in config_tasks(args, data_dir, args.configs.split(",")).items():
            st = setting(lab, task, tok, model, args.batch_size, chat_template=chat)
            every = sides(st, model, tok, {}, pad_id, dev, args.batch_size)
            keep = ("plain", "extract", "extract_no_savings") + (
                ("plain_same_work",) if st["prefix"] else ())
            flops = flop_counts({k: every[k] for k in keep})
            ref = flops.get("plain_same_work", flops["plain"])
            tasks[lab] = {"n_prompts": len(task), "shared_prefix_tokens": st["prefix_tokens"],
                          "flops": flops, "extract_over_plain": flops["extract"] / flops["plain"],
                          "extract_over_plain_same_work": flops["extract"] / ref,
                          "extract_over_extract_without_savings":
                              flops["extract"] / flops["extract_no_savings"]}
            tasks[lab] |= {"code_commit": commit(),
                           "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        doc["flops"] = {"tasks": tasks, "estimate_last_block_pruning": pruning_estimate(model)}
    out_path.write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps({k: doc.get(k) for k in ("last_block_pruning", "noise", "flops")}, indent=2))
    return 0
