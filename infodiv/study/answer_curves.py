"""The answer figure: layer-addition curves of the real members against their conditionally
independent control, each with a 95% example-bootstrap band (DESIGN.md 2.7, section 3).

For a run and an objective f (a set function of :func:`infodiv.setfunctions.make_set_function`)
the curve is the mean over R uniformly random orders π of f(π_1..k), k = 0..M. The control is
the same run with every member permuted independently within each class
(:func:`infodiv.inference.surrogates.conditionally_independent`): each member keeps its
class-conditional distribution, the dependence between members given Y is gone, so Theorem 7's
premise holds there. Both curves use the same R orders; the control is averaged over D
permutation draws.

The band: B class-stratified bootstrap resamples of the rows
(:func:`estimators.resampling.bootstrap_indices`). For a set function with per-example
scores (every objective but ``mi_knn``) each replicate reweights the per-example scores of
the mean curve, ``f̄_b(k) = Σ_i w_bi s̄_i(k) / n`` with ``w_b`` the resample's counts and
``s̄_i(k)`` example i's score averaged over the R orders (fits such as the calibration are not
redone: the band is conditional on them). The control's replicate also resamples its D draws
(two levels: examples, then permutation draws). An objective without per-example scores
(``mi_knn``) is refused: a band for it would resample rows and re-estimate, and repeated rows
bias kNN estimates upwards. The band is the 2.5–97.5% percentile interval of the replicates
(Efron & Tibshirani 1993, ch. 13); where the mean falls outside it, the band is extended to the
mean and the largest extension is reported (``widened``;
:func:`estimators.resampling.bootstrap_interval`, rounding within
:data:`infodiv.junctions.BAND_ULPS` not counted).

The reference line: for accuracy the majority-class rate, for cross-entropy the entropy H(Y)
of the class frequencies (the loss of always predicting them, bits), for the Brier score
1 − Σ_c p_c², for information about the label 0 bits.
"""

from __future__ import annotations

import numpy as np

from estimators.resampling import bootstrap_indices, bootstrap_interval

from ..curves import order_scores
from ..inference.surrogates import conditionally_independent
from ..junctions import BAND_ULPS
from ..setfunctions import make_set_function

__all__ = ["answer_curves", "reference_level"]


def reference_level(labels, objective: str, n_options: int | None = None) -> dict:
    """The level of a predictor that knows only the class frequencies p_c (module docstring).

    Returns ``{"value", "label", "units"}``: accuracy max_c p_c ("majority class"),
    cross-entropy H(Y) = −Σ p_c log2 p_c bits ("class frequencies"), Brier 1 − Σ p_c²,
    information 0 bits ("no information about the label").
    """
    y = np.asarray(labels)
    p = np.bincount(y, minlength=n_options or 0) / y.size
    p = p[p > 0]
    base = objective.removesuffix("_calibrated")
    if base == "accuracy":
        return {"value": float(p.max()), "label": "majority class", "units": "fraction"}
    if base == "cross_entropy":
        return {"value": float(-(p * np.log2(p)).sum()), "label": "class frequencies (H(Y))",
                "units": "bits"}
    if base == "brier":
        return {"value": float(1 - (p * p).sum()), "label": "class frequencies", "units": ""}
    if objective.startswith("mi_"):
        return {"value": 0.0, "label": "no information about the label", "units": "bits"}
    raise ValueError(f"objective {objective!r} has no reference level; expected a readout "
                     "(accuracy, cross_entropy, brier[_calibrated]) or an mi_* objective")


def _mean_scores(f, orders) -> np.ndarray:
    """Per-example scores ``[M+1, n]`` averaged over ``orders``."""
    total = np.zeros((f.n_members + 1, f.n_examples))
    for order in orders:
        total += order_scores(f, order)
    return total / len(orders)


def _curve(mean, lo, hi, widened) -> dict:
    return {"mean": mean.tolist(), "ci_low": lo.tolist(), "ci_high": hi.tolist(),
            "widened": widened}


def _per_example_reps(real, controls, counts, rng):
    """Replicates ``[B, M+1]`` of the real and the control mean curves by reweighting."""
    n = real.shape[1]
    rep_real = counts @ real.T / n
    per_draw = np.einsum("bn,dkn->bdk", counts, controls) / n
    draws = rng.integers(0, len(controls), size=(counts.shape[0], len(controls)))
    rep_ctrl = np.take_along_axis(per_draw, draws[:, :, None], axis=1).mean(axis=1)
    return rep_real, rep_ctrl


def answer_curves(run, objective: str = "accuracy", *, n_orders: int = 50,
                  n_controls: int = 5, n_bootstrap: int = 200, confidence: float = 0.95,
                  random_state=0, split_state=None, **options) -> dict:
    """Mean random-order curves of the real members and of their conditionally independent
    control, each with its example-bootstrap band (module docstring).

    Parameters
    ----------
    run : Contributions
    objective : str
        A registered objective (:data:`infodiv.setfunctions.OBJECTIVE_NAMES`).
    n_orders : int, default 50
        R random orders, shared by the real members and every control draw.
    n_controls : int, default 5
        D independent within-class permutation draws of the control.
    n_bootstrap : int, default 200
        B example resamples (class-stratified) for the bands.
    confidence : float, default 0.95
    random_state : int, default 0
        Seeds the orders, the control draws and the resamples (one spawned stream each).
    split_state : int or None
        The set function's own ``random_state`` (a calibrated readout's cross-fitting split);
        None: ``random_state``. Give the split of the curves the figure stands beside, so that
        the figure's f(all) is the curves' f(all) (one value per quantity).
    **options
        Passed to :func:`~infodiv.setfunctions.make_set_function` (e.g. ``base``, ``k``).

    Returns
    -------
    dict
        JSON-ready: ``k`` (0..M), ``real`` and ``control`` (``mean``, ``ci_low``, ``ci_high``
        lists over k, ``widened``), ``reference`` (:func:`reference_level`), ``objective``,
        ``units``, ``greater_is_better``, sizes (``n_examples``, ``n_members``, ``n_orders``,
        ``n_controls``, ``n_bootstrap``), ``confidence`` and ``band`` (how it was computed).
    """
    for name, value, least in (("n_orders", n_orders, 1), ("n_controls", n_controls, 1),
                               ("n_bootstrap", n_bootstrap, 20)):
        if not isinstance(value, (int, np.integer)) or value < least:
            raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    seeds = np.random.SeedSequence(random_state).spawn(3)
    orders_rng, control_seeds, boot_rng = (np.random.default_rng(seeds[0]),
                                           seeds[1].spawn(n_controls),
                                           np.random.default_rng(seeds[2]))
    options["random_state"] = random_state if split_state is None else split_state
    reference = reference_level(run.labels, objective, run.u.shape[2])
    f = make_set_function(run, objective, **options)
    if not f.per_example:
        raise ValueError(f"objective {objective!r} has no per-example scores, so its band "
                         "would need rows resampled and re-estimated, which biases kNN "
                         "estimates upwards (repeated rows are nearest neighbours); use a "
                         "readout, mi_usable, mi_gaussian or mi_copula")
    m = f.n_members
    orders = [orders_rng.permutation(m) for _ in range(n_orders)]
    fcs = [make_set_function(conditionally_independent(run, random_state=s), objective,
                             **options) for s in control_seeds]
    real = _mean_scores(f, orders)
    controls = np.stack([_mean_scores(fc, orders) for fc in fcs])
    mean_real, mean_ctrl = real.mean(axis=1), controls.mean(axis=(0, 2))
    y = np.asarray(run.labels)
    counts = np.stack([np.bincount(bootstrap_indices(y.size, boot_rng, strata=y),
                                   minlength=f.n_examples) for _ in range(n_bootstrap)])
    reps = _per_example_reps(real, controls, counts.astype(np.float64), boot_rng)
    band = ("example bootstrap (class-stratified rows resampled, per-example scores "
            "reweighted, fits kept; the control also over its permutation draws), percentile")
    return {"objective": objective, "units": f.units,
            "greater_is_better": bool(f.greater_is_better), "k": list(range(m + 1)),
            "real": _curve(mean_real, *bootstrap_interval(
                mean_real, reps[0], confidence=confidence, ulps=BAND_ULPS)),
            "control": _curve(mean_ctrl, *bootstrap_interval(
                mean_ctrl, reps[1], confidence=confidence, ulps=BAND_ULPS)),
            "reference": reference,
            "n_examples": int(f.n_examples), "n_members": int(m), "n_orders": int(n_orders),
            "n_controls": int(n_controls), "n_bootstrap": int(n_bootstrap),
            "confidence": float(confidence), "band": band,
            "control_description": "each member permuted independently within its class "
                                   "(Theorem 7's premise made true)"}
