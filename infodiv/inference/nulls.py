"""Label-permutation nulls of a whole pipeline, and null-corrected estimates.

:func:`permutation_null` shuffles Y (class counts kept), reruns the whole pipeline K times and
reports for every statistic (:func:`null_summary`, the one summary of a null's draws): the
observed value, the null mean and sd, the null 2.5–97.5% range, the permutation p-values
``p_greater = (1 + #{null ≥ obs}) / (1 + K)``, ``p_less`` (mirror) and
``p_two_sided = min(1, 2·min)`` (Phipson & Smyth 2010, never 0), the p of the statistic's own
direction (``pipeline.directions``, default ``"greater"``) and the
null-corrected value ``obs − mean(null)``.

Estimator bias at D ≈ 61 with a few hundred examples per class is of the size of the effects
(DESIGN.md 2.8), and a number that a null reproduces is not a finding, so reports lead with the
corrected value. :func:`null_corrected` gives it an interval: the example-bootstrap spread
centred at the corrected value,

    CI = (obs − m_null) + (q_{(1−c)/2} − mean_b, q_{(1+c)/2} − mean_b),

i.e. the bias is taken from the null and only the spread from the bootstrap (a percentile
interval of a biased estimator would carry the bootstrap's own bias a second time).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from estimators.resampling import percentile_interval
from estimators.validation import check_seed_sequence

from .bootstrap import ByStatistic, Estimates, point_values, two_level_bootstrap
from .replicates import run_replicates, stack

__all__ = ["NullSummary", "NullResult", "null_summary", "permutation_null", "null_corrected",
           "infer", "Inference", "ALTERNATIVES", "NULL_RANGE"]

ALTERNATIVES = ("greater", "less", "two-sided")
#: quantile levels of a null's reported range (its central 95%)
NULL_RANGE = (0.025, 0.975)


@dataclass
class NullSummary:
    """Observed statistic against its label-permutation null (module docstring)."""

    name: str
    observed: float
    null_mean: float
    null_sd: float
    null_low: float
    null_high: float
    p_greater: float
    p_less: float
    p_two_sided: float
    alternative: str
    n_permutations: int
    n_failed: int
    distribution: np.ndarray = None

    @property
    def p(self) -> float:
        return {"greater": self.p_greater, "less": self.p_less,
                "two-sided": self.p_two_sided}[self.alternative]

    @property
    def corrected(self) -> float:
        return self.observed - self.null_mean

    def to_dict(self) -> dict:
        return {"observed": self.observed, "null_mean": self.null_mean, "null_sd": self.null_sd,
                "null_interval": [self.null_low, self.null_high], "p": self.p,
                "alternative": self.alternative, "p_greater": self.p_greater,
                "p_less": self.p_less, "p_two_sided": self.p_two_sided,
                "corrected": self.corrected, "n_permutations": self.n_permutations,
                "n_failed": self.n_failed}


@dataclass
class NullResult(ByStatistic):
    """Label-permutation nulls by statistic name plus the failed replicates' errors."""

    BY_NAME = "nulls"

    nulls: dict
    n_permutations: int
    errors: list

    def to_dict(self) -> dict:
        return {"n_permutations": self.n_permutations, "n_failed": len(self.errors),
                "statistics": {k: v.to_dict() for k, v in self.nulls.items()
                               if np.ndim(v.observed) == 0}}


def null_summary(observed, draws, alternative: str = "greater", *, name: str = "",
                 n_permutations: int | None = None) -> NullSummary:
    """An observed statistic against its null ``draws`` (``[K]`` or ``[K, ...]``, failed draws
    NaN and ignored): the null mean, sd and :data:`NULL_RANGE` range over the finite draws,
    ``p_greater = (1 + #{null ≥ obs}) / (1 + K_finite)``, ``p_less`` (mirror) and
    ``p_two_sided = min(1, 2·min)`` (Phipson & Smyth 2010, never 0), the p of ``alternative``
    and the null-corrected value (module docstring). ``n_permutations`` defaults to K."""
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    obs = np.asarray(observed, dtype=np.float64)
    null = np.asarray(draws, dtype=np.float64)
    ok = np.isfinite(null)
    k = ok.sum(axis=0)
    greater = (1 + ((null >= obs) & ok).sum(axis=0)) / (1 + k)
    less = (1 + ((null <= obs) & ok).sum(axis=0)) / (1 + k)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # all-NaN entries stay NaN
        lo, hi = np.nanquantile(null, NULL_RANGE, axis=0)
        mean, sd = np.nanmean(null, axis=0), np.nanstd(null, axis=0, ddof=1)
    failed = int((~ok).reshape(null.shape[0], -1).any(axis=1).sum())
    conv = (lambda a: float(a)) if obs.ndim == 0 else np.asarray
    return NullSummary(name, conv(obs), conv(mean), conv(sd), conv(lo), conv(hi), conv(greater),
                       conv(less), conv(np.minimum(1.0, 2 * np.minimum(greater, less))),
                       alternative, null.shape[0] if n_permutations is None else n_permutations,
                       failed, null)


def permutation_null(run, pipeline, *, n_permutations: int = 200, observed: dict | None = None,
                     random_state=0, n_jobs=1, progress: bool = True) -> NullResult:
    """Label-permutation null of every statistic of ``pipeline`` (module docstring).

    ``observed`` (name → value) defaults to one run of the pipeline on the unchanged run. The
    permuted runs go through ``pipeline.under_null()`` where the pipeline has one (the
    statistics as far as their nulls are read).
    """
    if n_permutations < 19:
        raise ValueError(f"n_permutations must be >= 19 (p can reach 0.05), got {n_permutations}")
    directions = dict(getattr(pipeline, "directions", {}) or {})
    bad = {k: v for k, v in directions.items() if v not in ALTERNATIVES}
    if bad:
        raise ValueError(f"pipeline.directions must use {ALTERNATIVES}, got {bad}")
    obs_root, perm_root = check_seed_sequence(random_state).spawn(2)
    if observed is None:
        observed = stack(run_replicates(run, pipeline, "identity", [obs_root]))[0]
        observed = {k: v[0] for k, v in observed.items()}
    under_null = getattr(pipeline, "under_null", None)
    null, errors = stack(run_replicates(run, under_null() if under_null else pipeline,
                                        "permutation",
                                        perm_root.spawn(n_permutations), n_jobs=n_jobs,
                                        progress="label permutations" if progress else None))
    out = {name: null_summary(observed[name], dist, directions.get(name, "greater"), name=name,
                              n_permutations=n_permutations)
           for name, dist in null.items() if name in observed}
    return NullResult(out, n_permutations, errors)


def null_corrected(estimate, null: NullSummary) -> dict:
    """Null-corrected value and interval of an :class:`~.bootstrap.Estimate` (module docstring)."""
    dist = estimate.distribution
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        centre = np.nanmean(dist, axis=0)
    lo, hi = percentile_interval(dist, estimate.confidence)
    value = np.asarray(estimate.value) - np.asarray(null.null_mean)
    conv = (lambda a: float(a)) if value.ndim == 0 else np.asarray
    return {"corrected": conv(value), "corrected_ci": (conv(value + lo - centre),
                                                       conv(value + hi - centre))}


@dataclass
class Inference:
    """A pipeline's two-level bootstrap and its label-permutation null, side by side."""

    bootstrap: Estimates
    null: NullResult | None

    def summary(self, name) -> dict:
        """Everything known about one statistic, inferential values first."""
        est = self.bootstrap[name]
        out = {"value": est.value, "ci": est.ci, "n_bootstrap": est.n_bootstrap,
               "mc_error": est.mc_error, "ci_mc": est.ci_mc}
        if self.null is not None and name in self.null:
            nul = self.null[name]
            out.update(null_mean=nul.null_mean, null_interval=(nul.null_low, nul.null_high),
                       p=nul.p, alternative=nul.alternative,
                       n_permutations=nul.n_permutations, **null_corrected(est, nul))
        return out

    def to_dict(self) -> dict:
        out = {"bootstrap": self.bootstrap.to_dict()}
        if self.null is not None:
            out["null"] = self.null.to_dict()
        return out


def infer(run, pipeline, *, n_bootstrap: int = 200, n_permutations: int = 200, n_mc: int = 10,
          confidence: float = 0.95, interval: str = "percentile", random_state=0, n_jobs=1,
          progress: bool = True) -> Inference:
    """:func:`two_level_bootstrap` and :func:`permutation_null` of one pipeline (observed =
    the bootstrap's point values); ``n_permutations=0`` skips the null."""
    boot_seed, null_seed = check_seed_sequence(random_state).spawn(2)
    boot = two_level_bootstrap(run, pipeline, n_bootstrap=n_bootstrap, n_mc=n_mc,
                               confidence=confidence, interval=interval,
                               random_state=boot_seed, n_jobs=n_jobs, progress=progress)
    null = None
    if n_permutations:
        observed = {k: e.value for k, e in boot.estimates.items()}
        null = permutation_null(run, pipeline, n_permutations=n_permutations, observed=observed,
                                random_state=null_seed, n_jobs=n_jobs, progress=progress)
    return Inference(boot, null)


def infer_points(run, pipeline, *, n_permutations: int = 200, n_mc: int = 10, random_state=0,
                 n_jobs=1, progress: bool = False) -> tuple[dict, dict | None]:
    """``(values, null)``: :func:`infer` without example resamples (``--inference 0``): the
    point values it reports with the same seeds (:func:`~.bootstrap.point_values`) and, when
    ``n_permutations``, the label-permutation null against them (None otherwise)."""
    boot_seed, null_seed = check_seed_sequence(random_state).spawn(2)
    values = point_values(run, pipeline, n_mc=n_mc, random_state=boot_seed, n_jobs=n_jobs,
                          progress=progress)
    null = (permutation_null(run, pipeline, n_permutations=n_permutations, observed=values,
                             random_state=null_seed, n_jobs=n_jobs, progress=progress)
            if n_permutations else None)
    return values, null
