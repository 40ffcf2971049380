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
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import helmert

from estimators import entropy, information_decomposition

__all__ = ["helmert_basis", "member_variables", "label_entropy", "error_bounds", "TERMS",
           "set_terms", "valid_terms", "order_terms", "monotonicity", "premise_ratio"]

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
    it), plus Eq. 12 bounds on the Bayes error given U at the ends of the bracket
    ``[joint_lower, joint_upper]`` (the lower error bound uses the upper end of I, the upper
    error bound the lower end, so both hold whenever the bracket holds I).
    """
    labels = np.asarray(labels)
    dec = information_decomposition(u, labels, bias=bias, random_state=random_state, **options)
    k = _n_classes(labels, n_classes)
    lower = error_bounds(dec.joint_upper, dec.h_y, k)[0]
    upper = error_bounds(dec.joint_lower, dec.h_y, k)[1]
    return {**dec.to_dict(), "error_lower_bound": float(max(lower, 0.0)),
            "error_upper_bound": float(upper)}


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
