"""The Dask cluster of a grid (:mod:`infodiv.study.grid`): a ``distributed.LocalCluster`` of
single-threaded worker processes, or the scheduler at an address. Dask is imported here, on
use, and nowhere else in the library: ``import infodiv`` never needs it.
"""

from __future__ import annotations

import os
import uuid

from ..runfiles import UserError
from .grid_analysis import analyse_run, analysis_code, warm_up
from .grid_runs import one_line

__all__ = ["Cluster", "require_dask", "DASK_MISSING"]

DASK_MISSING = ("infodiv grid needs Dask: pip install 'dask[distributed]>=2024.1' "
                "(or the package's extra: pip install -e '.[grid]')")


def require_dask() -> None:
    """UserError with the install command when ``dask.distributed`` is missing."""
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        raise UserError(DASK_MISSING) from None


class Cluster:
    """The Dask client of a grid, connected on first need (a grid whose runs are all finished
    starts none). ``scheduler``: an address (``tcp://host:8786``) or None for a local cluster
    of ``workers`` processes (default: the cores, at most one per run). ``clock``: the CPU
    clock the workers measure with (:data:`~infodiv.study.grid_analysis.CLOCKS`)."""

    #: how long a connection to a scheduler may take
    timeout = "20s"

    def __init__(self, scheduler: str | None, workers: int | None, n_runs: int):
        self.scheduler, self.workers, self.n_runs = scheduler, workers, n_runs
        self.client = self.cluster = None
        self.clock = "process"

    def connect(self):
        """The client (connecting, or starting the local cluster, the first time)."""
        if self.client is None:
            self.client = self._remote() if self.scheduler else self._local()
            self.clock = self._clock()
            self.client.run(warm_up)
        return self.client

    def _remote(self):
        from dask.distributed import Client

        try:
            return Client(self.scheduler, timeout=self.timeout)
        except (OSError, TimeoutError) as exc:
            raise UserError(f"--scheduler {self.scheduler}: cannot connect "
                            f"({one_line(exc)})") from None

    def _local(self):
        import logging

        from dask.distributed import Client, LocalCluster

        n = self.workers or max(1, min(os.cpu_count() or 1, self.n_runs))
        self.cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                    dashboard_address=":0", silence_logs=logging.ERROR)
        return Client(self.cluster)

    def _clock(self) -> str:
        """``process`` when every worker is a single-threaded process of its own (not this
        one), else ``thread``."""
        workers = self.client.scheduler_info().get("workers", {})
        pids = self.client.run(os.getpid)
        single = all(w.get("nthreads") == 1 for w in workers.values())
        own = len(set(pids.values())) == len(pids) and os.getpid() not in pids.values()
        return "process" if workers and single and own else "thread"

    def submit(self, run: str, root, settings):
        """The future of :func:`~infodiv.study.grid_analysis.analyse_run` on ``root``."""
        return self.connect().submit(analyse_run, str(root), settings, self.clock,
                                     analysis_code(), pure=False,
                                     key=f"analyse-{run}-{uuid.uuid4().hex[:8]}")

    def describe(self) -> str:
        n = len(self.connect().scheduler_info().get("workers", {}))
        where = self.scheduler or "a local cluster"
        return f"{where}, {n} worker(s); CPU s measured with time.{self.clock}_time"

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        self.client = self.cluster = None
