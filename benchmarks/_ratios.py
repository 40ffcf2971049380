"""Paired timing ratios with a confidence interval, and verdicts against a target.

A benchmark repetition ``r`` times every side once, interleaved, so the times ``a_r`` and
``b_r`` of two sides share that repetition's load. The ratio ``a / b`` is read on the paired
log-ratios ``d_r = log a_r - log b_r`` (the common load factor of repetition ``r`` cancels in
``d_r``):

- geometric-mean ratio ``exp(mean d)``;
- its ``level`` confidence interval ``exp(mean d ± t_{(1+level)/2, n-1} · s_d / √n)``, the
  Student t interval of the mean log-ratio (``s_d`` the sample standard deviation of the ``d_r``;
  Student 1908; a log-ratio of two CPU times is close to normal, and with ``n`` of 5–10
  repetitions a t interval is preferred to a bootstrap percentile interval, which undercovers
  at such ``n``).

A target ``("<=", c)`` is *met* when the whole interval lies at or below ``c``, *not met* when
it lies above ``c``, *undecided* when it straddles ``c`` (``(">=", c)`` mirrored). With fewer
than two repetitions there is no interval and every verdict is undecided. The ratio of the
minima and the ratio of the means are kept beside it for reading (they are not judged).
"""

from __future__ import annotations

import math

import numpy as np

LEVEL = 0.95
MET, NOT_MET, UNDECIDED = "met", "not met", "undecided"


def _t_quantile(q: float, df: int) -> float:
    from scipy.stats import t

    return float(t.ppf(q, df))


def paired_ratio(a, b, level: float = LEVEL) -> dict:
    """Geometric-mean ratio ``a / b`` of paired repetitions with its t interval.

    Parameters
    ----------
    a, b : sequence of float
        Times of the two sides, repetition by repetition (``a[r]`` and ``b[r]`` measured in
        the same repetition); positive.
    level : float
        Confidence level of the interval, in (0, 1).

    Returns
    -------
    dict
        ``geometric_mean``, ``ci_low``, ``ci_high`` (None with fewer than 2 repetitions),
        ``level``, ``n``, ``log_ratio_mean``, ``log_ratio_sd``, ``per_rep`` (``a_r / b_r``),
        ``min`` (``min a / min b``) and ``mean`` (``mean a / mean b``).

    Raises
    ------
    ValueError
        Unequal lengths, no repetition, a non-positive time or a level outside (0, 1).
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"a and b must be 1-d with the same length >= 1, got shapes "
                         f"{a.shape} and {b.shape}")
    bad = int((a <= 0).sum() + (b <= 0).sum())
    if bad:
        raise ValueError(f"times must be positive: {bad} of {2 * a.size} are not")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    d = np.log(a) - np.log(b)
    n = d.size
    m = float(d.mean())
    out = {"geometric_mean": math.exp(m), "ci_low": None, "ci_high": None, "level": level,
           "n": n, "log_ratio_mean": m, "log_ratio_sd": None,
           "per_rep": (a / b).tolist(), "min": float(a.min() / b.min()),
           "mean": float(a.mean() / b.mean())}
    if n >= 2:
        s = float(d.std(ddof=1))
        half = _t_quantile((1 + level) / 2, n - 1) * s / math.sqrt(n)
        out |= {"ci_low": math.exp(m - half), "ci_high": math.exp(m + half),
                "log_ratio_sd": s}
    return out


def verdict(stat: dict, target: tuple[str, float]) -> str:
    """``met`` / ``not met`` / ``undecided``: where ``stat``'s interval lies against ``target``.

    ``target`` is ``("<=", c)`` or ``(">=", c)``; see the module docstring.
    """
    op, c = target
    if op not in ("<=", ">="):
        raise ValueError(f"target operator must be '<=' or '>=', got {op!r}")
    lo, hi = stat["ci_low"], stat["ci_high"]
    if lo is None:
        return UNDECIDED
    if op == "<=":
        return MET if hi <= c else NOT_MET if lo > c else UNDECIDED
    return MET if lo >= c else NOT_MET if hi < c else UNDECIDED


OVERHEAD = ("<=", 1.0)
PEER = (">=", 1.3)


def ratio_pairs(peer_names) -> dict:
    """``{ratio: (numerator side, denominator side, target or None)}`` of the extract benchmark.

    ``overhead_extract_over_plain_same_work``: the extraction over a plain forward doing the
    same work (same batches, same shared-prefix cache); ``extract_over_plain``: end to end,
    over the model's plain forward on the whole prompts; ``<peer>_over_extract``: each peer
    over the extraction.
    """
    pairs = {"overhead_extract_over_plain_same_work": ("extract", "plain_same_work", OVERHEAD),
             "extract_over_plain": ("extract", "plain", OVERHEAD),
             "extract_without_savings_over_plain": ("extract_no_savings", "plain", None),
             "extract_over_extract_without_savings": ("extract", "extract_no_savings", None)}
    return pairs | {f"{p}_over_extract": (p, "extract", PEER) for p in peer_names}


def ratio_table(cpu: dict, peer_names, level: float = LEVEL) -> dict:
    """Every ratio of :func:`ratio_pairs` present in ``cpu`` (``{side: [seconds per rep]}``).

    Returns ``{"min": {ratio: value}, "mean": {ratio: value}, "paired": {ratio:
    paired_ratio(...) | {"target": "<= 1.0" or None, "verdict": ...}}}``.
    """
    table = {"min": {}, "mean": {}, "paired": {}}
    for key, (a, b, target) in ratio_pairs(peer_names).items():
        if a not in cpu or b not in cpu:
            continue
        stat = paired_ratio(cpu[a], cpu[b], level)
        table["min"][key], table["mean"][key] = round(stat["min"], 4), round(stat["mean"], 4)
        stat["target"] = None if target is None else f"{target[0]} {target[1]}"
        stat["verdict"] = None if target is None else verdict(stat, target)
        table["paired"][key] = stat
    return table


def targets_met(tasks: dict) -> dict:
    """``{setting: {ratio: verdict}}`` for every ratio with a target (judged on the interval)."""
    return {label: {k: s["verdict"] for k, s in t["ratios"]["paired"].items()
                    if s["target"] is not None} for label, t in tasks.items()}
