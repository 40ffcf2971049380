"""``extract``: run a causal LM over a task and return exact per-member option logits.

Pipeline (DESIGN.md 1, 2.1, 2.4): tokenise the task (``extraction.prompts.encode_task``), sort
examples by length and cut them into the batches that waste the fewest padded positions
(:mod:`extraction.batching`), run the *base* model on left-padded batches (attention mask and
position ids ``cumsum(mask) − 1``, so padding changes nothing), record every residual write at
the last position with hooks (:mod:`extraction.capture`), and project the writes onto the
option rows of the unembedding in float32 (:mod:`extraction.projection`). The full
``[B, T, V]`` logits are never formed: the model's own option logits are the final hidden
state at the last position times ``W_opt`` (plus the LM-head bias). Memory is ``O(N·M·C)``
plus one batch of activations.

With ``out`` given, results are written in checksummed shards (:mod:`extraction.shards`) every
``shard_size`` examples and a rerun resumes from them; the final run directory is written
atomically by ``Contributions.save``.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from pathlib import Path

import numpy as np

from . import provenance
from .batching import auto_budget, plan_batches
from .contributions import Contributions
from .outdir import check_target
from .readout import (
    DEFAULT_MAX_BYTES,
    EXACTNESS_RTOL,
    check_memory,
    dtype_rtol,
    exactness_against_model,
    resolve_positions,
    resolve_vocab,
    top_k_neurons,
)

__all__ = ["extract", "plan_batches", "EXACTNESS_RTOL"]


def _check_task(task) -> tuple[int, int]:
    n, c = len(task), len(task.options)
    if n == 0:
        raise ValueError("task has no examples (N = 0)")
    if c < 2:
        raise ValueError(f"task needs at least 2 options, got {c}: {list(task.options)}")
    labels = np.asarray(task.labels)
    if labels.shape != (n,) or not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"task.labels must be {n} integers, got shape {labels.shape}")
    bad = np.flatnonzero((labels < -1) | (labels >= c))
    if bad.size:
        raise ValueError(f"labels must lie in [0, {c}) for the {c} options (or be -1: "
                         f"unlabelled); {bad.size} do not "
                         f"(first at example {bad[0]}: {labels[bad[0]]})")
    return n, c


def _n_members_bound(arch, granularity: str) -> int:
    """Upper bound of M before running (biases counted), for the memory guard."""
    e = len(arch.blocks)
    if granularity == "head":
        return 1 + e * (arch.n_heads + 2)
    if granularity == "neuron":
        f = max(arch.down_proj_weight(b)[0].shape[1] for b in arch.distinct_blocks)
        return 1 + e * (f + 2)
    if granularity == "expert":
        if arch.spec.experts is None:
            raise ValueError(f"family {arch.family!r} has no mixture-of-experts blocks: "
                             "granularity='expert' is not available")
        n = max((getattr(b, "num_experts", 0) or 0) for b in arch.base.modules())
        return 1 + e * (max(n, 1) + 2)
    return 1 + 2 * e


def _plan_shards(batches, shard_size: int) -> list[list[list[int]]]:
    shards, cur = [], []
    for b in batches:
        cur.append(b.tolist())
        if sum(len(x) for x in cur) >= shard_size:
            shards.append(cur)
            cur = []
    if cur:
        shards.append(cur)
    return shards


def extract(model, tokenizer, task, *, granularity="block", batch_size="auto", out=None,
            resume=True, progress=True, shard_size=256, max_length=None, position=-1,
            vocab="options", chat_template=False, max_bytes=DEFAULT_MAX_BYTES,
            neuron_top_k=None, savings=True, overwrite=False, workers=1,
            only_shards=None) -> Contributions:
    """Exact per-member logit contributions of ``model`` on ``task``.

    Parameters
    ----------
    model : transformers ``*ForCausalLM``
        A supported decoder family (see :func:`extraction.architectures.supported_families`),
        e.g. from :func:`extraction.load_model`. Put in eval mode here (dropout off).
    tokenizer : transformers tokenizer
    task : extraction.tasks.Task
        Prompts, options and labels (``-1``: unlabelled); tokenised with
        ``extraction.prompts.encode_task`` (options scored at their first distinct token,
        demonstrations dropped and passages truncated to fit the context).
    granularity : {"block", "head", "neuron", "expert"}
        ``"block"``: embedding + one member per attention / MLP execution (M = 2·E + 1 for E
        block executions). ``"head"``: every attention write split into its heads plus the
        output-projection bias member where present. ``"neuron"``: every dense MLP write split
        into its neurons plus the down-projection bias member (not for mixture-of-experts).
        ``"expert"`` (mixture-of-experts families): every routed MLP write split into one
        member per expert (zero where not routed) plus the gated shared expert.
    batch_size : "auto" or int
        An int: at most that many examples per batch. ``"auto"``: token-budgeted batches
        (CPU: 4096 padded tokens, at most 64 examples; CUDA: sized from free memory). Either
        way the length-sorted examples are cut where a split saves more padded positions than
        a forward costs (:func:`extraction.batching.plan_batches`).
    out : path, optional
        Run directory; shards are written to ``.<out>.partial`` while running and the final
        directory by ``Contributions.save``. A file or a folder holding anything but an
        extraction is refused before any work (:func:`extraction.outdir.check_target`).
    resume : bool
        Reuse valid shards of an interrupted run with the same configuration; a finished run
        at ``out`` with the same configuration is loaded and returned.
    progress : bool
        Show a tqdm bar (examples/s).
    overwrite : bool
        Replace a finished extraction of another run at ``out`` (default: refuse it).
    shard_size : int
        Examples per shard (rounded up to whole batches).
    max_length : int, optional
        Prompt length limit; default: the model context (``max_position_embeddings``).
    position : int or sequence of int
        Read position (see :mod:`extraction.readout`); default -1, the last prompt token.
    vocab : "options", "full" or sequence of int
        Columns of ``u`` (see :mod:`extraction.readout`).
    chat_template : bool
        Wrap every prompt in the tokenizer's chat template as one user turn with the
        generation prompt, kept byte for byte (see :mod:`extraction.prompts`).
    max_bytes : int or None
        Memory guard on ``u`` (default 4 GiB); None disables it.
    neuron_top_k : int, optional
        With ``granularity="neuron"``: keep the k neurons of largest mean |u| per MLP execution
        plus one ``.rest`` member per execution (sums stay exact); the kept indices are in
        ``meta["neuron_top_k"]``.
    savings : bool
        Skip work whose result is never read, exactly (:mod:`extraction.savings`): tokens
        after the read position, the token prefix shared by every prompt (run once, cached),
        and the last block everywhere but the read position; checked against a real forward
        on the first batch (``meta["savings"]``). False: the plain hooked forward.
    workers : int
        Processes computing the shards (:mod:`extraction.parallel`; needs ``out``): this one
        and ``workers − 1`` spawned workers, one torch thread count each (this process's).
    only_shards : list of int, optional
        (The workers' mode.) Compute just these shards of the plan into the shard directory
        and return None.

    Returns
    -------
    Contributions
        ``u`` [N, M, C], ``bias`` [C], ``logits`` [N, C] (pre-soft-cap for Gemma-2/3),
        ``scale`` [N, M] and ``meta`` with per-example errors against the model's own output
        logits and the tolerance they were held to, the scored option tokens, the shared
        option prefix, demonstrations dropped and truncations.

    Raises
    ------
    ValueError
        Empty task, labels outside the options, no causal LM head, unsupported family or
        variant, bad ``granularity`` / ``batch_size`` / ``position`` / ``vocab``, options
        that cannot be scored, ``u`` above ``max_bytes``.
    ExactnessError
        Σu + bias differs from the model's own output logits beyond the dtype's tolerance
        (checked on every batch; nothing of the failing shard is saved).
    FloatingPointError
        Non-finite logits or contributions; no run directory is written.
    """
    import torch
    from tqdm.auto import tqdm

    from . import architectures
    from .forward import BatchRunner
    from .models import model_source
    from .prompts import encode_task
    from .shards import ShardStore

    if granularity not in ("block", "head", "neuron", "expert"):
        raise ValueError(f"granularity must be 'block', 'head', 'neuron' or 'expert', got "
                         f"{granularity!r}")
    if neuron_top_k is not None and (granularity != "neuron" or isinstance(neuron_top_k, bool)
                                     or not isinstance(neuron_top_k, (int, np.integer))
                                     or neuron_top_k < 1):
        raise ValueError(f"neuron_top_k must be a positive int with granularity='neuron', got "
                         f"{neuron_top_k!r} with {granularity!r}")
    if not (isinstance(workers, (int, np.integer)) and workers >= 1):
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    if workers > 1 and out is None:
        raise ValueError("workers > 1 needs out (the workers hand their shards over on disk)")
    if not (isinstance(shard_size, (int, np.integer)) and shard_size >= 1):
        raise ValueError(f"shard_size must be a positive int, got {shard_size!r}")
    n, c_opt = _check_task(task)
    arch = architectures.resolve(model)
    model.eval()
    if max_length is None:
        max_length = getattr(model.config, "max_position_embeddings", None) or getattr(
            model.config, "n_positions", None)
    enc = encode_task(tokenizer, task, max_length=max_length, chat_template=chat_template)
    option_ids = [int(i) for i in enc.option_ids]
    seqs = [list(map(int, s)) for s in enc.input_ids]
    lengths = np.array([len(s) for s in seqs])
    if lengths.min() < 1:
        raise ValueError("an encoded prompt is empty")
    positions = resolve_positions(position, lengths)
    n_vocab = model.get_output_embeddings().weight.shape[0]
    vocab_ids, option_cols = resolve_vocab(vocab, option_ids, n_vocab,
                                           tokenizer.convert_ids_to_tokens)
    c = len(vocab_ids)
    check_memory(n, _n_members_bound(arch, granularity), c, max_bytes)
    task_labels = np.asarray(task.labels, dtype=np.int64)
    labels = np.where(task_labels >= 0, np.asarray(option_cols)[task_labels.clip(0)], -1)
    columns = list(task.options) if vocab == "options" else [
        str(t) for t in tokenizer.convert_ids_to_tokens(vocab_ids)]

    pad_id = tokenizer.pad_token_id
    if pad_id is None:
        pad_id = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
    # the workers' copy, taken before the runner hooks the model (hooks do not pickle)
    frozen = pickle.dumps((model, tokenizer, task)) if workers > 1 else None
    runner = BatchRunner(model, arch, granularity, vocab_ids, int(pad_id), savings=savings)
    device = runner.in_device
    work = runner.prepare(seqs, positions)   # tokens each prompt runs
    if batch_size == "auto":
        budget, max_batch, split_cost = auto_budget(model, device)
        batches = plan_batches(work, "auto", budget, max_batch, split_cost)
    else:
        batches = plan_batches(work, batch_size)
    if savings and len(batches) > 1:   # the savings are checked on the first batch's shortest
        batches = [batches[-1]] + batches[:-1]   # prompt: make it the task's shortest (cheapest)
    shards = _plan_shards(batches, shard_size)

    dtype, rtol = dtype_rtol(model)
    source = model_source(model)
    store = fp = None
    if out is not None:
        check_target(out, None, analyses=True)   # a file or a folder of other things: refused
        parts = {
            "family": arch.family, "dtype": dtype,
            "device": device.type,
            "granularity": granularity, "option_ids": option_ids, "torch": torch.__version__,
            "inputs": hashlib.sha256(json.dumps(seqs).encode()).hexdigest(),
            "labels": labels.tolist(), "options": list(task.options),
            "positions": positions.tolist(), "vocab": vocab_ids, "top_k": neuron_top_k,
        }
        fp = provenance.run_fingerprint(parts, source)
        legacy = provenance.legacy_fingerprints(parts, source)
        done_run = provenance.completed_run(out, fp, legacy) if resume else None
        if done_run is not None:
            return done_run
        store = ShardStore(out, fp, resume=resume or only_shards is not None, plan=shards)
        shards = store.plan
        batches = [b for s in shards for b in s]

    runner.first_batch = [seqs[int(i)] for i in batches[0]]   # where the savings' check runs
    mine, pool, futures = set(range(len(shards))), None, []
    if only_shards is not None or workers > 1:
        from .parallel import split_work

        mine, pool, futures = split_work(store, shards, work, workers, only_shards, frozen, out,
                                         extract, dict(
            granularity=granularity, batch_size=batch_size, shard_size=shard_size,
            max_length=max_length, position=position, vocab=vocab, chat_template=chat_template,
            max_bytes=max_bytes, neuron_top_k=neuron_top_k, savings=savings))
    u = logits = scale = None
    err, ref_max = np.empty(n), np.empty(n)
    bar = tqdm(total=n, unit="ex", desc=f"extract {getattr(task, 'name', 'task')}",
               disable=not progress, dynamic_ncols=True)
    try:
        # this process's shards first, then the workers' (loaded once the workers are done)
        for si in sorted(range(len(shards)), key=lambda i: (i not in mine, i)):
            shard = shards[si]
            if si not in mine:
                if only_shards is not None:
                    continue
                for fut in futures:    # a worker's shard: wait for the workers (errors raise)
                    fut.result()
            arrays = store.load(si) if store is not None else None
            if arrays is None:
                parts = []
                for b in shard:
                    parts.append(runner.run([seqs[i] for i in b], positions[b]))
                    bar.update(len(b))
                arrays = {"index": np.concatenate(shard).astype(np.int64)}
                for k, name in enumerate(("u", "logits", "model_logits", "scale")):
                    arrays[name] = np.concatenate([p[k] for p in parts])
                bad = ~(np.isfinite(arrays["model_logits"]).all(1)
                        & np.isfinite(arrays["u"]).all((1, 2)))
                if bad.any():
                    raise FloatingPointError(
                        f"non-finite logits or contributions for {bad.sum()} example(s), e.g. "
                        f"example {arrays['index'][bad][0]}; nothing was saved")
                exactness_against_model(arrays["u"], runner.bias(), arrays["model_logits"],
                                        arch.softcap, rtol, index=arrays["index"],
                                        family=arch.family, dtype=dtype)
                if store is not None:
                    store.save(si, arrays)
            else:
                bar.update(len(arrays["index"]))
            if u is None:
                m = arrays["u"].shape[1]
                check_memory(n, m, c, max_bytes)
                u = np.empty((n, m, c), np.float32)
                logits = np.empty((n, c), np.float32)
                scale = np.empty((n, m), np.float32)
            idx = arrays["index"]
            u[idx], logits[idx], scale[idx] = arrays["u"], arrays["logits"], arrays["scale"]
            err[idx] = exactness_against_model(arrays["u"], runner.bias(),
                                               arrays["model_logits"], arch.softcap, rtol,
                                               index=idx, family=arch.family, dtype=dtype)
            ref_max[idx] = np.abs(arrays["model_logits"].astype(np.float64)).max(1)
    finally:
        bar.close()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    if only_shards is not None:
        return None
    if runner.members is None:   # every shard came from disk: build the member table
        b0 = np.asarray(shards[0][0][:1])
        runner.run([seqs[int(b0[0])]], positions[b0])

    members = runner.members
    selected = None
    if neuron_top_k is not None:
        u, scale, members, selected = top_k_neurons(u, scale, members, int(neuron_top_k))
    result = Contributions(u, runner.bias(), labels, logits, scale, members, columns,
                           np.asarray(vocab_ids))
    internal = result.exactness_error()
    meta = {
        "model": source,
        "family": arch.family,
        "model_class": type(model).__name__,
        "dtype": dtype,
        "projection_dtype": "float32",
        "device": str(device),
        "granularity": granularity,
        "norm": arch.final_norm.kind,
        "scale_statistic": "rms" if arch.final_norm.kind == "rms" else "std",
        "parallel_residual": arch.parallel,
        "moe": arch.spec.moe,
        "write_multiplier": arch.write_scale,
        "logit_multiplier": arch.logit_scale,
        "task": getattr(task, "name", None),
        "template": getattr(task, "template", None),
        "options": list(task.options),
        "option_tokens": list(enc.option_tokens),
        "option_token_ids": option_ids,
        "option_shared_prefix": list(enc.shared_prefix_tokens),
        "whitespace_options": list(enc.whitespace_options),
        "chat_template": bool(chat_template),
        "vocab": vocab if isinstance(vocab, str) else "ids",
        "position": position if isinstance(position, (int, np.integer)) else "per-example",
        "positions": positions.tolist(),
        "labelled": bool((labels >= 0).all()),
        "n_unlabelled": int((labels < 0).sum()),
        "task_meta": dict(getattr(task, "meta", {}) or {}),
        "seed": (getattr(task, "meta", {}) or {}).get("seed"),
        "n_examples": n,
        "n_truncated": int(enc.n_truncated),
        "demos_dropped": enc.demos_dropped.tolist(),
        "n_demos_dropped": int(enc.demos_dropped.sum()),
        "max_length": max_length,
        "batch_size": batch_size,
        "fingerprint": fp,
        "n_batches": len(batches),
        "savings": dict(runner.report),
        "versions": provenance.versions(),
        "exactness_reference": "model output logits (own forward, every batch" + (
            "; the LM head on the read columns only after the first real forward)"
            if runner.report.get("head_columns", {}).get("narrowed_batches") else ")"),
        "exactness_error": err.tolist(),
        "max_exactness_error": float(err.max()),
        "max_relative_exactness_error": float((err / (1 + ref_max)).max()),
        "internal_exactness_error": float(internal.max()),
        "exactness_rtol": rtol,
        "exactness_ok": True,
    }
    if selected is not None:
        meta["neuron_top_k"] = {"k": int(neuron_top_k), "selected": selected}
    if arch.softcap is not None:
        meta["final_logit_softcapping"] = arch.softcap
        meta["logits_note"] = ("logits are the PRE-cap logits; the model outputs "
                               "cap·tanh(logits/cap), against which exactness is checked")
    result.meta = meta
    if out is not None:
        result.save(Path(out), overwrite=overwrite)
        store.remove()
    return result
