"""The first step of :func:`extraction.runner.extract`: check the arguments, tokenise the task and
plan the batches and shards.

Everything the later steps need is fixed here, before any example is run: the encoded prompts
and their read positions, the projected vocabulary and the label of each example in its
columns, the hooked forward (:class:`extraction.forward.BatchRunner`, whose token counts the
batches are cut by), the batch and shard plan, and the dtype tolerance that every batch is
checked against. The result is a frozen :class:`Plan`; resuming from a shard directory replaces
its batches and shards by the stored ones (``dataclasses.replace``), so a resumed run computes
the same batches as the first attempt.
"""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass
from typing import Any

import numpy as np

from .batching import auto_budget, plan_batches
from .readout import check_memory, dtype_rtol, resolve_positions, resolve_vocab

__all__ = ["Settings", "Plan", "check_arguments", "plan", "SHARD_SIZE"]

#: examples per flushed shard (rounded up to whole batches) of every extraction: ``infodiv
#: extract``, ``infodiv run`` and the prompt choice save finished work this often (~10 s of
#: SmolLM2-135M on one CPU core), so Ctrl-C loses at most one shard
SHARD_SIZE = 64

GRANULARITIES = ("block", "head", "neuron", "expert")


@dataclass(frozen=True)
class Settings:
    """The options of one extraction that determine its plan and results.

    They are also the keyword arguments a worker process passes back to ``extract`` to rebuild
    the same plan (:mod:`extraction.parallel`), so ``max_length`` is the resolved limit (the
    model context when none was given), and the other fields are the caller's values as given.
    """

    granularity: str
    batch_size: Any
    shard_size: int
    max_length: int | None
    position: Any
    vocab: Any
    chat_template: bool
    max_bytes: int | None
    neuron_top_k: int | None
    savings: bool

    def kwargs(self) -> dict:
        """The settings as ``extract`` keyword arguments (values as stored, not copied)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclass(frozen=True)
class Plan:
    """What one extraction runs, fixed before its first batch.

    Attributes
    ----------
    settings : Settings
    arch : extraction.architectures.BoundArch
        The model's family row bound to its modules.
    runner : extraction.forward.BatchRunner
        The hooked forward that computes every batch (it holds the model's hooks).
    frozen : bytes or None
        The pickled ``(model, tokenizer, task)`` for worker processes, taken before the hooks
        were added (hooks do not pickle); None with one process.
    enc : extraction.prompts.EncodedTask
        The tokenised task (option tokens, shared option prefix, demonstrations dropped,
        truncations), recorded in the meta.
    seqs : list of list of int
        Token ids of every prompt.
    positions : ndarray of int
        Read position of every example.
    work : ndarray of int
        Tokens each prompt runs (after the savings), which the batches are cut by.
    option_ids : list of int
        Token id scored for each option.
    vocab_ids : list of int
        Columns of ``u``.
    labels : ndarray of int
        Gold column of each example (-1: unlabelled).
    columns : list of str
        Name of each column.
    batches : list of sequences of int
        Example indices of every batch, in the order they run.
    shards : list of list of list of int
        The batches grouped into shards of at least ``shard_size`` examples.
    dtype, rtol : str, float
        The model's parameter dtype and the exactness tolerance it is held to.
    source : dict
        Where the weights come from (:func:`extraction.models.model_source`).
    """

    settings: Settings
    arch: Any
    runner: Any
    frozen: bytes | None
    enc: Any
    seqs: list
    positions: np.ndarray
    work: np.ndarray
    option_ids: list
    vocab_ids: list
    labels: np.ndarray
    columns: list
    batches: list
    shards: list
    dtype: str
    rtol: float
    source: dict

    @property
    def n(self) -> int:
        """Number of examples."""
        return len(self.seqs)

    @property
    def device(self):
        """The device the model's inputs go to."""
        return self.runner.in_device


def check_arguments(granularity, neuron_top_k, workers, out, shard_size) -> None:
    """Refuse bad options before any work, each with the argument and the value it got.

    ``neuron_top_k`` only applies to ``granularity="neuron"``; ``workers > 1`` needs ``out``
    because the workers hand their shards over on disk.
    """
    if granularity not in GRANULARITIES:
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


def _check_task(task) -> tuple[int, int]:
    """``(N, C)`` of a task with at least one example, two options and valid labels."""
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
    """Consecutive batches grouped until a group holds at least ``shard_size`` examples."""
    shards, cur = [], []
    for b in batches:
        cur.append(b.tolist())
        if sum(len(x) for x in cur) >= shard_size:
            shards.append(cur)
            cur = []
    if cur:
        shards.append(cur)
    return shards


def plan(model, tokenizer, task, *, granularity, batch_size, shard_size, max_length, position,
         vocab, chat_template, max_bytes, neuron_top_k, savings, workers) -> Plan:
    """Tokenise ``task``, hook ``model`` and plan the batches and shards of one extraction.

    The arguments are those of :func:`extraction.runner.extract` (checked by
    :func:`check_arguments` first). The model is put in eval mode (dropout off). The memory
    guard runs on an upper bound of M before anything is computed. With ``savings`` and more
    than one batch the last batch (the shortest prompts) runs first, because the savings are
    checked against a real forward on the first batch's shortest prompt: it is then the task's
    cheapest.

    Returns
    -------
    Plan

    Raises
    ------
    ValueError
        Bad options, an empty task, labels outside the options, an unsupported model, options
        that cannot be scored, a bad ``position`` / ``vocab`` / ``batch_size``, or ``u`` above
        ``max_bytes``.
    """
    from . import architectures
    from .forward import BatchRunner
    from .models import model_source
    from .prompts import encode_task

    n, _ = _check_task(task)
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
    check_memory(n, _n_members_bound(arch, granularity), len(vocab_ids), max_bytes)
    task_labels = np.asarray(task.labels, dtype=np.int64)
    labels = np.where(task_labels >= 0, np.asarray(option_cols)[task_labels.clip(0)], -1)
    columns = list(task.options) if vocab == "options" else [
        str(t) for t in tokenizer.convert_ids_to_tokens(vocab_ids)]

    pad_id = tokenizer.pad_token_id
    if pad_id is None:
        pad_id = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
    frozen = pickle.dumps((model, tokenizer, task)) if workers > 1 else None
    runner = BatchRunner(model, arch, granularity, vocab_ids, int(pad_id), savings=savings)
    work = runner.prepare(seqs, positions)
    if batch_size == "auto":
        budget, max_batch, split_cost = auto_budget(model, runner.in_device)
        batches = plan_batches(work, "auto", budget, max_batch, split_cost)
    else:
        batches = plan_batches(work, batch_size)
    if savings and len(batches) > 1:
        batches = [batches[-1]] + batches[:-1]
    shards = _plan_shards(batches, shard_size)
    dtype, rtol = dtype_rtol(model)
    settings = Settings(granularity=granularity, batch_size=batch_size, shard_size=shard_size,
                        max_length=max_length, position=position, vocab=vocab,
                        chat_template=chat_template, max_bytes=max_bytes,
                        neuron_top_k=neuron_top_k, savings=savings)
    return Plan(settings=settings, arch=arch, runner=runner, frozen=frozen, enc=enc, seqs=seqs,
                positions=positions, work=work, option_ids=option_ids, vocab_ids=vocab_ids,
                labels=labels, columns=columns, batches=batches, shards=shards, dtype=dtype,
                rtol=rtol, source=model_source(model))
