"""The paper's information quantities on members (Theorem 4, Eq. 12–13; DESIGN.md 2.5).

The one home of these formulas in ``infodiv``; the decomposition report, the curves report and
the information set functions all call it, and every estimate comes from ``estimators``.

- Member variables: the paper's ``U_m`` is the member's whole vector of C option logits
  (:func:`valid_terms`); the *centred* variant (:func:`member_variables`, ``centre=True``)
  projects it on the orthonormal Helmert basis of the sum-zero subspace
  (:func:`scipy.linalg.helmert`): C − 1 dimensions, no singular covariance, but it drops the
  common-mode logit, which can carry label information, so it is a different quantity.
- :func:`valid_terms`: ``I(U;Y)``, relevancy and diversity by the package default
  (:func:`estimators.information_decomposition`: cross-fitted usable information with its
  bracket, never above H(Y)) and the Eq. 12 bounds evaluated at the ends of the bracket.
- ``H(Y)``: plug-in label entropy (:func:`estimators.entropy` of the integer labels).
- Eq. 12 (Zhou & Li 2010; paper Theorem 4), in bits:
  ``(H(Y) − I − 1) / log2|Y| ≤ P(error) ≤ (H(Y) − I) / 2`` (:func:`error_bounds`).
- Eq. 13: ``I(U_S; Y) = relevancy + diversity`` with relevancy ``Σ_m I(U_m; Y)``, redundancy
  ``TC(U_S)``, conditional redundancy ``TC(U_S | Y)`` and diversity ``TC(U_S|Y) − TC(U_S)``,
  each estimated on its own by :func:`estimators.information_decomposition` (the residual is a
  consistency check), for one set (:func:`set_terms`) or along an order (:func:`order_terms`,
  with the monotonicity counts of Theorems 5–6 and the Theorem 7 premise ratio
  ``TC(U_S|Y) / TC(U_S)``, which is 0 when the members are conditionally independent).
- Theorems 5–6 on a nested chain (:func:`prefix_information`): the valid ``I(U_S;Y)`` of the
  depth-order prefixes, each member's relevancy added along the chain, ``D`` by the identity,
  and the steps of ``I`` against the non-decrease the chain rule proves.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import helmert

from estimators import entropy, information_decomposition

__all__ = ["helmert_basis", "member_variables", "label_entropy", "error_bounds",
           "bracket_error_bounds", "TERMS",
           "set_terms", "valid_terms", "order_terms", "monotonicity", "premise_ratio",
           "prefix_sizes", "prefix_information"]

#: the Eq. 13 terms, as named by :class:`estimators.InformationDecomposition`
TERMS = ("joint", "relevancy", "redundancy", "conditional_redundancy", "diversity", "residual")
#: the direction Theorems 5 and 6 claim for each series (+1 non-decreasing, −1 non-increasing,
#: 0 no claim)
CLAIMED = (("relevancy", 1), ("redundancy", 1), ("conditional_redundancy", 1), ("joint", 1),
           ("diversity", 0), ("bound_lower", -1), ("bound_upper", -1))


def helmert_basis(n_options: int) -> np.ndarray:
    """Orthonormal basis ``[C, C−1]`` of the sum-zero subspace of R^C (Helmert contrasts)."""
    if n_options < 2:
        raise ValueError(f"need at least 2 options to centre, got {n_options}")
    return helmert(n_options, full=False).T


def member_variables(u, *, centre: bool = True) -> np.ndarray:
    """Member variables ``[N, M, d]`` (float64) from contributions ``u`` ``[N, M, C]``.

    ``centre=True`` projects each member's C logits on :func:`helmert_basis` (d = C − 1).
    """
    u = np.asarray(u, dtype=np.float64)
    if u.ndim != 3:
        raise ValueError(f"u must be [N, M, C], got shape {u.shape}")
    return u @ helmert_basis(u.shape[2]) if centre else u


def label_entropy(labels, base=2) -> float:
    """Plug-in ``H(Y)`` of integer labels (units of ``base``, bits by default)."""
    return float(entropy(np.asarray(labels), base=base, random_state=0))


def error_bounds(mi, h_y, n_classes):
    """Eq. 12 (Zhou & Li 2010; paper Theorem 4) in bits: ``(lower, upper)``.

    ``(H(Y) − I − 1) / log2|Y| ≤ P(error) ≤ (H(Y) − I) / 2``; ``mi`` and ``h_y`` in bits,
    ``mi`` a number or an array (one bound per entry).
    """
    if n_classes < 2:
        raise ValueError(f"n_classes must be >= 2, got {n_classes}")
    gap = h_y - np.asarray(mi, dtype=np.float64)
    return (gap - 1.0) / np.log2(n_classes), gap / 2.0


def bracket_error_bounds(mi_lower, mi_upper, h_y, n_classes) -> tuple[float, float]:
    """Eq. 12 bounds that hold whenever ``mi_lower ≤ I ≤ mi_upper`` (bits).

    Both bounds of :func:`error_bounds` fall as ``I`` grows, so the lower error bound is taken
    at the upper end of the bracket and the upper error bound at its lower end; the lower bound
    is clipped at 0 (an error rate).
    """
    lower = error_bounds(mi_upper, h_y, n_classes)[0]
    upper = error_bounds(mi_lower, h_y, n_classes)[1]
    return float(max(lower, 0.0)), float(upper)


def _n_classes(labels, n_classes):
    return int(labels.max()) + 1 if n_classes is None else int(n_classes)


def set_terms(x, labels, *, n_classes=None, method="gaussian", random_state=0,
              **options) -> dict:
    """Eq. 13 terms (bits) of all members of ``x`` ``[N, M, d]`` with H(Y) and Eq. 12 bounds.

    ``n_classes`` is |Y| of Eq. 12 (the number of options; default ``max(labels) + 1``).

    Returns the :class:`estimators.InformationDecomposition` fields plus ``h_y``,
    ``error_lower_bound`` and ``error_upper_bound``.
    """
    labels = np.asarray(labels)
    dec = information_decomposition(x, labels, method=method, random_state=random_state,
                                    **options)
    h_y = label_entropy(labels)
    lower, upper = error_bounds(dec.joint, h_y, _n_classes(labels, n_classes))
    return {**dec.to_dict(), "h_y": h_y, "error_lower_bound": float(lower),
            "error_upper_bound": float(upper)}


def valid_terms(u, labels, *, bias=None, n_classes=None, random_state=0, **options) -> dict:
    """Valid Eq. 13 terms (bits) of the whole member vectors ``u`` ``[N, M, C]``.

    :func:`estimators.information_decomposition` with its default method (``options`` go to
    it), plus Eq. 12 bounds on the Bayes error given U from the bracket
    ``[joint_lower, joint_upper]`` (:func:`bracket_error_bounds`).
    """
    labels = np.asarray(labels)
    dec = information_decomposition(u, labels, bias=bias, random_state=random_state, **options)
    lower, upper = bracket_error_bounds(dec.joint_lower, dec.joint_upper, dec.h_y,
                                        _n_classes(labels, n_classes))
    return {**dec.to_dict(), "error_lower_bound": lower, "error_upper_bound": upper}


def monotonicity(series: dict) -> dict:
    """Steps of each series against the direction Theorems 5–6 claim (:data:`CLAIMED`)."""
    out = {}
    for key, direction in CLAIMED:
        steps = np.diff(np.asarray(series[key], dtype=np.float64))
        entry = {"n_steps": int(steps.size), "n_increases": int((steps > 0).sum()),
                 "n_decreases": int((steps < 0).sum())}
        if direction:
            wrong = -direction * steps
            entry.update(expected="non-decreasing" if direction > 0 else "non-increasing",
                         n_against=int((wrong > 0).sum()),
                         max_against=float(wrong.max(initial=0.0)))
        else:
            entry["expected"] = "no monotonicity claimed (Theorem 5: diversity can fall)"
        out[key] = entry
    return out


def premise_ratio(conditional_redundancy, redundancy) -> np.ndarray:
    """Theorem 7's premise as a ratio ``TC(U_S|Y) / TC(U_S)`` (NaN where TC(U_S) = 0).

    The premise (members conditionally independent given Y) means a ratio near 0; a ratio near
    1 says the members are as dependent given the label as without it.
    """
    cond = np.asarray(conditional_redundancy, dtype=np.float64)
    tc = np.asarray(redundancy, dtype=np.float64)
    return cond / np.where(tc != 0, tc, np.nan)


def order_terms(x, labels, order, sizes, *, n_classes=None, method="gaussian",
                random_state=0, **options) -> dict:
    """Eq. 13 terms of ``U_{order[:k]}`` for every k in ``sizes`` (k ≥ 1), in bits.

    Parameters
    ----------
    x : array ``[N, M, d]``
        Member variables (:func:`member_variables`).
    labels : int array ``[N]``
    order : int array
        Member order (depth prefix, greedy, ...).
    sizes : iterable of int
        Set sizes to evaluate.
    n_classes : int, optional
        |Y| of Eq. 12 (the number of options; default ``max(labels) + 1``).
    method, random_state, **options
        As in :func:`estimators.information_decomposition`.

    Returns
    -------
    dict with ``sizes``, ``method``, ``h_y``, one array per term of :data:`TERMS`, the Eq. 12
    ``bound_lower`` / ``bound_upper``, ``monotonicity`` (:func:`monotonicity`) and
    ``premise_tc_given_y_over_tc`` (:func:`premise_ratio`).
    """
    labels = np.asarray(labels)
    order = np.asarray(order)
    sizes = [int(s) for s in sizes if s >= 1]
    series = {k: [] for k in TERMS}
    for s in sizes:
        dec = information_decomposition(x[:, order[:s], :], labels, method=method,
                                        random_state=random_state, **options)
        for k in TERMS:
            series[k].append(getattr(dec, k))
    h_y = label_entropy(labels)
    out = {"sizes": sizes, "method": method, "h_y": h_y,
           **{k: np.asarray(v) for k, v in series.items()}}
    out["bound_lower"], out["bound_upper"] = error_bounds(out["joint"], h_y,
                                                          _n_classes(labels, n_classes))
    out["monotonicity"] = monotonicity(out)
    out["premise_tc_given_y_over_tc"] = premise_ratio(out["conditional_redundancy"],
                                                      out["redundancy"])
    return out


def prefix_sizes(n_members: int) -> list[int]:
    """Doubling prefix sizes ``1, 2, 4, …`` below ``n_members``, then ``n_members``."""
    if n_members < 1:
        raise ValueError(f"n_members must be >= 1, got {n_members}")
    sizes, k = [], 1
    while k < n_members:
        sizes.append(k)
        k *= 2
    return sizes + [int(n_members)]


def prefix_information(u, labels, *, relevancies, sizes=None, bias=None,
                       random_state=0) -> dict:
    """Theorems 5–6 measured on the depth-order chain ``S_1 ⊂ S_2 ⊂ …`` (bits).

    For each prefix ``S_k`` (the first ``k`` members of ``u`` ``[N, M, C]``, sizes
    :func:`prefix_sizes` by default): the cross-fitted usable information
    ``I(U_{S_k};Y)`` (:func:`estimators.usable_information`, the same folds for every prefix:
    one ``random_state``) with its interval and its held-out argmax error, the relevancy
    ``R_k = Σ_{m ≤ k} I(U_m;Y)`` from ``relevancies`` (the label-null debiased per-member
    values of :func:`valid_terms`) and ``D_k = I_k − R_k``.

    By the chain rule ``I(U_{S'};Y) = I(U_S;Y) + I(U_{S'∖S};Y | U_S) ≥ I(U_S;Y)``: the true
    ``I`` never falls along the chain (Theorem 5; so the Eq. 12 bounds, functions of
    ``H(Y) − I``, never rise: Theorem 6), while ``D`` may move either way. The estimates can
    fall (the learning cost of the cross-fitted readout grows with the dimension): ``steps``
    counts the falls, the largest, and the falls whose intervals do not overlap (a fall that
    the estimates' own noise cannot explain).
    """
    from estimators import usable_information

    u = np.asarray(u, dtype=np.float64)
    rel = np.asarray(relevancies, dtype=np.float64)
    if rel.shape != (u.shape[1],):
        raise ValueError(f"relevancies must hold one value per member ({u.shape[1]}), got "
                         f"shape {rel.shape}")
    sizes = prefix_sizes(u.shape[1]) if sizes is None else [int(k) for k in sizes]
    joint, ci, err = [], [], []
    for k in sizes:
        ui = usable_information(u[:, :k], labels, bias=bias, random_state=random_state,
                                bracket=False)
        joint.append(ui.estimate)
        ci.append([float(ui.interval[0]), float(ui.interval[1])])
        err.append(ui.error)
    joint = np.asarray(joint)
    relevancy = np.cumsum(rel)[np.asarray(sizes) - 1]
    falls = -np.diff(joint)
    apart = [ci[i + 1][1] < ci[i][0] for i in range(len(sizes) - 1)]
    return {"order": "depth", "sizes": sizes, "joint": joint.tolist(), "joint_ci": ci,
            "error": err, "relevancy": relevancy.tolist(),
            "diversity": (joint - relevancy).tolist(),
            "steps": {"n_steps": len(sizes) - 1, "n_falls": int((falls > 0).sum()),
                      "largest_fall": float(falls.max(initial=0.0)),
                      "n_falls_beyond_intervals": int(sum(apart))},
            "units": "bits"}
