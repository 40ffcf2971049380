"""Growth laws of a layer-addition curve f(k), k = 1..M (or of f at arbitrary points x > 0),
compared by AICc and extrapolation.

Three laws by default: linear ``a·k + b``, logarithmic ``a·log k + b`` and the saturating
power law ``f_∞ − a·k^(−α)``, fitted by least squares (Gaussian errors). A fourth, the step
``a + (b − a)·1[k ≥ c]`` (two levels and the change point c, chosen among the midpoints between
consecutive points; 3 parameters), is the alternative to a gradual law where a task is either
solved or not: a curve that jumps once is fitted by it exactly, and AICc then prefers it over
any smooth law (``laws=LAWS + ("step",)``). AICc (Hurvich & Tsai 1989)
``n log(RSS/n) + 2p + 2p(p+1)/(n−p−1)`` compares them on all k; held-out extrapolation fits
k ≤ M/2 and reports the RMSE on k > M/2. A number that cannot be computed (too few points)
is None beside a ``<name>_reason`` that says why.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["LAWS", "ALL_LAWS", "fit_growth_laws", "aicc"]

#: the default laws; ALL_LAWS adds the step
LAWS = ("linear", "log", "power")
ALL_LAWS = LAWS + ("step",)


def aicc(rss, n, p):
    if n - p - 1 <= 0 or rss <= 0:
        return float("nan")
    return float(n * np.log(rss / n) + 2 * p + 2 * p * (p + 1) / (n - p - 1))


def _number(key: str, value: float, reason: str) -> dict:
    """``{key: value}``, or ``{key: None, key_reason: reason}`` where ``value`` is not finite:
    no NaN leaves the module."""
    if np.isfinite(value):
        return {key: float(value)}
    return {key: None, f"{key}_reason": reason}


def _step(k, y):
    """Least-squares step ``a + (b − a)·1[k ≥ c]`` over sorted ``k``: for every cut between two
    distinct consecutive points the two levels are the means on either side; the cut of least
    RSS wins (the first on ties) and c is the midpoint of its two points. Parameters
    ``[a, b, c]``."""
    cuts = np.flatnonzero(np.diff(k) > 0) + 1
    if not cuts.size:
        raise ValueError("a step needs at least two distinct points")
    rss = [((y[:j] - y[:j].mean()) ** 2).sum() + ((y[j:] - y[j:].mean()) ** 2).sum()
           for j in cuts]
    j = int(cuts[int(np.argmin(rss))])
    a, b, c = float(y[:j].mean()), float(y[j:].mean()), float((k[j - 1] + k[j]) / 2)
    return [a, b, c], lambda kk: np.where(np.asarray(kk) >= c, b, a), 3


def _fit(model, k, y):
    from scipy.optimize import curve_fit

    if model == "linear":
        coef = np.polyfit(k, y, 1)
        return coef, lambda kk: np.polyval(coef, kk), 2
    if model == "log":
        coef = np.polyfit(np.log(k), y, 1)
        return coef, lambda kk: np.polyval(coef, np.log(kk)), 2
    if model == "step":
        return _step(k, y)

    def power(kk, f_inf, a, alpha):
        return f_inf - a * kk ** (-alpha)

    span = float(y[-1] - y[0]) or 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # f(∞) − f(1) = a: the start has the sign of the curve's rise
        coef, _ = curve_fit(power, k, y, p0=[y[-1], span, 0.5],
                            bounds=([-np.inf, -np.inf, 1e-3], [np.inf, np.inf, 10.0]),
                            maxfev=20000)
    return coef, lambda kk: power(kk, *coef), 3


def fit_growth_laws(values, k=None, *, laws=LAWS) -> dict:
    """Fit growth laws to a curve and compare them (module docstring).

    Parameters
    ----------
    values : array
        Without ``k``: the layer-addition curve ``values[j] = f(j)``, j = 0..M; values[0] = f(∅)
        is not used and the laws are fitted on k = 1..M. With ``k``: the values f(x) at the
        points ``k`` (same length, all used).
    k : array of positive floats, optional
        Arbitrary positive abscissae (member counts, parameter counts, depths), e.g. to fit
        growth across models; sorted internally. The log and power laws need x > 0.
    laws : tuple of str
        Which of :data:`ALL_LAWS` to fit (default :data:`LAWS`, the three smooth ones).

    Returns per model: parameters, RSS, AICc on all points, and held-out RMSE of the fit on
    the smaller half of the points (by x) when predicting the larger half;
    ``best_aicc`` and ``best_extrapolation`` name the winners.
    """
    if k is None:
        y = np.asarray(values, dtype=np.float64)[1:]
        k = np.arange(1, len(y) + 1, dtype=np.float64)
    else:
        y = np.asarray(values, dtype=np.float64).ravel()
        k = np.asarray(k, dtype=np.float64).ravel()
        if k.shape != y.shape:
            raise ValueError(f"k must have one point per value: {k.size} points for "
                             f"{y.size} values")
        bad = int((~(np.isfinite(k) & (k > 0))).sum())
        if bad:
            raise ValueError(f"k must be finite and > 0 (log and power laws): {bad} of "
                             f"{k.size} points are not")
        order = np.argsort(k, kind="stable")
        k, y = k[order], y[order]
    unknown = [m for m in laws if m not in ALL_LAWS]
    if unknown:
        raise ValueError(f"laws must be among {', '.join(ALL_LAWS)}: got {', '.join(unknown)}")
    half = len(y) // 2
    # an exact fit (RSS 0: a step through a curve that jumps once) is compared at the RSS of
    # float rounding, n·spacing(max|y|)², not dropped from the comparison
    floor = len(y) * float(np.spacing(np.abs(y).max())) ** 2 if y.size else 0.0
    out = {}
    for model in laws:
        try:
            coef, pred, p = _fit(model, k, y)
            rss = float(((pred(k) - y) ** 2).sum())
            entry = {"params": np.asarray(coef).tolist(), "rss": rss}
            entry.update(_number("aicc", aicc(max(rss, floor), len(y), p),
                                 f"AICc needs more than p + 1 = {p + 1} points and RSS > 0 "
                                 f"(n = {len(y)}, RSS = {rss:.3g})"))
            if half >= p + 1 and len(y) - half >= 1:
                _, pred_h, _ = _fit(model, k[:half], y[:half])
                entry["extrapolation_rmse"] = float(np.sqrt(np.mean((pred_h(k[half:])
                                                                     - y[half:]) ** 2)))
            else:
                entry.update(_number("extrapolation_rmse", float("nan"),
                                     f"the first half has {half} points; a {p}-parameter law "
                                     f"needs {p + 1} to be fitted and extrapolated"))
        except (RuntimeError, ValueError, np.linalg.LinAlgError) as exc:
            entry = {"error": str(exc), "aicc": None, "aicc_reason": "the fit failed",
                     "extrapolation_rmse": None, "extrapolation_rmse_reason": "the fit failed"}
        out[model] = entry

    def best(key):
        vals = {m: e[key] for m, e in out.items() if e.get(key) is not None}
        return min(vals, key=vals.get) if vals else None

    out["best_aicc"], out["best_extrapolation"] = best("aicc"), best("extrapolation_rmse")
    return out
