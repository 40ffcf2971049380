"""Power of a test at the run's own scale: detection rates on surrogate controls.

:func:`surrogate_power` builds ``n_replicates`` surrogates of each kind from the run itself
(:mod:`infodiv.inference.surrogates`: conditionally independent members, planted synergy or
redundancy, shuffled labels), passes each through the same detector at the same n, and
reports for each test its detection rate with a Wilson 95% interval, so a negative verdict
reads "not detected; a matched case with the effect is detected with probability p".

A *detector* is ``detect(run, rng) -> {test name: bool}`` (the engine's: each claim's rule
on the surrogate, :mod:`infodiv.inference.engine`). Surrogate r of kind k and its detector
draw from the r-th child of the kind's own ``SeedSequence`` branch.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from estimators.resampling import parallel_map
from estimators.validation import check_seed_sequence

from .surrogates import SURROGATES, make_surrogate

__all__ = ["surrogate_power", "wilson_interval"]


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion k/n (Wilson 1927)."""
    if n <= 0:
        return float("nan"), float("nan")
    z = float(norm.ppf((1 + confidence) / 2))
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # the bounds at k = 0 and k = n are 0 and 1 exactly (not their rounded formula values)
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == n else min(1.0, centre + half)
    return float(lo), float(hi)


def _power_task(task, _rng):
    run, detect, kind, seed, kwargs = task
    s_seed, d_seed = seed.spawn(2)
    sur = make_surrogate(run, kind, random_state=np.random.default_rng(s_seed),
                         **kwargs.get(kind, {}))
    return detect(sur, np.random.default_rng(d_seed))


def surrogate_power(run, detect, *, kinds=SURROGATES, n_replicates: int = 20,
                    surrogate_kwargs: dict | None = None, random_state=0, n_jobs=1,
                    progress: bool = True) -> dict:
    """Detection rate of every test of ``detect`` on each kind of surrogate (module docstring).

    Returns ``{kind: {test: {"rate", "n_detected", "n", "ci"}}}`` plus ``"n_replicates"``.
    """
    if n_replicates < 1:
        raise ValueError(f"n_replicates must be >= 1, got {n_replicates}")
    bad = [k for k in kinds if k not in SURROGATES]
    if bad:
        raise ValueError(f"unknown surrogate kinds {bad}; choose from {SURROGATES}")
    kwargs = surrogate_kwargs or {}
    roots = check_seed_sequence(random_state).spawn(len(SURROGATES))
    out = {"n_replicates": n_replicates}
    for kind in kinds:
        seeds = roots[SURROGATES.index(kind)].spawn(n_replicates)
        tasks = [(run, detect, kind, s, kwargs) for s in seeds]
        res = parallel_map(_power_task, tasks, n_jobs=n_jobs,
                           progress=f"power: {kind}" if progress else None)
        out[kind] = {}
        for test in res[0]:
            k = int(sum(bool(r[test]) for r in res))
            out[kind][test] = {"rate": k / n_replicates, "n_detected": k, "n": n_replicates,
                               "ci": wilson_interval(k, n_replicates)}
    return out
