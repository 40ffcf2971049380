"""Timing helper shared by the benchmark scripts (run as ``python benchmarks/bench_<name>.py``)."""

from __future__ import annotations

import time


def best_time(fn, repeats=3):
    """Fastest of ``repeats`` calls: ``{"seconds": wall, "cpu_seconds": process CPU}`` and result.

    The machine may be shared: ``cpu_seconds / seconds`` shows how many cores the call got.
    """
    best, result = None, None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        if best is None or wall < best["seconds"]:
            best = {"seconds": wall, "cpu_seconds": cpu}
    return best, result
