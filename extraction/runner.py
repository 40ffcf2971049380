"""``extract``: run a causal LM over a task and return exact per-member option logits.

Pipeline (DESIGN.md 1, 2.1, 2.4): tokenise the task (``extraction.prompts.encode_task``), sort
examples by length, run the *base* model on left-padded batches (attention mask and position ids
``cumsum(mask) − 1``, so padding changes nothing), record every residual write at the last
position with hooks (:mod:`extraction.capture`), and project the writes onto the option rows of
the unembedding in float32 (:mod:`extraction.decompose`). The full ``[B, T, V]`` logits are never
formed: the model's own option logits are the final hidden state at the last position times
``W_opt`` (plus the LM-head bias). Memory is ``O(N·M·C)`` plus one batch of activations.

With ``out`` given, results are written in checksummed shards (:mod:`extraction.shards`) every
``shard_size`` examples and a rerun resumes from them; the final run directory is written
atomically by ``Contributions.save``.
"""

from __future__ import annotations

import hashlib
import json
import platform
import warnings
from pathlib import Path

import numpy as np

from .contributions import Contributions

__all__ = ["extract", "plan_batches", "EXACTNESS_RTOL"]

# max |Σ u + bias − logits| ≤ rtol · (1 + max |logits|), per example, by model dtype. Float32:
# the 1e-4. Half precision: the model's own residual additions and final norm round to
# the model dtype while the projections are float32, so the tolerance is 4 machine epsilons of
# that dtype (bf16: 4·2⁻⁷ ≈ 0.031, fp16: 4·2⁻¹⁰ ≈ 0.0039); the measured error is stored.
EXACTNESS_RTOL = {"float32": 1e-4, "float64": 1e-4, "bfloat16": 4 * 2.0 ** -7,
                  "float16": 4 * 2.0 ** -10}
_CPU_TOKENS, _CPU_MAX_BATCH = 4096, 64
_GPU_MAX_BATCH = 256


def plan_batches(lengths, batch_size, token_budget: int = _CPU_TOKENS,
                 max_batch: int = _CPU_MAX_BATCH) -> list[np.ndarray]:
    """Length-sorted batches (longest first) as arrays of example indices.

    ``batch_size`` an int: fixed-size batches. ``"auto"``: greedy batches of at most
    ``max_batch`` examples whose padded size ``B · T_max`` stays within ``token_budget``
    (default: the CPU budget of ``extract``).
    """
    lengths = np.asarray(lengths)
    order = np.argsort(-lengths, kind="stable")
    if batch_size != "auto":
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
                or batch_size < 1:
            raise ValueError(f"batch_size must be 'auto' or a positive int, got {batch_size!r}")
        return [order[i:i + batch_size] for i in range(0, len(order), int(batch_size))]
    batches, start = [], 0
    while start < len(order):
        t_max = int(lengths[order[start]])
        size = max(1, min(max_batch, token_budget // max(t_max, 1)))
        batches.append(order[start:start + size])
        start += size
    return batches


def _auto_budget(model, device) -> tuple[int, int]:
    import torch

    if device.type != "cuda":
        return _CPU_TOKENS, _CPU_MAX_BATCH
    free, _ = torch.cuda.mem_get_info(device)
    cfg = model.config
    d = getattr(cfg, "hidden_size", 1024)
    ff = getattr(cfg, "intermediate_size", None) or 4 * d
    elem = next(model.parameters()).element_size()
    # live activations of one block per token (residual, norms, q/k/v/o, MLP hidden) + slack
    per_token = elem * (8 * d + 3 * ff) * 4
    return max(512, int(0.4 * free / per_token)), _GPU_MAX_BATCH


def _check_task(task) -> tuple[int, int]:
    n, c = len(task), len(task.options)
    if n == 0:
        raise ValueError("task has no examples (N = 0)")
    if c < 2:
        raise ValueError(f"task needs at least 2 options, got {c}: {list(task.options)}")
    labels = np.asarray(task.labels)
    if labels.shape != (n,) or not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"task.labels must be {n} integers, got shape {labels.shape}")
    bad = np.flatnonzero((labels < 0) | (labels >= c))
    if bad.size:
        raise ValueError(f"labels must lie in [0, {c}) for the {c} options; {bad.size} do not "
                         f"(first at example {bad[0]}: {labels[bad[0]]})")
    return n, c


def _fingerprint(parts: dict) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _completed_run(out, fingerprint: str) -> Contributions | None:
    """The finished run at ``out`` when it was made with the same configuration."""
    try:
        done = Contributions.load(out)
    except (FileNotFoundError, ValueError, KeyError, OSError):
        return None
    return done if done.meta.get("fingerprint") == fingerprint else None


def _versions() -> dict:
    from importlib import metadata

    import torch
    import transformers

    try:  # the distribution's version; extraction never imports the infodiv package
        dist_version = metadata.version("infodiv")
    except metadata.PackageNotFoundError:
        dist_version = "unknown"
    return {"python": platform.python_version(), "numpy": np.__version__,
            "torch": torch.__version__, "transformers": transformers.__version__,
            "infodiv": dist_version}


class _Runner:
    """Runs batches through the base model with the capture hooks attached."""

    def __init__(self, model, arch, granularity, option_ids, pad_id):
        import torch

        from .architectures import unembedding

        self.model, self.arch, self.granularity = model, arch, granularity
        self.w_opt, self.b_head = unembedding(model, option_ids)
        self.collect = self.w_opt.device
        self.in_device = model.get_input_embeddings().weight.device
        self.pad_id = pad_id
        self.heads = None
        if granularity == "head":
            from .decompose import head_params

            self.heads = head_params(arch, self.collect)
        self.signature = None
        self.members = None
        self.torch = torch

    def bias(self) -> np.ndarray:
        norm = self.arch.final_norm
        c = self.w_opt.shape[0]
        b = self.torch.zeros(c, device=self.collect)
        if norm.beta is not None:
            b = b + self.w_opt @ norm.beta.to(self.collect)
        if self.b_head is not None:
            b = b + self.b_head
        return b.cpu().numpy().astype(np.float32)

    def run(self, seqs: list[list[int]]):
        from .capture import WriteRecorder
        from .decompose import members_for, project

        torch = self.torch
        t = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), t), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), t), dtype=torch.long)
        for j, s in enumerate(seqs):
            ids[j, t - len(s):] = torch.as_tensor(s, dtype=torch.long)
            mask[j, t - len(s):] = 1
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        rec = WriteRecorder(self.arch, heads=self.granularity == "head", device=self.collect)
        with torch.inference_mode(), rec:
            out = self.arch.base(input_ids=ids.to(self.in_device),
                                 attention_mask=mask.to(self.in_device),
                                 position_ids=pos.to(self.in_device), use_cache=False)
            hidden = out[0][:, -1, :].to(self.collect, torch.float32)
            logits = hidden @ self.w_opt.t()
            if self.b_head is not None:
                logits = logits + self.b_head
            sig = [(w.kind, w.block, w.execution) for w in rec.writes]
            if self.signature is None:
                self.signature = sig
                self.members, _ = members_for(rec.writes, self.arch, self.granularity)
            elif sig != self.signature:
                raise RuntimeError("the sequence of residual writes changed between batches")
            u, scale = project(rec.writes, self.arch, self.granularity, self.w_opt,
                               self.heads)
        return u.cpu().numpy(), logits.cpu().numpy(), scale.cpu().numpy()


def extract(model, tokenizer, task, *, granularity="block", batch_size="auto", out=None,
            resume=True, progress=True, shard_size=256, max_length=None) -> Contributions:
    """Exact per-member option-logit contributions of ``model`` on ``task``.

    Parameters
    ----------
    model : transformers ``*ForCausalLM``
        A supported decoder family (see :func:`extraction.architectures.supported_families`),
        e.g. from :func:`extraction.load_model`. Put in eval mode here (dropout off).
    tokenizer : transformers tokenizer
    task : extraction.tasks.Task
        Prompts, options and labels; tokenised with ``extraction.prompts.encode_task`` (option
        ids from in-context tokenisation, truncation inside the passage).
    granularity : {"block", "head"}
        ``"block"``: embedding + one member per attention / MLP execution (M = 2·E + 1 for E
        block executions). ``"head"``: every attention write split into its heads plus the
        output-projection bias member where present.
    batch_size : "auto" or int
        ``"auto"``: token-budgeted length-sorted batches (CPU: 4096 tokens, at most 64
        examples; CUDA: sized from free memory).
    out : path, optional
        Run directory; shards are written to ``.<out>.partial`` while running and the final
        directory by ``Contributions.save``.
    resume : bool
        Reuse valid shards of an interrupted run with the same configuration (model weights,
        prompts, labels, options, granularity, dtype, device type); the resumed run keeps the
        batches of the first attempt, so its arrays are bit-identical to an uninterrupted run.
        A finished run at ``out`` with the same configuration is loaded and returned.
    progress : bool
        Show a tqdm bar (examples/s).
    shard_size : int
        Examples per shard (rounded up to whole batches).
    max_length : int, optional
        Prompt length limit; default: the model context (``max_position_embeddings``).

    Returns
    -------
    Contributions
        ``u`` [N, M, C], ``bias`` [C], ``logits`` [N, C] (pre-soft-cap for Gemma-2), ``scale``
        [N, M] and ``meta`` with per-example exactness errors
        ``max_c |Σ_m u_m + bias − logits|`` and the tolerance they were held to.

    Raises
    ------
    ValueError
        Empty task, labels outside the options, no causal LM head, unsupported family, bad
        ``granularity`` / ``batch_size``.
    FloatingPointError
        Non-finite logits or contributions; no run directory is written (finished shards of
        earlier batches stay in the hidden ``.partial`` folder, which is not a run).
    """
    import torch
    from tqdm.auto import tqdm

    from . import architectures
    from .models import model_source
    from .prompts import encode_task
    from .shards import ShardStore

    if granularity not in ("block", "head"):
        raise ValueError(f"granularity must be 'block' or 'head', got {granularity!r}")
    if not (isinstance(shard_size, (int, np.integer)) and shard_size >= 1):
        raise ValueError(f"shard_size must be a positive int, got {shard_size!r}")
    n, c = _check_task(task)
    arch = architectures.resolve(model)
    model.eval()
    if max_length is None:
        max_length = getattr(model.config, "max_position_embeddings", None) or getattr(
            model.config, "n_positions", None)
    enc = encode_task(tokenizer, task, max_length=max_length)
    option_ids = [int(i) for i in enc.option_ids]
    if len(option_ids) != c or len(set(option_ids)) != c:
        raise ValueError(f"option ids {option_ids} are not {c} distinct tokens")
    seqs = [list(map(int, s)) for s in enc.input_ids]
    lengths = np.array([len(s) for s in seqs])
    if lengths.min() < 1:
        raise ValueError("an encoded prompt is empty")

    pad_id = tokenizer.pad_token_id
    if pad_id is None:
        pad_id = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
    runner = _Runner(model, arch, granularity, option_ids, int(pad_id))
    device = runner.in_device
    if batch_size == "auto":
        budget, max_batch = _auto_budget(model, device)
        batches = plan_batches(lengths, "auto", budget, max_batch)
    else:
        batches = plan_batches(lengths, batch_size)
    shards, cur = [], []
    for b in batches:
        cur.append(b.tolist())
        if sum(len(x) for x in cur) >= shard_size:
            shards.append(cur)
            cur = []
    if cur:
        shards.append(cur)

    dtype = str(next(model.parameters()).dtype).replace("torch.", "")
    source = model_source(model)
    store = fp = None
    if out is not None:
        fp = _fingerprint({
            "source": source, "family": arch.family, "dtype": dtype, "device": device.type,
            "granularity": granularity, "option_ids": option_ids, "torch": torch.__version__,
            "inputs": hashlib.sha256(json.dumps(seqs).encode()).hexdigest(),
            "labels": np.asarray(task.labels).tolist(), "options": list(task.options),
        })
        done_run = _completed_run(out, fp) if resume else None
        if done_run is not None:
            return done_run
        store = ShardStore(out, fp, resume=resume, plan=shards)
        shards = store.plan
        batches = [b for s in shards for b in s]

    u = logits = scale = None
    bar = tqdm(total=n, unit="ex", desc=f"extract {getattr(task, 'name', 'task')}",
               disable=not progress, dynamic_ncols=True)
    try:
        for si, shard in enumerate(shards):
            arrays = store.load(si) if store is not None else None
            if arrays is None:
                parts = []
                for b in shard:
                    parts.append(runner.run([seqs[i] for i in b]))
                    bar.update(len(b))
                arrays = {"index": np.concatenate(shard).astype(np.int64),
                          "u": np.concatenate([p[0] for p in parts]),
                          "logits": np.concatenate([p[1] for p in parts]),
                          "scale": np.concatenate([p[2] for p in parts])}
                bad = ~(np.isfinite(arrays["logits"]).all(1) & np.isfinite(arrays["u"]).all((1, 2)))
                if bad.any():
                    raise FloatingPointError(
                        f"non-finite logits or contributions for {bad.sum()} example(s), e.g. "
                        f"example {arrays['index'][bad][0]}; nothing was saved")
                if store is not None:
                    store.save(si, arrays)
            else:
                bar.update(len(arrays["index"]))
            if u is None:
                m = arrays["u"].shape[1]
                u = np.empty((n, m, c), np.float32)
                logits = np.empty((n, c), np.float32)
                scale = np.empty((n, m), np.float32)
            idx = arrays["index"]
            u[idx], logits[idx], scale[idx] = arrays["u"], arrays["logits"], arrays["scale"]
    finally:
        bar.close()
    if runner.members is None:   # every shard came from disk: build the member table
        runner.run([seqs[int(shards[0][0][0])]])

    result = Contributions(u, runner.bias(), np.asarray(task.labels, dtype=np.int64), logits,
                           scale, runner.members, list(task.options), np.asarray(option_ids))
    err = result.exactness_error()
    rtol = EXACTNESS_RTOL.get(dtype, 1e-4)
    tol = rtol * (1 + np.abs(logits.astype(np.float64)).max(1))
    ok = bool((err <= tol).all())
    if not ok:
        worst = int(np.argmax(err - tol))
        warnings.warn(f"exactness check failed for {(err > tol).sum()} example(s): worst "
                      f"|Σu + bias − logits| = {err[worst]:.3g} > {tol[worst]:.3g} "
                      f"(example {worst}, dtype {dtype})", stacklevel=2)
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
        "task": getattr(task, "name", None),
        "template": getattr(task, "template", None),
        "options": list(task.options),
        "task_meta": dict(getattr(task, "meta", {}) or {}),
        "seed": (getattr(task, "meta", {}) or {}).get("seed"),
        "n_examples": n,
        "n_truncated": int(enc.n_truncated),
        "max_length": max_length,
        "batch_size": batch_size,
        "fingerprint": fp,
        "n_batches": len(batches),
        "versions": _versions(),
        "exactness_error": err.tolist(),
        "max_exactness_error": float(err.max()),
        "max_relative_exactness_error": float((err / (1 + np.abs(logits).max(1))).max()),
        "exactness_rtol": rtol,
        "exactness_ok": ok,
    }
    if arch.softcap is not None:
        meta["final_logit_softcapping"] = arch.softcap
        meta["logits_note"] = ("logits are the PRE-cap logits; the model outputs "
                               "cap·tanh(logits/cap)")
    result.meta = meta
    if out is not None:
        result.save(Path(out))
        store.remove()
    return result
