"""Power of a test at the run's own scale: detection rates on surrogate controls.

:func:`surrogate_power` builds ``n_replicates`` surrogates of each kind from the run itself
(:mod:`infodiv.inference.surrogates`: conditionally independent members, planted XOR synergy,
shuffled labels), passes each through the same detector at the same n, and reports for each
test its detection rate with a Wilson 95% interval, so a negative verdict reads "not detected;
a matched case with the effect is detected with probability p".

A *detector* is ``detect(run, rng) -> {test name: bool}`` (for example
:func:`bootstrap_detector`, which runs the two-level bootstrap of a pipeline and applies
decision rules to its intervals). Surrogate r of kind k and its detector draw from the r-th
child of the kind's own ``SeedSequence`` branch.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from estimators.validation import check_seed_sequence

from ._api import (
    benjamini_hochberg,
    bootstrap_means,
    dr_example_differences,
    gain_slope,
    order_scores,
    parallel_map,
)
from .bootstrap import p_negative_normal, two_level_bootstrap
from .surrogates import SURROGATES, make_surrogate

__all__ = ["surrogate_power", "wilson_interval", "bootstrap_detector", "RULES",
           "FixedFitDetector"]


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


def _rule_upper_below_zero(est):
    return bool(np.all(np.asarray(est.ci[1]) < 0))


def _rule_lower_above_zero(est):
    return bool(np.all(np.asarray(est.ci[0]) > 0))


def _rule_any_bh_violation(est, alpha=0.05):
    p = p_negative_normal(est)
    return bool((benjamini_hochberg(p, alpha) & (np.asarray(est.value) < 0)).any())


#: decision rules on an Estimate: the name says what a True means
RULES = {"ci_below_zero": _rule_upper_below_zero, "ci_above_zero": _rule_lower_above_zero,
         "any_bh_violation": _rule_any_bh_violation}


class bootstrap_detector:  # noqa: N801 (used like a function factory)
    """Detector from a pipeline's two-level bootstrap and decision rules.

    ``tests`` maps a test name to ``(statistic name, rule name in RULES)``, e.g.
    ``{"diminishing_returns": ("gain_slope", "ci_below_zero"),
    "violations": ("dr_differences", "any_bh_violation")}``.
    """

    def __init__(self, pipeline, tests: dict, *, n_bootstrap: int = 100, n_mc: int = 2):
        unknown = {t: r for t, (_, r) in tests.items() if r not in RULES}
        if unknown:
            raise ValueError(f"unknown rules {unknown}; choose from {sorted(RULES)}")
        self.pipeline, self.tests = pipeline, dict(tests)
        self.n_bootstrap, self.n_mc = n_bootstrap, n_mc

    def __call__(self, run, rng) -> dict:
        boot = two_level_bootstrap(run, self.pipeline, n_bootstrap=self.n_bootstrap,
                                   n_mc=self.n_mc, random_state=rng, progress=False)
        return {name: RULES[rule](boot[stat]) for name, (stat, rule) in self.tests.items()}


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


class FixedFitDetector:
    """The verdicts' rules (:func:`~infodiv.inference.verdicts.decide`) on one surrogate, cheap.

    For a per-example set function the set function is fitted once per surrogate (calibration,
    cross-fitting split) and the examples are reweighted: the g(k) slope's interval is the
    two-level example bootstrap of :func:`infodiv.submodularity.gain_slope` over ``n_orders``
    fresh orders, each chain's difference gets the paired example bootstrap of its per-example
    differences (:func:`infodiv.submodularity.dr_example_differences`). Refitting per resample
    (the real run's interval) would cost B fits per surrogate. The reweighted se misses the
    fit's own variance (0.5–0.8 × the label-null sd per triple on SmolLM2 SST-2, calibrated
    cross-entropy), which made the earlier normal-theory violation rule fire in most
    shuffled-label surrogates; the verdicts' violation test
    (:func:`~infodiv.inference.verdicts.violation_test`) studentizes by max(se, null sd) and
    takes its reference from the joint label-null draws, and a surrogate's differences here
    are computed like a null draw's (one fit, one split), so with shuffled labels the shortcut
    is judged exactly as a null draw is.
    Otherwise (a set function with no per-example scores, e.g. kNN information) the
    refitting two-level bootstrap of ``pipeline`` with ``n_bootstrap_refit`` resamples is used.
    With ``pipeline.diversity`` the diversity regression's β and partial r get their shortcut
    intervals too (:func:`infodiv.claims.diversity_effect.quick`, from a stream
    spawned off the detector's, so the other statistics' draws do not depend on it). A
    surrogate is judged on every verdict, with ``by_kind`` only on those it informs
    (:meth:`tests_for`: its matched verdicts, or all on shuffled labels: the power run of
    :func:`~infodiv.inference.report.curve_inference`), and ``only="diversity"`` on the
    diversity effect alone (the same numbers as in a full run: adding its verdict to an
    existing report).
    Surrogates are judged against ``reference``, the real run's label-permutation null.
    """

    def __init__(self, pipeline, reference, *, n_bootstrap: int = 200,
                 n_bootstrap_refit: int = 30, alpha: float = 0.05, only: str | None = None,
                 by_kind: bool = False):
        if only not in (None, "diversity"):
            raise ValueError(f"only must be None or 'diversity', got {only!r}")
        self.pipeline, self.reference = pipeline, reference
        self.n_bootstrap, self.n_bootstrap_refit = int(n_bootstrap), int(n_bootstrap_refit)
        self.alpha, self.only, self.by_kind = alpha, only, bool(by_kind)

    def tests_for(self, run) -> tuple:
        """The verdicts judged on ``run``: all of them, or ``only``'s; with ``by_kind`` those
        the surrogate informs — the verdicts whose matched case it is (power), all on shuffled
        labels (false positives) or on a run that is no surrogate."""
        from .verdicts import MATCHED, TESTS

        if self.only:
            return ("diversity_effect",)
        kind = (run.meta.get("surrogate") or {}).get("kind")
        if not self.by_kind or kind in (None, "shuffled_labels"):
            return TESTS
        return tuple(t for t in TESTS if MATCHED[t][0] == kind)

    def statistics(self, run, rng) -> dict:
        """:func:`~infodiv.inference.verdicts.decide`'s input on ``run`` for the verdicts of
        :meth:`tests_for` (the diversity statistics from a stream spawned off ``rng``, so the
        others' draws do not depend on whether they are computed)."""
        import copy

        from .pipelines import DiversityPipeline
        from .verdicts import stats_from_bootstrap

        tests = self.tests_for(run)
        diversity = "diversity_effect" in tests and hasattr(run, "u")
        curve = any(t != "diversity_effect" for t in tests)
        pipe = self.pipeline
        f = pipe.set_function(run, rng)
        div_rng = rng.spawn(1)[0]
        if not f.per_example:
            interval = "centred" if pipe.objective.startswith("mi_") else "percentile"
            if not curve:   # same replicate seeds: the same β as the full pipeline's
                pipe = DiversityPipeline(pipe.objective, triples=pipe.triples(f.n_members),
                                         **pipe.objective_kwargs)
            elif pipe.diversity != diversity:
                pipe = copy.copy(pipe)
                pipe.diversity = diversity
            boot = two_level_bootstrap(run, pipe, n_bootstrap=self.n_bootstrap_refit, n_mc=2,
                                       interval=interval, random_state=rng, progress=False)
            return stats_from_bootstrap(boot)
        out = {}
        if curve:
            out.update(self._curve_statistics(pipe, f, rng))
        if diversity and pipe.diversity and pipe.triples(f.n_members):
            out.update(self._diversity_statistics(pipe, f, run, div_rng))
        return out

    def _diversity_statistics(self, pipe, f, run, rng) -> dict:
        """The diversity claim's one-fit shortcut (:func:`infodiv.claims.diversity_effect.
        quick`) on this fit and the pipeline's chains: ``{"diversity_partial_r": {value,
        ci}}``, ``{}`` when the regression is undefined."""
        from ..claims.diversity_effect import quick
        from .claim import Design, Replicate

        design = Design(pipe.objective, pipe.objective_kwargs,
                        triples=pipe.triples(f.n_members))
        stat = quick(Replicate.of_fit(run, design, f), rng, self.n_bootstrap)
        return {} if stat is None else {"diversity_partial_r": stat}

    def _curve_statistics(self, pipe, f, rng) -> dict:
        perms = [rng.permutation(f.n_members) for _ in range(pipe.n_orders)]
        samples = np.stack([order_scores(f, p) for p in perms])
        slope = gain_slope(samples, f.sign(), n_bootstrap=self.n_bootstrap, random_state=rng)
        out = {"gain_slope": {"value": slope["slope"], "ci": slope["ci"]}}
        triples = pipe.triples(f.n_members)
        if triples:
            d, _ = dr_example_differences(f, triples)
            boot = bootstrap_means(d, self.n_bootstrap, random_state=rng)
            mean = boot.mean(axis=1)
            out["dr_mean_difference"] = {"value": float(d.mean()),
                                         "ci": tuple(np.percentile(mean, [2.5, 97.5]))}
            out["dr_differences"] = {"value": d.mean(axis=0), "se": boot.std(axis=0, ddof=1)}
        return out

    def __call__(self, run, rng) -> dict:
        from .verdicts import decide

        verdicts = decide(self.statistics(run, rng), self.reference, self.alpha)
        return {t: verdicts[t] for t in self.tests_for(run)}
