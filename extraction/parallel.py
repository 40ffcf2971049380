"""Data-parallel extraction: the shards of one run computed by several processes.

Every example's contributions depend on that example alone, so the shards of one extraction
(:mod:`extraction.shards`, the batch plan fixed in the manifest) can be computed anywhere and
assembled by the usual resume path. With ``workers = W`` the process that called
:func:`extraction.runner.extract` keeps the plan's first shard (where the savings are checked
against a real forward) and a share of the rest, and W − 1 worker processes (``spawn``: a
fresh interpreter, safe with torch's thread pools) get the model and tokenizer by pickling and
compute the other shards into the same shard directory; the caller then loads them as it loads
the shards of an interrupted run, so a failed or interrupted worker loses nothing finished and
its shards are computed by the next run.

Shards are dealt by their cost in tokens (longest-processing-time first: the plan's shards are
length-sorted, so dealing them in turn would give one process all the long prompts). On CPU
the processes scale where torch's intra-op threads do not: a 135M model on 2 cores extracts
close to twice as fast with two one-thread processes as with one two-thread process. The
numbers are those of a single process except that each worker caches the shared token prefix
from its own first prompt (float rounding of that cache, far inside the exactness tolerance
that every batch is checked against).
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import numpy as np

__all__ = ["deal_shards", "split_work", "start_workers"]


def deal_shards(costs, workers: int) -> list[list[int]]:
    """Shard indices per process: shard 0 to process 0, then each remaining shard, costliest
    first, to the least loaded process (ties to the lowest index)."""
    costs = np.asarray(costs, dtype=np.float64)
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    share: list[list[int]] = [[] for _ in range(workers)]
    load = np.zeros(workers)
    rest = list(range(len(costs)))
    if rest and rest[0] == 0:
        share[0].append(0)
        load[0] += costs[0]
        rest = rest[1:]
    for i in sorted(rest, key=lambda j: (-costs[j], j)):
        w = int(np.argmin(load))
        share[w].append(i)
        load[w] += costs[i]
    return [sorted(s) for s in share]


def _work(extract, frozen, out, shards, threads, kwargs):
    import pickle

    import torch

    torch.set_num_threads(threads)
    model, tokenizer, task = pickle.loads(frozen)
    extract(model, tokenizer, task, out=out, only_shards=shards, progress=False, **kwargs)
    return len(shards)


def split_work(store, shards, work, workers, only_shards, frozen, out, extract, kwargs):
    """The shards this process computes, and the pool and futures of the workers.

    Worker mode (``only_shards``): those of them not on disk. Caller (``workers > 1``): the
    shards not on disk dealt by their tokens (``work``: tokens per example) among ``workers``
    processes; this process keeps the first share and every shard already on disk (it loads
    them), the others go to :func:`start_workers`, which run ``extract`` (passed in by the
    runner) on the pickled ``frozen`` model, tokenizer and task.
    """
    todo = [i for i in range(len(shards)) if not store.has(i)]
    if only_shards is not None:
        return set(only_shards) & set(todo), None, []
    cost = [sum(int(work[j]) for b in shards[i] for j in b) for i in todo]
    shares = [[todo[k] for k in s] for s in deal_shards(cost, int(workers))]
    mine = set(range(len(shards))) - {i for s in shares[1:] for i in s}
    pool, futures = start_workers(extract, frozen, out, shares[1:], kwargs)
    return mine, pool, futures


def start_workers(extract, frozen, out, shares, kwargs):
    """Start one process per non-empty share of ``shares`` on ``frozen``, the pickled
    ``(model, tokenizer, task)``; returns the executor and the futures (``None, []`` when
    there is nothing to hand out)."""
    import torch

    jobs = [s for s in shares if s]
    if not jobs:
        return None, []
    pool = ProcessPoolExecutor(max_workers=len(jobs),
                               mp_context=multiprocessing.get_context("spawn"))
    threads = torch.get_num_threads()
    futures = [pool.submit(_work, extract, frozen, str(out), s, threads, kwargs)
               for s in jobs]
    return pool, futures
