"""The last step of :func:`extraction.runner.extract`: the :class:`Contributions` of a run with
its meta record.

The assembled arrays (:mod:`extraction.shardloop`) passed the check against the model's own
output logits on every batch; here ``neuron_top_k`` keeps the largest neurons (sums stay
exact), the result's internal exactness (Σu + bias against its own logits) is measured, and the
meta records how the numbers were made: the model and its family row, the task and its
encoding, the read positions, the batch plan, the savings' report, the library versions and
every exactness figure with the tolerance it was held to.
"""

from __future__ import annotations

import numpy as np

from . import provenance
from .contributions import Contributions
from .readout import top_k_neurons

__all__ = ["build_result", "run_meta"]


def run_meta(model, task, job, assembled, *, internal: float, fingerprint,
             selected=None) -> dict:
    """The meta record of an extraction.

    Parameters
    ----------
    model : transformers ``*ForCausalLM``
        The extracted model (its class name is recorded).
    task : extraction.tasks.Task
    job : extraction.planning.Plan
        The plan that was run (after resuming, the stored one).
    assembled : extraction.shardloop.Assembled
    internal : float
        Max |Σu + bias − logits| of the result itself.
    fingerprint : str or None
        The run's fingerprint (None without ``out``).
    selected : optional
        The neurons kept by ``neuron_top_k`` (:func:`extraction.readout.top_k_neurons`).
    """
    s, arch, enc, runner = job.settings, job.arch, job.enc, job.runner
    labels, err = job.labels, assembled.err
    task_meta = dict(getattr(task, "meta", {}) or {})
    narrowed = runner.report.get("head_columns", {}).get("narrowed_batches")
    meta = {
        "model": job.source,
        "family": arch.family,
        "model_class": type(model).__name__,
        "dtype": job.dtype,
        "projection_dtype": "float32",
        "device": str(job.device),
        "granularity": s.granularity,
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
        "option_token_ids": job.option_ids,
        "option_shared_prefix": list(enc.shared_prefix_tokens),
        "whitespace_options": list(enc.whitespace_options),
        "fragment_options": list(enc.fragment_options),
        "chat_template": bool(s.chat_template),
        "vocab": s.vocab if isinstance(s.vocab, str) else "ids",
        "position": s.position if isinstance(s.position, (int, np.integer)) else "per-example",
        "positions": job.positions.tolist(),
        "labelled": bool((labels >= 0).all()),
        "n_unlabelled": int((labels < 0).sum()),
        "task_meta": task_meta,
        "seed": (getattr(task, "meta", {}) or {}).get("seed"),
        "n_examples": job.n,
        "n_truncated": int(enc.n_truncated),
        "demos_dropped": enc.demos_dropped.tolist(),
        "n_demos_dropped": int(enc.demos_dropped.sum()),
        "max_length": s.max_length,
        "batch_size": s.batch_size,
        "fingerprint": fingerprint,
        "n_batches": len(job.batches),
        "savings": dict(runner.report),
        "versions": provenance.versions(),
        "exactness_reference": "model output logits (own forward, every batch" + (
            "; the LM head on the read columns only after the first real forward)"
            if narrowed else ")"),
        "exactness_error": err.tolist(),
        "max_exactness_error": float(err.max()),
        "max_relative_exactness_error": float((err / (1 + assembled.ref_max)).max()),
        "internal_exactness_error": internal,
        "exactness_rtol": job.rtol,
        "exactness_ok": True,
    }
    if selected is not None:
        meta["neuron_top_k"] = {"k": int(s.neuron_top_k), "selected": selected}
    if arch.softcap is not None:
        meta["final_logit_softcapping"] = arch.softcap
        meta["logits_note"] = ("logits are the PRE-cap logits; the model outputs "
                               "cap·tanh(logits/cap), against which exactness is checked")
    return meta


def build_result(model, task, job, assembled, *, fingerprint) -> Contributions:
    """The run's :class:`Contributions` (top-k neurons kept when asked) with its meta.

    Parameters
    ----------
    model, task, job, assembled, fingerprint
        As for :func:`run_meta`; ``job.runner.members`` must be built (it is after
        :func:`extraction.shardloop.run_shards`).

    Returns
    -------
    Contributions
        With ``meta["neuron_top_k"]`` (``k`` and the kept indices) under ``neuron_top_k``.
    """
    k = job.settings.neuron_top_k
    u, scale, members, selected = assembled.u, assembled.scale, job.runner.members, None
    if k is not None:
        u, scale, members, selected = top_k_neurons(u, scale, members, int(k))
    result = Contributions(u, job.runner.bias(), job.labels, assembled.logits, scale, members,
                           job.columns, np.asarray(job.vocab_ids))
    internal = float(result.exactness_error().max())
    result.meta = run_meta(model, task, job, assembled, internal=internal,
                           fingerprint=fingerprint, selected=selected)
    return result
