"""The running step of :func:`extraction.runner.extract`: compute or load every shard of a plan
and assemble the per-example arrays.

Shards are taken in plan order, this process's first and the workers' after (waiting for the
workers, whose errors are raised here). A shard not on disk is computed batch by batch with the
plan's hooked forward; before it is saved, its logits and contributions must be finite and
Σu + bias must equal the model's own output logits within the dtype's tolerance, so nothing of
a failing shard is ever written. A shard read back from disk is held to the same check before
its examples are filled in, and the per-example errors and logit magnitudes are kept for the
meta (:mod:`extraction.runmeta`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .readout import check_memory, exactness_against_model

__all__ = ["Assembled", "run_shards"]


@dataclass(frozen=True)
class Assembled:
    """The arrays of every example, in task order.

    Attributes
    ----------
    u : ndarray, float32 [N, M, C]
    logits : ndarray, float32 [N, C]
        Pre-soft-cap option logits from the final hidden state.
    scale : ndarray, float32 [N, M]
    err : ndarray, float64 [N]
        Per-example max |Σu + bias − model output logits|.
    ref_max : ndarray, float64 [N]
        Per-example max |model output logit|, the scale of ``err``.
    """

    u: np.ndarray
    logits: np.ndarray
    scale: np.ndarray
    err: np.ndarray
    ref_max: np.ndarray


def _compute_shard(job, shard, bar) -> dict[str, np.ndarray]:
    """Run the batches of ``shard`` and check them: finite, and exact against the model.

    Raises
    ------
    FloatingPointError
        Non-finite logits or contributions (nothing of the shard is saved).
    ExactnessError
        Σu + bias differs from the model's own output logits beyond the dtype's tolerance.
    """
    runner, arch = job.runner, job.arch
    parts = []
    for b in shard:
        parts.append(runner.run([job.seqs[i] for i in b], job.positions[b]))
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
    exactness_against_model(arrays["u"], runner.bias(), arrays["model_logits"], arch.softcap,
                            job.rtol, index=arrays["index"], family=arch.family,
                            dtype=job.dtype)
    return arrays


def _split(job, store, *, workers, only_shards, out, entry):
    """``(mine, pool, futures)``: the shards this process takes, and the workers' pool."""
    if only_shards is None and workers <= 1:
        return set(range(len(job.shards))), None, []
    from .parallel import split_work

    return split_work(store, job.shards, job.work, workers, only_shards, job.frozen, out, entry,
                      job.settings.kwargs())


def run_shards(job, store, *, workers, only_shards, out, entry, progress,
               task_name) -> Assembled | None:
    """Compute (or load) every shard of ``job`` and assemble the arrays of all examples.

    Parameters
    ----------
    job : extraction.planning.Plan
        With the shard plan of ``store`` when resuming.
    store : extraction.shards.ShardStore or None
        Where shards are loaded from and saved to; None without ``out``.
    workers : int
        Processes computing the shards (this one included; :mod:`extraction.parallel`).
    only_shards : list of int or None
        The worker mode: compute just these shards into ``store`` and return None.
    out : path or None
        The run directory the workers write their shards beside.
    entry : callable
        :func:`extraction.runner.extract`, which the worker processes run.
    progress : bool
        Show a tqdm bar over examples.
    task_name : str
        Named in the bar.

    Returns
    -------
    Assembled or None
        None in the worker mode. Afterwards ``job.runner.members`` is the member table (built
        from one example when every shard came from disk).
    """
    from tqdm.auto import tqdm

    runner, arch = job.runner, job.arch
    runner.first_batch = [job.seqs[int(i)] for i in job.batches[0]]   # the savings' check
    mine, pool, futures = _split(job, store, workers=workers, only_shards=only_shards, out=out,
                                 entry=entry)
    n, c = job.n, len(job.vocab_ids)
    u = logits = scale = None
    err, ref_max = np.empty(n), np.empty(n)
    bar = tqdm(total=n, unit="ex", desc=f"extract {task_name}", disable=not progress,
               dynamic_ncols=True)
    try:
        for si in sorted(range(len(job.shards)), key=lambda i: (i not in mine, i)):
            if si not in mine:
                if only_shards is not None:
                    continue
                for fut in futures:    # a worker's shard: wait for the workers (errors raise)
                    fut.result()
            arrays = store.load(si) if store is not None else None
            if arrays is None:
                arrays = _compute_shard(job, job.shards[si], bar)
                if store is not None:
                    store.save(si, arrays)
            else:
                bar.update(len(arrays["index"]))
            if u is None:
                m = arrays["u"].shape[1]
                check_memory(n, m, c, job.settings.max_bytes)
                u = np.empty((n, m, c), np.float32)
                logits = np.empty((n, c), np.float32)
                scale = np.empty((n, m), np.float32)
            idx = arrays["index"]
            u[idx], logits[idx], scale[idx] = arrays["u"], arrays["logits"], arrays["scale"]
            err[idx] = exactness_against_model(arrays["u"], runner.bias(),
                                               arrays["model_logits"], arch.softcap, job.rtol,
                                               index=idx, family=arch.family, dtype=job.dtype)
            ref_max[idx] = np.abs(arrays["model_logits"].astype(np.float64)).max(1)
    except KeyboardInterrupt as exc:   # say what is saved: infodiv.cli prints it in one line
        if store is not None:
            saved = sum(len(b) for i, shard in enumerate(job.shards) if store.has(i)
                        for b in shard)
            exc.saved = (saved, n, str(out if out is not None else store.dir))
        raise
    finally:
        bar.close()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    if only_shards is not None:
        return None
    if runner.members is None:   # every shard came from disk: build the member table
        b0 = np.asarray(job.shards[0][0][:1])
        runner.run([job.seqs[int(b0[0])]], job.positions[b0])
    return Assembled(u=u, logits=logits, scale=scale, err=err, ref_max=ref_max)
