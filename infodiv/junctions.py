"""Junction curves: accuracy and bias–diversity terms of every depth prefix (DESIGN.md 2.4).

The prefix ``S_k`` holds members ``1..k`` in execution order ("junction point" k). Its readout is

- ``readout="fixed"`` (the paper): ``r_k = Σ_{m≤k} u_m + b`` — every member keeps the scale of
  the full residual (direct effect);
- ``readout="logit_lens"``: ``r_k = (scale_M / scale_k) · Σ_{m≤k} u_m + b`` with the stored
  final-norm statistic of the residual after member k — exactly the model's final norm and head
  applied to the partial residual. Defined only where the residual is complete
  (``Member.junction``).

The members of prefix k are ``v_m = σ_k·(λ_k u_m + b/k)`` with ``λ_k`` the readout factor above and
``σ_k = 1`` (``scale="mean"``, the paper: ensemble ``r_k / k``) or ``σ_k = k`` (``scale="sum"``:
the ensemble is the readout ``r_k`` itself). Each point is the decomposition of
:func:`estimators.bias_diversity` (or :func:`estimators.paper_eq14`) of that sub-ensemble.

Every measure is a mean over examples of a per-example term, so its band is an example
bootstrap of that mean: ``n_bootstrap`` resamples of the rows (multinomial counts,
:func:`estimators.resampling.bootstrap_means`, all measures and prefixes paired), the
2.5–97.5% percentile interval extended to contain the estimate where it does not
(:func:`estimators.resampling.bootstrap_interval`; a gap within :data:`BAND_ULPS` units in the
last place is the rounding between the mean and its replicates, not a widening). The model is
fixed, so nothing is refitted: the band is the sampling error of the examples.

Everything is vectorised. Squared-loss terms in logit space come from cumulative sums of the
(centred) members. Softmax-based terms (cross-entropy, probability space, Eq. 14) need
``Σ_{m≤k} f(v_m)`` for a non-linear ``f``; when the members do not depend on k (fixed readout,
``scale="mean"``, zero constant member) that is a cumulative sum too, otherwise every
``(k, m ≤ k)`` pair is evaluated at once, tiled over examples only to bound memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import cached_property

import numpy as np
from tqdm.auto import tqdm

from estimators.ensemble import (
    check_bias,
    check_labels_in_range,
    check_members,
    check_target,
)
from estimators.numerics import logsumexp, option_reduce
from estimators.resampling import bootstrap_interval, bootstrap_means
from estimators.validation import check_base, to_base, unit_name

from .runs import run_names

__all__ = ["JunctionCurves", "junction_curves", "run_names", "BAND_ULPS"]

READOUTS = ("fixed", "logit_lens")
CURVE_SPACES = ("logit", "probability", "paper_eq14")
MEASURES = ("accuracy", "mse", "bias", "diversity", "cross_entropy", "ce_bias", "ce_diversity")
CI_METHOD = "example bootstrap (rows resampled, model fixed), percentile"
#: units in the last place by which a mean of per-example terms may differ from the same mean
#: reweighted by a bootstrap resample through rounding alone (a band's gap within them is 0)
BAND_ULPS = 16


@dataclass(frozen=True)
class JunctionCurves:
    """Per-prefix means over examples (arrays of length K, one per evaluated prefix).

    Attributes
    ----------
    k : ndarray of int
        Prefix sizes (number of members, 1-based).
    names : tuple of str
        Name of the last member of each prefix.
    accuracy : ndarray
        Accuracy of ``argmax r_k`` (ties go to the first option, as ``numpy.argmax``).
    mse, bias, diversity : ndarray
        Squared-loss decomposition in ``space`` (``mse = bias − diversity``; for
        ``space="paper_eq14"`` ``diversity`` is the one the paper's Eq. 14 implies).
    cross_entropy, ce_bias, ce_diversity : ndarray or None
        ``CE(y, softmax(v̄_k)) = mean_m CE(y, softmax(v_m)) − mean_m KL`` in ``ce_units``
        (None when computed with ``cross_entropy=False``).
    model_accuracy : float
        Accuracy of the stored model logits, for comparison with ``accuracy[-1]``.
    ci : dict or None
        Property: ``{measure: [K, 2] array}``, the example-bootstrap band of every computed
        measure (module docstring), computed from ``terms`` on first use, so callers that read
        only the means pay nothing; None with ``n_bootstrap=0``. ``to_dict`` writes it as
        ``"<measure>_ci"`` lists of ``[low, high]`` beside the measure.
    majority_rate : float
        Accuracy of always answering the commonest class (the chance line of accuracy).
    """

    k: np.ndarray
    names: tuple
    accuracy: np.ndarray
    mse: np.ndarray
    bias: np.ndarray
    diversity: np.ndarray
    cross_entropy: np.ndarray | None
    ce_bias: np.ndarray | None
    ce_diversity: np.ndarray | None
    readout: str
    space: str
    scale: str
    ce_units: str
    model: str
    task: str
    n_examples: int
    model_accuracy: float
    n_bootstrap: int = 0
    confidence: float = 0.95
    majority_rate: float = float("nan")
    random_state: int | None = 0
    #: per-example terms ``{measure: [N, K]}`` behind the bands (not written to JSON)
    terms: dict | None = field(default=None, repr=False, compare=False)

    @cached_property
    def _bands(self) -> tuple:
        """``(ci, widened)``, computed on first use (module docstring)."""
        if not self.n_bootstrap or not self.terms:
            return None, 0.0
        names = list(self.terms)
        reps = bootstrap_means(np.concatenate([self.terms[k] for k in names], axis=1),
                               self.n_bootstrap, random_state=self.random_state)
        means = np.concatenate([getattr(self, k) for k in names])
        lo, hi, widened = bootstrap_interval(means, reps, confidence=self.confidence,
                                             ulps=BAND_ULPS)
        cuts = np.cumsum([self.k.size] * len(names))[:-1]
        return ({k: np.stack([a, b], axis=1)
                 for k, a, b in zip(names, np.split(lo, cuts), np.split(hi, cuts))}, widened)

    @property
    def ci(self) -> dict | None:
        """``{measure: [K, 2]}``: the example-bootstrap band of every computed measure
        (computed on first use; None with ``n_bootstrap=0``)."""
        return self._bands[0]

    @property
    def widened(self) -> float:
        """The largest extension of a band to contain its mean (0: none was needed)."""
        return self._bands[1]

    def to_dict(self) -> dict:
        """JSON-ready dict (arrays as lists; each band as ``"<measure>_ci"``)."""
        out = {}
        for f in fields(self):
            if f.name != "terms":
                val = getattr(self, f.name)
                out[f.name] = val.tolist() if isinstance(val, np.ndarray) else val
        if not isinstance(self.random_state, (int, type(None))):
            out["random_state"] = repr(self.random_state)
        if self.ci:
            for measure, band in self.ci.items():
                out[f"{measure}_ci"] = band.tolist()
            out.update(ci_method=CI_METHOD, widened=self.widened)
        return out


def _prefixes(contrib, m: int, readout: str, at: str) -> np.ndarray:
    members = getattr(contrib, "members", None)
    junction = (np.array([bool(x.junction) for x in members]) if members is not None
                else np.ones(m, bool))
    if at == "junctions":
        ks = np.flatnonzero(junction) + 1
    elif at == "all":
        if readout == "logit_lens" and not junction.all():
            raise ValueError(f"the logit-lens readout is defined only at junction members; "
                             f"{int((~junction).sum())} of {m} members are not junctions, so "
                             "use at='junctions'")
        ks = np.arange(1, m + 1)
    else:
        raise ValueError(f"at must be 'junctions' or 'all', got {at!r}")
    if ks.size == 0:
        raise ValueError("the members table marks no junction member; nothing to evaluate")
    return ks


def _readout_factor(contrib, ks: np.ndarray, n: int, readout: str) -> np.ndarray:
    """λ [N, K]: 1 for the fixed readout, scale_M / scale_k for the logit lens."""
    if readout == "fixed":
        return np.ones((n, ks.size))
    s = np.asarray(contrib.scale, dtype=np.float64)
    if s.shape[0] != n or s.ndim != 2:
        raise ValueError(f"scale must be [N, M] with N = {n}, got shape {s.shape}")
    used = s[:, np.concatenate([ks - 1, [s.shape[1] - 1]])]
    if not np.isfinite(used).all() or (used <= 0).any():
        raise ValueError("the logit lens needs finite, positive scale at every junction; "
                         f"got {int((~np.isfinite(used)).sum())} non-finite and "
                         f"{int((used <= 0).sum())} non-positive values")
    return s[:, -1:] / s[:, ks - 1]


# Arrays below are laid out [N, C, K] (options before prefixes): the reductions over the few
# options then run along a middle axis with long contiguous inner loops, several times faster
# than reducing a trailing axis of length C.
def _over_options(ufunc, x):
    """Reduce the option axis 1 with ``ufunc`` (:func:`estimators.numerics.option_reduce`)."""
    return option_reduce(ufunc, x, 1)


def _lse_probs(v, need_probability):
    """``LSE(v)`` over the option axis 1 and, if asked, ``softmax(v)`` and ``||softmax(v)||²``
    (:func:`estimators.numerics.logsumexp`; ``v`` is scratch and is overwritten)."""
    if not need_probability:
        return (logsumexp(v, 1),)
    lse, e, tot = logsumexp(v, 1, overwrite=True, return_terms=True)
    p = np.divide(e, tot[:, None], out=e)
    return lse, p, _over_options(np.add, p * p)


def _member_sums(ut, a, c, ks, *, need_probability, block_bytes, progress):
    """``Σ_{m≤k} LSE(v_m)`` [N, K] and, if asked, ``Σ p_m`` [N, C, K], ``Σ ||p_m||²`` [N, K].

    ``ut`` is u as [N, C, M]; ``v_m = a[:, k] u_m + c[:, :, k]``, ``p_m = softmax(v_m)``.
    """
    n, nc, m = ut.shape
    if np.ptp(a, axis=1).max() == 0 and np.ptp(c, axis=2).max() == 0:
        # members do not depend on k: cumulative sums over members
        terms = _lse_probs(a[:, None, :1] * ut + c[:, :, :1], need_probability)
        return [np.cumsum(x, axis=-1)[..., ks - 1] for x in terms]
    kk = np.repeat(np.arange(ks.size), ks)           # pairs (prefix i, member j < ks[i])
    mm = np.concatenate([np.arange(k) for k in ks])
    starts = np.concatenate([[0], np.cumsum(ks)[:-1]])
    out = [np.empty((n, ks.size))]
    if need_probability:
        out += [np.empty((n, nc, ks.size)), np.empty((n, ks.size))]
    has_constant = bool(c.any())
    step = max(1, int(block_bytes // (kk.size * nc * 8 * 4)))
    for lo in tqdm(range(0, n, step), desc="junction pairs", disable=not progress):
        sl = slice(lo, lo + step)
        v = ut[sl][:, :, mm]
        v *= a[sl][:, None, kk]
        if has_constant:
            v += c[sl][:, :, kk]
        for dest, x in zip(out, _lse_probs(v, need_probability)):
            dest[sl] = np.add.reduceat(x, starts, axis=-1)
    return out


def _logit_terms(ut, a, c, t, vbar, ks):
    """Squared-loss terms in logit space from cumulative sums of centred members, [N, K] each."""
    nc = ut.shape[1]
    ref = ut.mean(axis=2, keepdims=True)             # centring: variances are shift-invariant
    w = ut - ref
    w1 = np.cumsum(w, axis=2)[..., ks - 1]
    w2 = np.cumsum(w * w, axis=2)[..., ks - 1]
    kf = ks.astype(np.float64)
    a3 = a[:, None, :]
    d = t[:, :, None] - (a3 * ref + c)               # target minus the members' common part
    bias = _over_options(np.add, kf * d * d - 2 * a3 * d * w1 + a3 * a3 * w2) / (nc * kf)
    div = _over_options(np.add, a3 * a3 * (w2 - w1 * w1 / kf)) / (nc * kf)
    mse = _over_options(np.add, (t[:, :, None] - vbar) ** 2) / nc
    return mse, bias, div


def junction_curves(contrib, *, readout: str = "fixed", space: str = "logit",
                    scale: str = "mean", target=None, at: str = "junctions", base=2,
                    cross_entropy: bool = True, n_bootstrap: int = 200,
                    confidence: float = 0.95, random_state=0, block_bytes: int = 64 * 2**20,
                    progress: bool = False) -> JunctionCurves:
    r"""Accuracy, MSE, bias, diversity, cross-entropy and its diversity for every prefix.

    Parameters
    ----------
    contrib : Contributions
        Needs ``u``, ``labels``, ``bias``, ``members`` (execution order) and, for the logit
        lens, ``scale``.
    readout : {"fixed", "logit_lens"}
        See the module docstring.
    space : {"logit", "probability", "paper_eq14"}
        Space of the squared-loss decomposition (``"paper_eq14"`` is the paper's approximation;
        its ``diversity`` is ``bias − mse``).
    scale : {"mean", "sum"}
        Member scale: ensemble ``r_k / k`` (the paper) or ``r_k`` (the readout itself, so the
        cross-entropy at k is the prefix model's loss).
    target : array [N, C] or [C], optional
        Squared-loss target in ``"logit"``/``"probability"`` space (default ``onehot(y)``). The
        cross-entropy always uses the labels.
    at : {"junctions", "all"}
        Evaluate only prefixes that end at a junction member (default) or every prefix (fixed
        readout only).
    base : float or "e", default 2
        Unit of the cross-entropy terms (bits by default).
    cross_entropy : bool, default True
        Compute the cross-entropy terms. They need every ``(k, m ≤ k)`` pair whenever the
        members change with k (logit lens, ``scale="sum"`` or a constant member), which costs
        O(N·M²·C); with ``False`` and ``space="logit"`` everything stays O(N·M·C).
    n_bootstrap : int, default 200
        Example resamples of every measure's band (0: no bands; else at least 20).
    confidence : float, default 0.95
        Coverage of the bands.
    random_state : int, default 0
        Seeds the resamples.
    block_bytes : int
        Memory bound for the pairwise evaluation of softmax terms.
    progress : bool
        Show a tqdm bar over example blocks.

    Returns
    -------
    JunctionCurves
    """
    if readout not in READOUTS:
        raise ValueError(f"readout must be one of {READOUTS}, got {readout!r}")
    if space not in CURVE_SPACES:
        raise ValueError(f"space must be one of {CURVE_SPACES}, got {space!r}")
    if scale not in ("mean", "sum"):
        raise ValueError(f"scale must be 'mean' or 'sum', got {scale!r}")
    if n_bootstrap != 0 and not (isinstance(n_bootstrap, (int, np.integer)) and n_bootstrap >= 20):
        raise ValueError(f"n_bootstrap must be 0 or an integer >= 20, got {n_bootstrap!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    b_log = check_base(base)
    u = check_members(contrib.u, "contrib.u")
    n, m, nc = u.shape
    y = check_labels_in_range(contrib.labels, n, nc, "contrib.labels")
    b = check_bias(getattr(contrib, "bias", None), n, nc)
    ks = _prefixes(contrib, m, readout, at)
    lam = _readout_factor(contrib, ks, n, readout)
    sigma = ks.astype(np.float64) if scale == "sum" else np.ones(ks.size)
    kf = ks.astype(np.float64)
    a = sigma[None, :] * lam                                         # [N, K]
    c = (sigma / kf)[None, None, :] * b[:, :, None]                  # [N, C, K]

    ut = np.ascontiguousarray(u.transpose(0, 2, 1))                  # [N, C, M]
    r = lam[:, None, :] * np.cumsum(ut, axis=2)[..., ks - 1] + b[:, :, None]   # readout
    hits = (r.argmax(axis=1) == y[:, None]).astype(np.float64)           # [N, K]
    vbar = (sigma / kf) * r                                          # ensemble mean [N, C, K]
    sums = None
    if cross_entropy or space != "logit":
        sums = _member_sums(ut, a, c, ks, need_probability=space != "logit",
                            block_bytes=block_bytes, progress=progress)
    lse_bar = _lse_probs(vbar, False)[0]
    ce_terms = [None] * 3
    if cross_entropy:
        vbar_y = np.take_along_axis(vbar, y[:, None, None], axis=1)[:, 0, :]
        ce = (lse_bar - vbar_y, sums[0] / kf - vbar_y, sums[0] / kf - lse_bar)
        ce_terms = [to_base(x, b_log) for x in ce]

    if space == "logit":
        t = check_target(target, y, n, nc, distribution=False)
        mse, bias, div = _logit_terms(ut, a, c, t, vbar, ks)
    else:
        t = check_target(target if space == "probability" else None, y, n, nc,
                         distribution=False)
        psum, p2sum = sums[1], sums[2]
        tt = t[:, :, None]
        cross = _over_options(np.add, tt * psum)                # Σ_m ⟨t, p_m⟩
        bias = ((t * t).sum(axis=1)[:, None] * kf - 2 * cross + p2sum) / (kf * nc)
        if space == "probability":
            pbar = psum / kf
            mse = _over_options(np.add, (tt - pbar) ** 2) / nc
            div = (p2sum / kf - _over_options(np.add, pbar * pbar)) / nc
        else:
            q = np.exp(vbar - lse_bar[:, None, :])
            mse = _over_options(np.add, (tt - q) ** 2) / nc
            div = bias - mse

    model, task = run_names(getattr(contrib, "meta", None))
    names = getattr(contrib, "names", None) or [f"m{i}" for i in range(m)]
    units = unit_name(b_log)
    logits = getattr(contrib, "logits", None)
    model_acc = (float((np.asarray(logits).argmax(-1) == y).mean()) if logits is not None
                 else float("nan"))
    terms = dict(zip(MEASURES, (hits, mse, bias, div, *ce_terms)))
    terms = {k: v for k, v in terms.items() if v is not None}
    means = {k: v.mean(axis=0) for k, v in terms.items()}
    majority = float(np.bincount(y, minlength=nc).max() / n)
    return JunctionCurves(ks, tuple(names[k - 1] for k in ks),
                          *(means.get(k) for k in MEASURES), readout, space, scale, units,
                          model, task, n, model_acc, int(n_bootstrap), float(confidence),
                          majority, random_state, terms if n_bootstrap else None)
