"""The timed sides of ``bench_extract.py``: settings (encoded prompts and batch plans), the plain
forwards, the peers' loop and each setting's results document."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np
from _ratios import ratio_table

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ("zero_shot", "zero_shot_chat", "few_shot_random_demos", "few_shot_fixed_demos")


def padded(seqs, b, pad_id):
    """Left-padded ids and attention mask of the examples ``b``."""
    import torch

    t = max(len(seqs[i]) for i in b)
    ids = torch.full((len(b), t), pad_id, dtype=torch.long)
    mask = torch.zeros((len(b), t), dtype=torch.long)
    for j, i in enumerate(b):
        ids[j, t - len(seqs[i]):] = torch.as_tensor(seqs[i])
        mask[j, t - len(seqs[i]):] = 1
    return ids, mask


def save_plain(model, tok, folder) -> None:
    """``save_pretrained``-style folder of the loaded float32 weights (a GGUF-loaded model
    refuses ``save_pretrained``; its dequantised weights are what every side runs)."""
    import copy

    from safetensors.torch import save_model

    folder.mkdir(parents=True)
    config = copy.deepcopy(model.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.save_pretrained(folder)
    save_model(model, str(folder / "model.safetensors"))
    tok.save_pretrained(folder)


def peer_forward(decompose, seqs, batches, pad_id, dev):
    """One peer variant over all batches; the first batch's contributions as float64."""
    import torch

    first = None
    with torch.inference_mode():
        for k, b in enumerate(batches):
            ids, mask = padded(seqs, b, pad_id)
            u = decompose(ids.to(dev), mask.to(dev))
            if k == 0:
                first = u.double().cpu().numpy()
    return first


def plain_forward(model, seqs, batches, pad_id, *, keep_last: bool, prefix=None):
    """The model's own forward on ``batches`` (last-position logits with ``keep_last``).

    ``prefix``: an :class:`extraction.savings.PrefixCache` — the same work as the extraction
    with its shared-prefix cache: only the suffixes run, on a copy of the prefix's keys and
    values (right-padded after it; the logits are read at each row's last suffix token)."""
    import torch

    out = []
    dev = model.get_input_embeddings().weight.device
    with torch.inference_mode():
        for b in batches:
            if prefix is not None:   # (the head of the model maps its final hidden state)
                suffixes = [seqs[i][prefix.length:] for i in b]
                h = model.base_model(**prefix.inputs(suffixes, pad_id)).last_hidden_state
                rows = torch.arange(len(b), device=h.device)   # each row's last token only:
                h = h[rows, [len(x) - 1 for x in suffixes]]    # logits_to_keep=1 per row
                out.append(model.get_output_embeddings()(h).float())
                continue
            ids, mask = padded(seqs, b, pad_id)
            pos = (mask.cumsum(-1) - 1).clamp(min=0)
            ids, mask, pos = ids.to(dev), mask.to(dev), pos.to(dev)
            kw = {"logits_to_keep": 1} if keep_last else {}
            logits = model(input_ids=ids, attention_mask=mask, position_ids=pos,
                           use_cache=False, **kw).logits
            out.append(logits[:, -1].float())
    return out


def setting(label, task, tok, model, batch_size, *, chat_template=False):
    """Encoded prompts (as ``extract`` encodes them), the batch plans and the prefix cache."""
    from extraction.architectures import resolve
    from extraction.batching import padded_tokens, plan_batches
    from extraction.forward import BatchRunner
    from extraction.prompts import encode_task
    from extraction.savings import PrefixCache, cut_after, shared_prefix

    enc = encode_task(tok, task, max_length=model.config.max_position_embeddings,
                      chat_template=chat_template)
    seqs = [list(map(int, s)) for s in enc.input_ids]
    lengths = np.array([len(x) for x in seqs])
    p = shared_prefix(cut_after(seqs, np.full(len(seqs), -1))[0])
    arch = resolve(model)
    runner = BatchRunner(model, arch, "block", enc.option_ids, tok.pad_token_id or 0)

    def prefix():   # run inside the timed side: the plain forward computes the prefix too
        return PrefixCache(arch, seqs[0][:p], runner.in_device, runner.takes_positions)

    batches = plan_batches(lengths, batch_size)
    return {"label": label, "task": task, "enc": enc, "seqs": seqs, "lengths": lengths,
            "chat_template": bool(chat_template), "batches": batches,
            "prefix": prefix if p else None, "prefix_tokens": p,
            "prefix_batches": plan_batches(lengths - p, batch_size),
            "padded_tokens": padded_tokens(lengths, batches),
            "token_ids_sha256": hashlib.sha256(repr(seqs).encode()).hexdigest()}


def sides(st, model, tok, variants, pad_id, dev, batch_size):
    """``{side: thunk}`` for one setting (``variants``: the peers' decompose functions)."""
    from extraction.runner import extract

    seqs, batches, task, chat = st["seqs"], st["batches"], st["task"], st["chat_template"]
    same = st["prefix"]

    def plain():
        return plain_forward(model, seqs, batches, pad_id, keep_last=True)

    out = {
        "plain": plain,
        "plain_same_work": plain if same is None else (   # no shared prefix: the same work
            lambda: plain_forward(model, seqs, st["prefix_batches"], pad_id, keep_last=True,
                                  prefix=same())),
        "extract": lambda: extract(model, tok, task, batch_size=batch_size, progress=False,
                                   chat_template=chat),
        "extract_no_savings": lambda: extract(model, tok, task, batch_size=batch_size,
                                              progress=False, savings=False,
                                              chat_template=chat),
    }
    for name, fn in variants.items():
        out[name] = lambda fn=fn: peer_forward(fn, seqs, batches, pad_id, dev)
    return out


def same_ids_check(st, res, plain_logits) -> dict:
    """Evidence that the extraction read the very token ids every other side ran: its option
    ids and read positions equal the setting's, and its stored model logits equal the plain
    forward's on the setting's batches (the peers run those batches too)."""
    opt = list(st["enc"].option_ids)
    assert res.meta["option_token_ids"] == opt, (res.meta["option_token_ids"], opt)
    pos = np.asarray(res.meta["positions"])
    assert (np.where(pos < 0, pos + st["lengths"], pos) == st["lengths"] - 1).all()
    ref = np.zeros_like(res.logits, dtype=np.float64)
    for b, logits in zip(st["batches"], plain_logits):
        ref[b] = logits[:, opt].double().cpu().numpy()
    return {"option_token_ids": opt, "token_ids_sha256": st["token_ids_sha256"],
            "max_abs_logit_difference_extract_vs_plain": float(np.abs(ref - res.logits).max())}


def task_doc(st, cpu, wall, results, first, variants, plain_logits) -> dict:
    """One setting's results: sizes, timings, the ratios with their intervals, exactness."""
    res, none = results["extract"], results["extract_no_savings"]
    meta = st["task"].meta
    doc = {"n_prompts": len(st["task"]), "tokens": int(st["lengths"].sum()),
           "mean_tokens": round(float(st["lengths"].mean()), 1),
           "shared_prefix_tokens": st["prefix_tokens"], "chat_template": st["chat_template"],
           "shots": meta.get("shots", 0), "fixed_demos": bool(meta.get("fixed_demos", False)),
           "n_batches": len(st["batches"]), "padded_tokens": st["padded_tokens"],
           "savings_meta": res.meta["savings"],
           "cpu_s": {k: [round(x, 3) for x in v] for k, v in cpu.items()},
           "wall_s": {k: [round(x, 3) for x in v] for k, v in wall.items()},
           "ratios": ratio_table(cpu, list(variants)),
           "M": res.n_members, "max_exactness_error": res.meta["max_exactness_error"],
           "max_relative_exactness_error": res.meta["max_relative_exactness_error"],
           "max_abs_u_difference_savings_vs_none": float(np.abs(res.u - none.u).max()),
           "max_abs_u": float(np.abs(none.u).max()), "accuracy": res.accuracy(),
           "same_ids": same_ids_check(st, res, plain_logits)}
    ours = res.u[st["batches"][0]].astype(np.float64)
    doc["peers_agreement_first_batch"] = {
        k: float(np.abs(first[k] - ours).max()) for k in variants}
    return doc


def commit() -> str | None:
    """The checkout's HEAD commit (each configuration records the code it measured)."""
    import subprocess

    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def measured_code() -> str | None:
    """The git tree of ``extraction/`` at HEAD, or None when it has uncommitted changes (a
    resumed measurement continues only on the very code it started on)."""
    import subprocess

    try:
        dirty = subprocess.run(["git", "-C", str(ROOT), "diff", "--quiet", "HEAD", "--",
                                "extraction"], capture_output=True).returncode != 0
        return None if dirty else subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD:extraction"], check=True,
            capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def machine() -> dict:
    """The machine a timing ran on: CPU model, cores, memory and boot id (a new VM, or a
    reboot, is a new machine: repetitions timed on two machines are never pooled)."""
    import os
    import platform

    def field(path, key=None):
        try:
            text = Path(path).read_text()
        except OSError:
            return None
        if key is None:
            return text.strip()
        line = next((x for x in text.splitlines() if x.startswith(key)), None)
        return None if line is None else line.split(":", 1)[1].strip()

    return {"cpu": field("/proc/cpuinfo", "model name") or platform.processor() or None,
            "cpu_count": os.cpu_count(), "memory": field("/proc/meminfo", "MemTotal"),
            "boot_id": field("/proc/sys/kernel/random/boot_id")}


def resumable(old: dict, n_prompts: int, code: str | None, sides, where: dict) -> bool:
    """Whether a saved focused entry ``old`` can be continued: the same number of prompts,
    the same committed ``extraction/`` tree (``code``; None, uncommitted, never resumes),
    the same sides and the same machine ``where``."""
    return (old.get("n_prompts") == n_prompts and code is not None
            and old.get("extraction_tree") == code and old.get("machine") == where
            and sorted(old.get("cpu_s", {})) == sorted(sides))


def config_tasks(args, data_dir, names) -> dict:
    """``{label: (task, chat_template)}`` of the configurations ``names`` (see the docstring)."""
    from extraction.tasks import get_task

    k, out = args.shots, {}
    for name in names:
        if name == "zero_shot":
            out[name] = get_task("sst2", data_dir=data_dir, n=args.n), False
        elif name == "zero_shot_chat":
            out[name] = get_task("sst2", data_dir=data_dir, n=args.chat_n or args.n), True
        elif name in ("few_shot_random_demos", "few_shot_fixed_demos"):
            fixed = name == "few_shot_fixed_demos"
            n = (getattr(args, "fixed_n", 0) or args.few_shot_n) if fixed else args.few_shot_n
            label = f"few_shot_{k}_{name[9:]}" + ("" if n == args.few_shot_n else f"_n{n}")
            out[label] = get_task("sst2", data_dir=data_dir, n=n, shots=k,
                                  fixed_demos=fixed), False
        else:
            raise SystemExit(f"bench_extract: unknown configuration {name!r} in --configs "
                             f"(one of {', '.join(CONFIGS)})")
    return out


def time_sides(label, thunks, reps, sync, *, done=None, on_rep=None):
    """Every side once per repetition, the order rotated by one side each repetition.

    ``done``: ``(cpu, wall)`` lists of repetitions already measured (a resumed run continues
    after them, with the rotation where it stopped); ``on_rep(cpu, wall)`` is called after
    every repetition (to save it). Returns CPU and wall seconds per side and the last value
    each side returned."""
    names = list(thunks)
    cpu, wall = ({k: list(d.get(k, [])) for k in names} for d in (done or ({}, {})))
    if len({len(v) for v in (*cpu.values(), *wall.values())}) != 1:
        raise ValueError(f"{label}: the repetitions to resume do not cover every side equally "
                         f"({ {k: len(v) for k, v in cpu.items()} })")
    value = {}
    for rep in range(len(cpu[names[0]]), reps):
        for name in names[rep % len(names):] + names[:rep % len(names)]:
            t, c = time.perf_counter(), time.process_time()
            value[name] = thunks[name]()
            sync()   # GPU work is asynchronous: wait for it before reading the clocks
            wall[name].append(time.perf_counter() - t)
            cpu[name].append(time.process_time() - c)
        print(f"rep {rep} {label}: " + ", ".join(f"{k} {cpu[k][-1]:.2f}" for k in names),
              flush=True)
        if on_rep is not None:
            on_rep(cpu, wall)
    return cpu, wall, value
