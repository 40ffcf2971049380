"""The engine's claim statistics with the DR chains scored one set at a time: the baseline of
the batched scoring (:func:`infodiv.curves.set_values`, one calibration fit or one stacked
factorisation per set size) that ``bench_inference_engine`` and ``bench_gaussian_sets``
measure against."""

from __future__ import annotations

import numpy as np

from infodiv.inference.claim import Replicate
from infodiv.inference.engine import ClaimStatistics


class PerSetStatistics(ClaimStatistics):
    """``pipeline(run, rng) -> {claim: statistic}`` like :class:`ClaimStatistics`, with the
    chains' set values (A, A+x, B, B+x) computed by one ``f.value`` call per set (one
    calibration fit per set for a calibrated objective). Same streams, same numbers."""

    def __call__(self, run, rng) -> dict:
        rep = Replicate(run, self.design, rng)

        def per_set():
            f = rep.f
            vals = np.array([[f.value(s) for s in (a, np.append(a, x), b, np.append(b, x))]
                             for a, b, x in rep.chains], dtype=np.float64)
            return f.sign() * vals.reshape(len(rep.chains), 4)

        rep.cached("chain_values", per_set)
        return {c.name: c.statistic(rep) for c in self.claims}
