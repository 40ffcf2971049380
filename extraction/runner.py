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

``extract`` is four steps, each in its own function:

1. :func:`extraction.planning.plan`: check the arguments, tokenise, hook the model and plan the
   batches and shards (a frozen :class:`~extraction.planning.Plan`);
2. :func:`open_run` (with ``out``): the run's fingerprint, the finished run it matches, or the
   shard store it resumes from (whose stored plan replaces the fresh one);
3. :func:`extraction.shardloop.run_shards`: the worker pool and the shard loop, every batch
   checked against the model's own output logits;
4. :func:`extraction.runmeta.build_result`: the Contributions with its internal exactness check
   and its meta record, saved to ``out``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from . import provenance
from .batching import plan_batches
from .contributions import Contributions
from .outdir import check_target
from .planning import SHARD_SIZE, Plan, check_arguments, plan
from .readout import DEFAULT_MAX_BYTES, EXACTNESS_RTOL
from .runmeta import build_result
from .shardloop import run_shards

__all__ = ["extract", "open_run", "plan_batches", "EXACTNESS_RTOL"]


def open_run(out, job: Plan, task, *, resume: bool, only_shards, discard: bool = False):
    """Find the finished run at ``out`` or open the shard directory that this run resumes from.

    The fingerprint hashes everything that determines the numbers (the family, dtype, device
    type, granularity, scored option tokens, torch version, the encoded prompts, labels,
    options, read positions, projected vocabulary, ``neuron_top_k`` and the weights' identity,
    :func:`extraction.provenance.run_fingerprint`). A finished run at ``out`` stored under the
    same fingerprint is the answer itself. One stored under any other fingerprint is not reused,
    whatever made the fingerprints differ (another configuration, other weights, or a
    fingerprint defined otherwise when it was stored): it is extracted again, and replaces the
    stored run when :func:`extraction.outdir.check_target` finds it the same run (else only
    with ``overwrite``).

    Parameters
    ----------
    out : path
        The run directory; refused before any work when it is a file or a folder of other
        things (:func:`extraction.outdir.check_target`).
    job : extraction.planning.Plan
    task : extraction.tasks.Task
    resume : bool
        Return a finished run with this fingerprint, and reuse its valid shards.
    only_shards : list of int or None
        The workers' mode: the shards of the caller's plan are always reused.
    discard : bool
        Discard the shards of an interrupted extraction of another configuration at ``out``
        (default: refuse them, :class:`extraction.shards.ShardStore`).

    Returns
    -------
    (Contributions or None, ShardStore or None, Plan, str)
        The finished run (then nothing else is needed), the shard store, the plan with the
        store's batches and shards (the first attempt's, so a resumed run computes the same
        batches), and the fingerprint.
    """
    import torch

    from .shards import ShardStore

    check_target(out, None, analyses=True)   # a file or a folder of other things: refused
    parts = {
        "family": job.arch.family, "dtype": job.dtype, "device": job.device.type,
        "granularity": job.settings.granularity, "option_ids": job.option_ids,
        "torch": torch.__version__,
        "inputs": hashlib.sha256(json.dumps(job.seqs).encode()).hexdigest(),
        "labels": job.labels.tolist(), "options": list(task.options),
        "positions": job.positions.tolist(), "vocab": job.vocab_ids,
        "top_k": job.settings.neuron_top_k,
    }
    fp = provenance.run_fingerprint(parts, job.source)
    done = provenance.completed_run(out, fp) if resume else None
    if done is not None:
        return done, None, job, fp
    run = provenance.fingerprint({k: parts[k] for k in ("granularity", "inputs", "labels",
                                                        "options", "positions", "vocab")}
                                 | {"model": str(job.source.get("model_id"))})
    store = ShardStore(out, fp, resume=resume or only_shards is not None, plan=job.shards,
                       discard=discard, run=run)
    shards = store.plan
    job = dataclasses.replace(job, shards=shards, batches=[b for s in shards for b in s])
    return None, store, job, fp


def extract(model, tokenizer, task, *, granularity="block", batch_size="auto", out=None,
            resume=True, progress=True, shard_size=SHARD_SIZE, max_length=None, position=-1,
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
        at ``out`` with the same configuration (the same fingerprint, :func:`open_run`) is
        loaded and returned.
    progress : bool
        Show a tqdm bar (examples/s).
    overwrite : bool
        Replace a finished extraction of another run at ``out``, and discard the shards of an
        interrupted extraction of another configuration there (default: refuse both).
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
    check_arguments(granularity, neuron_top_k, workers, out, shard_size)
    job = plan(model, tokenizer, task, granularity=granularity, batch_size=batch_size,
               shard_size=shard_size, max_length=max_length, position=position, vocab=vocab,
               chat_template=chat_template, max_bytes=max_bytes, neuron_top_k=neuron_top_k,
               savings=savings, workers=workers)
    store = fp = None
    if out is not None:
        done, store, job, fp = open_run(out, job, task, resume=resume, only_shards=only_shards,
                                        discard=overwrite)
        if done is not None:
            return done
    assembled = run_shards(job, store, workers=workers, only_shards=only_shards, out=out,
                           entry=extract, progress=progress,
                           task_name=getattr(task, "name", "task"))
    if assembled is None:   # the workers' mode: the shards are on disk
        return None
    result = build_result(model, task, job, assembled, fingerprint=fp)
    if out is not None:
        result.save(Path(out), overwrite=overwrite)
        store.remove()
    return result
