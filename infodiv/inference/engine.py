"""The inference engine: any :class:`~infodiv.inference.claim.Claim` into a verdict record.

In the spirit of :func:`scipy.stats.bootstrap` and :func:`scipy.stats.permutation_test` the
statistic is a callable (the claim's, of one :class:`~infodiv.inference.claim.Replicate`);
:func:`evaluate` runs, for all the claims given (one fit per replicate, shared):

- the example bootstrap with everything refitted: B class-stratified resamples of the rows,
  the set function refitted on each (calibration, covariances, cross-fitting split) and fresh
  random orders drawn inside each (two-level where orders are random); the estimate is the
  mean of ``n_mc`` reruns on the unchanged rows, whose spread is the Monte-Carlo error of the
  orders (labelled so, never mixed with the interval);
- the interval: the percentile interval of the B replicates (Efron & Tibshirani 1993,
  ch. 13), or for objectives that duplicated rows bias (``mi_*``: at D = 61, n = 872 a
  resampled Gaussian I(U;Y) is ~2 bits above the estimate) the same interval shifted by the
  bootstrap bias, ``θ̂ + (q_lo − mean_b, q_hi − mean_b)``. Where the estimate still falls
  outside it (the replicates' bulk misses the point of the same pipeline), the interval is
  extended to the estimate and flagged ``interval_widened`` with the gap: every interval
  contains its estimate, and widening can only make a detection harder;
- the label-permutation null: labels shuffled (class counts kept) and the whole pipeline rerun
  K times; null mean, 2.5–97.5% range, p = (1 + #{null at least as extreme in the claim's
  direction}) / (1 + K) (never 0), the null-corrected value θ̂ − m₀ with the same re-centred
  spread (a claim whose rule reads only part of its null computes only that part there:
  ``Claim.null_statistic``);
- the verdict: the three-part rule (interval and null-corrected interval beyond 0 on the
  claim's side, p < α) or the claim's own rule for a vector statistic; the same rule on the
  other side (*opposite*), and the conclusion — holds, opposite, absent within the claim's
  margin δ, inconclusive with the n that would decide, or untestable
  (:mod:`~infodiv.inference.outcome`);
- power: ``n_power`` surrogates of the claim's matched kind built from the run
  (:mod:`~infodiv.inference.surrogates`), each judged by the same rule against the real
  run's null, with the claim's one-fit shortcut interval (``Claim.quick``) or a refitted
  bootstrap of ``n_power_bootstrap`` resamples; detection rate with a Wilson interval; the
  same on shuffled-label surrogates is the false-positive rate, and a rule that fires there
  beyond α (Wilson lower bound > α) is not calibrated, so its detection is no finding;
- flags as data (failed replicates, no test).

Every replicate draws from its own child of ``numpy.random.SeedSequence(random_state)``
(:mod:`~infodiv.inference.replicates`), chunked so that results do not depend on ``n_jobs``
(joblib workers).
"""

from __future__ import annotations

import time

import numpy as np
from threadpoolctl import threadpool_limits

from estimators.resampling import bootstrap_interval
from estimators.validation import check_seed_sequence

from .claim import Claim, Design, Replicate
from .flags import Flag, check_failures
from .nulls import infer, null_summary
from .outcome import decide_outcome
from .power import surrogate_power
from .record import VerdictRecord
from .replicates import run_replicates, stack
from .verdicts import is_calibrated, scalar_verdict, three_part_rule

__all__ = ["evaluate", "ClaimStatistics", "bootstrap_interval", "detect", "INTERVAL_METHODS"]

INTERVAL_METHODS = {"percentile": "example bootstrap, everything refitted, percentile",
                    "centred": "example bootstrap, everything refitted, percentile shifted by "
                               "the bootstrap bias",
                    "normal": "estimate ± 1.96 example-bootstrap standard errors (a claim's own "
                              "rule with an interval of its estimate)"}


class ClaimStatistics:
    """``pipeline(run, rng) -> {claim name: statistic}``: one :class:`Replicate` (one fit)
    shared by all ``claims`` (:mod:`~infodiv.inference.replicates`' pipeline protocol);
    ``null``: each claim's ``null_statistic`` where it has one (:meth:`under_null`)."""

    def __init__(self, claims, design: Design, null: bool = False):
        self.claims, self.design, self.null = tuple(claims), design, null
        self.directions = {c.name: c.direction for c in self.claims}

    def under_null(self) -> ClaimStatistics:
        """The pipeline of the label-permutation replicates
        (:func:`~infodiv.inference.nulls.permutation_null`)."""
        return ClaimStatistics(self.claims, self.design, null=True)

    def __call__(self, run, rng) -> dict:
        rep = Replicate(run, self.design, rng)
        return {c.name: (c.null_statistic if self.null and c.null_statistic is not None
                         else c.statistic)(rep) for c in self.claims}


def detect(claim: Claim, stat: dict | None, null, alpha: float) -> bool:
    """The claim's rule on ``stat`` ({value, ci} or {value, se}) against the real run's
    null draws ``null``."""
    if claim.decide is not None:
        if stat is None or null is None:
            return False
        return bool(claim.decide(stat["value"], stat.get("se"), null, alpha)[0])
    return scalar_verdict(stat, null, claim.direction, alpha)


class _Detector:
    """Power detector: each claim's rule on one surrogate, judged against the real run's null.

    The surrogate's kind picks the claims it informs (their matched kind; every claim on
    shuffled labels). Per claim: the one-fit shortcut ``quick`` when the set function has
    per-example scores, else the refitted bootstrap of ``n_refit`` resamples."""

    def __init__(self, claims, design, nulls, alpha, n_bootstrap, n_refit):
        self.claims, self.design, self.nulls = tuple(claims), design, nulls
        self.alpha, self.n_bootstrap, self.n_refit = alpha, n_bootstrap, n_refit

    def claims_for(self, run) -> tuple:
        kind = (run.meta.get("surrogate") or {}).get("kind")
        if kind in (None, "shuffled_labels"):
            return self.claims
        return tuple(c for c in self.claims if c.surrogate == kind)

    def statistics(self, run, rng) -> dict:
        claims = self.claims_for(run)
        rep = Replicate(run, self.design, rng)
        out, slow = {}, []
        for c in claims:
            if c.quick is not None and rep.f.per_example:
                out[c.name] = c.quick(rep, rng.spawn(1)[0], self.n_bootstrap)
            else:
                slow.append(c)
        if slow:
            pipe = ClaimStatistics(slow, self.design)
            res = infer(run, pipe, n_bootstrap=self.n_refit, n_permutations=0, n_mc=2,
                        random_state=rng, progress=False)
            for c in slow:
                e = res.bootstrap[c.name]
                out[c.name] = {"value": e.value, "se": e.se}
                if np.ndim(e.value) == 0:
                    lo, hi, _ = bootstrap_interval(e.value, e.distribution,
                                                   self.design.interval)
                    out[c.name]["ci"] = (lo, hi)
        return out

    def __call__(self, run, rng) -> dict:
        stats = self.statistics(run, rng)
        return {c.name: detect(c, stats.get(c.name), self.nulls.get(c.name), self.alpha)
                for c in self.claims_for(run)}


def _power(run, claims, design, nulls, *, alpha, n_power, n_power_bootstrap, n_bootstrap,
           random_state, n_jobs, progress) -> dict:
    kinds = [k for k in dict.fromkeys([c.surrogate for c in claims] + ["shuffled_labels"])]
    kwargs = {}
    for c in claims:
        if c.surrogate_kwargs is not None:
            kwargs.setdefault(c.surrogate, {}).update(c.surrogate_kwargs(run, design))
    det = _Detector(claims, design, nulls, alpha, n_bootstrap, n_power_bootstrap)
    return surrogate_power(run, det, kinds=kinds, n_replicates=n_power, surrogate_kwargs=kwargs,
                           random_state=random_state, n_jobs=n_jobs, progress=progress)


def _record(claim, est, null_dist, power, *, run, design, alpha, n_permutations, failed,
            n_power_bootstrap=0, units="", total_gain=None, untestable=None):
    value = est.value
    flags = check_failures(failed, est.n_bootstrap + n_permutations + est.n_mc,
                           f"{claim.name} replicates")
    null_mean = corrected = p = p_opposite = None
    null_iv = corrected_iv = None
    opposite = False
    extra = {}
    if claim.decide is not None:   # vector statistic: the claim's own test summarises it
        se = est.se
        hit, summary = claim.decide(value, se, null_dist, alpha)
        estimate, interval, p = summary["estimate"], summary.get("interval"), summary.get("p")
        extra = summary.get("extra", {})
        stat_doc = {"value": value, "se": se}
    else:
        lo, hi, gap = bootstrap_interval(value, est.distribution, design.interval)
        estimate, interval = float(value), [lo, hi]
        stat_doc = {"value": estimate, "ci": (lo, hi)}
        if gap > 0:
            flags.append(Flag("interval_widened", claim.name,
                              f"{claim.name}: the estimate lay {gap:.3g} outside the bootstrap "
                              "interval (the replicates' bulk is shifted from the point by the "
                              "refit on duplicated rows); the interval is extended to it",
                              gap, 0.0))
        summary = null_summary(estimate, null_dist, claim.direction)
        null_mean, p = summary.null_mean, summary.p
        null_iv = [summary.null_low, summary.null_high]
        corrected = estimate - null_mean
        corrected_iv = [lo - null_mean, hi - null_mean]   # the rule's null-corrected interval
        hit = three_part_rule(interval, null_mean, p, claim.direction, alpha)
        other = "greater" if claim.direction == "less" else "less"
        p_opposite = null_summary(estimate, null_dist, other).p
        opposite = three_part_rule(interval, null_mean, p_opposite, other, alpha)
    pw = (power or {}).get(claim.surrogate, {}).get(claim.name)
    fp = (power or {}).get("shuffled_labels", {}).get(claim.name)
    calibrated = is_calibrated(fp, alpha)
    delta = claim.margin.value(total_gain, run.n_members) if claim.margin else None
    concl = decide_outcome(direction=claim.direction, detected=bool(hit), opposite=opposite,
                           calibrated=calibrated, interval=interval,
                           corrected_interval=corrected_iv, margin=delta, n=run.n_examples,
                           alpha=alpha, untestable=untestable,
                           report_only=bool(extra.get("report_only")))
    rec = VerdictRecord(
        claim=claim.name, theorem=claim.theorem, statistic=claim.statistic_name,
        objective=design.objective, direction=claim.direction, estimate=estimate,
        interval=interval, units=claim.units.format(units=units or "units of the objective"),
        interval_method=(INTERVAL_METHODS[design.interval] if claim.decide is None else
                         INTERVAL_METHODS["normal"] if interval else
                         claim.rule.format(alpha=alpha)),
        mc_error=None if np.ndim(est.mc_error) else float(est.mc_error),
        null_mean=null_mean, null_interval=null_iv, corrected=corrected,
        corrected_interval=corrected_iv, p=p, detected=bool(hit), calibrated=calibrated,
        finding=bool(hit) and calibrated, rule=claim.rule.format(alpha=alpha),
        matched_case=claim.matched_case,
        power=_rate(pw), false_positive=_rate(fp),
        n_bootstrap=est.n_bootstrap, n_permutations=n_permutations,
        n_examples=run.n_examples, n_members=run.n_members, n_mc=est.n_mc,
        n_power_bootstrap=n_power_bootstrap if power else 0, n_orders=design.n_orders,
        alpha=alpha, sentence=claim.sentence, extra=extra,
        outcome=concl["outcome"], outcome_reason=concl["reason"], opposite=bool(opposite),
        p_opposite=p_opposite,
        margin=None if claim.margin is None else {**claim.margin.to_dict(), "value": delta,
                                                  "total_gain": total_gain},
        mde=concl["mde"], n_needed=concl["n_needed"])
    if rec.no_test:
        rate = rec.power["rate"]
        flags.append(Flag("no_test", claim.name, f"{claim.name}: not detected with power "
                          f"{rate:.2f} on {claim.matched_case}: no test", rate, 0.5))
    if not calibrated:
        flags.append(Flag("not_calibrated", claim.name, f"{claim.name}: fires on shuffled "
                          f"labels with probability {rec.false_positive['rate']:.2f} > "
                          f"{alpha}", rec.false_positive["rate"], alpha))
    rec.flags = [f.to_dict() for f in flags]
    rec.extra["statistic"] = _jsonable(stat_doc)
    rec.check()
    return rec


def _objective_units(run, design) -> str:
    """The units of the design's objective (its set function built, not fitted)."""
    from ..setfunctions import make_set_function

    try:
        return make_set_function(run, design.objective, **design.objective_kwargs).units
    except (TypeError, ValueError):
        return ""


def _total_gain(run, design, seed) -> float | None:
    """Δ = sign·(f(all) − f(∅)) of the design's objective on ``run`` (one fit): the scale of
    the claims' relative margins (:class:`~infodiv.inference.outcome.Margin`)."""
    from ..setfunctions import make_set_function

    try:
        f = make_set_function(run, design.objective, random_state=seed, **design.objective_kwargs)
        every = np.arange(run.n_members)
        gain = f.sign() * (f.value(every) - f.value(every[:0]))
    except (TypeError, ValueError):
        return None
    return float(gain) if np.isfinite(gain) else None


def _rate(cell) -> dict | None:
    """A detection rate of :func:`~infodiv.inference.power.surrogate_power` as plain data."""
    if cell is None:
        return None
    return {"rate": float(cell["rate"]), "n_detected": int(cell["n_detected"]),
            "n": int(cell["n"]), "ci": [float(c) for c in cell["ci"]]}


def _jsonable(doc):
    return {k: (np.asarray(v).tolist() if isinstance(v, (np.ndarray, np.generic, tuple)) else v)
            for k, v in doc.items()}


def evaluate(run, claims, design: Design | None = None, *, n_bootstrap: int = 200,
             n_permutations: int = 200, n_mc: int = 10, n_power: int = 20,
             n_power_bootstrap: int | None = None, alpha: float = 0.05, random_state=0,
             n_jobs=1, progress: bool = False, untestable: str | None = None) -> dict:
    """Verdict records of ``claims`` on ``run`` (module docstring).

    Parameters
    ----------
    run : Contributions
    claims : sequence of :class:`~infodiv.inference.claim.Claim` (``infodiv.claims.CLAIMS``)
    design : :class:`~infodiv.inference.claim.Design` (objective, orders, chains)
    n_bootstrap : B example resamples (>= 20)
    n_permutations : K label permutations (1/(1 + K) < alpha, so that p can fall below alpha)
    n_mc : reruns on the unchanged rows (estimate and Monte-Carlo error, >= 2)
    n_power : surrogates of each kind (0 skips the power and the calibration check)
    n_power_bootstrap : resamples of each power surrogate's bootstrap for claims without a
        one-fit shortcut (refitted); None: B. Claims with a shortcut resample B times.
    alpha : level of every rule
    random_state : int or SeedSequence: the call's stream. Its children 0 and 1 are the
        bootstrap's and the null's (:func:`~infodiv.inference.nulls.infer`), child 2 the
        power's (:func:`~infodiv.inference.power.surrogate_power`), each spawning one child
        per replicate: no two replicates of one call draw the same numbers; child 3 seeds the
        one fit that gives the margins their scale Δ
    n_jobs : joblib workers (results do not depend on it)
    untestable : why the run cannot test these claims on this objective
        (:func:`~infodiv.inference.testability.untestable_reason`); a reason makes every
        record's outcome *untestable* with it

    Returns
    -------
    ``{"records": {claim name: VerdictRecord}, "cpu_s": {...}, "n_failed": int}``

    Notes
    -----
    BLAS runs on one thread inside (``threadpoolctl``): the statistics solve many small
    systems, where threads cost more than they give; parallelism is ``n_jobs``' (replicates).
    """
    claims = tuple(claims)
    if not claims:
        raise ValueError("claims is empty")
    design = design or Design()
    if 1 / (1 + n_permutations) >= alpha:   # the smallest p must lie below alpha
        least = int(np.floor(1 / alpha))
        raise ValueError(f"n_permutations must be >= {least} for a label-null p below "
                         f"alpha = {alpha} (the smallest p is 1/(1 + K)), got {n_permutations}")
    if n_power < 0:
        raise ValueError(f"n_power must be >= 0, got {n_power}")
    for c in claims:
        reason = c.applies(run, design) if c.applies is not None else None
        if reason:
            raise ValueError(f"claim {c.name!r} cannot be tested on this run: {reason}")
    with threadpool_limits(limits=1, user_api="blas"):
        return _evaluate(run, claims, design, n_bootstrap=n_bootstrap,
                         n_permutations=n_permutations, n_mc=n_mc, n_power=n_power,
                         n_power_bootstrap=n_power_bootstrap, alpha=alpha,
                         random_state=random_state, n_jobs=n_jobs, progress=progress,
                         untestable=untestable)


def _evaluate(run, claims, design, *, n_bootstrap, n_permutations, n_mc, n_power,
              n_power_bootstrap, alpha, random_state, n_jobs, progress, untestable) -> dict:
    c0 = time.process_time()
    pipe = ClaimStatistics(claims, design)
    root = check_seed_sequence(random_state)
    fresh = np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key)   # children 0, 1
    res = infer(run, pipe, n_bootstrap=n_bootstrap, n_permutations=n_permutations, n_mc=n_mc,
                random_state=fresh, n_jobs=n_jobs, progress=progress)
    nulls = {c.name: np.asarray(res.null[c.name].distribution) for c in claims}
    c1 = time.process_time()
    power = None
    if n_power:
        power_seed = np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key + (2,))
        power = _power(run, claims, design, nulls, alpha=alpha, n_power=n_power,
                       n_power_bootstrap=n_power_bootstrap or n_bootstrap,
                       n_bootstrap=n_bootstrap, random_state=power_seed, n_jobs=n_jobs,
                       progress=progress)
    failed = len(res.bootstrap.errors) + len(res.null.errors)
    units = _objective_units(run, design)
    scale_seed = int(np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key + (3,))
                     .generate_state(1)[0])
    total_gain = _total_gain(run, design, scale_seed) if any(c.margin for c in claims) else None
    records = {c.name: _record(c, res.bootstrap[c.name], nulls[c.name], power, run=run,
                               design=design, alpha=alpha, n_permutations=n_permutations,
                               failed=failed, n_power_bootstrap=n_power_bootstrap or n_bootstrap,
                               units=units, total_gain=total_gain, untestable=untestable)
               for c in claims}
    return {"records": records, "n_failed": failed,
            "cpu_s": {"inference": c1 - c0, "power": time.process_time() - c1}}


def replicate_statistics(run, claims, design: Design, seeds, kind: str = "identity") -> dict:
    """The claims' statistics on one copy of ``run`` per seed (``kind`` as in
    :func:`~infodiv.inference.replicates.run_replicates`): ``{claim: [R, ...]}``."""
    out, _ = stack(run_replicates(run, ClaimStatistics(claims, design), kind, seeds))
    return out
