"""Bias–diversity (ambiguity) decompositions of an ensemble of logit vectors (DESIGN.md 2.2).

The members are the per-layer logit contributions ``u[:, m, :]`` of a residual stream (paper
Eq. 3). Every decomposition here is an exact identity per example, checked by the tests to
floating-point rounding, except :func:`paper_eq14`, which reproduces the paper's approximation
and reports how far it is from an identity.

Member scale
------------
``scale="mean"`` (the paper): members ``v_m = u_m + b/M``, ensemble ``v̄ = z/M`` where
``z = Σ_m u_m + b`` are the model's logits. ``scale="sum"``: members ``v_m = M·u_m + b``, whose
mean is ``z`` itself, so the ensemble IS the model. ``b`` is the constant member (LayerNorm beta /
lm_head bias; zero for RMSNorm models), spread equally over the members so that it changes the
bias term but never the diversity.

Target in logit space
---------------------
Logits are defined only up to a per-example shift, so the paper's "true logits" û have no
canonical value. The default target is ``onehot(y)`` (logit 1 for the gold option, 0 elsewhere),
the same vector the paper's Eq. 14 uses in probability space. Pass an explicit ``[N, C]`` or
``[C]`` target to choose another.

References
----------
Krogh, A. & Vedelsby, J. (1994). Neural network ensembles, cross validation, and active
learning. NIPS 7.
Wood, D., Mu, T., Webb, A., Reeve, H., Luján, M. & Brown, G. (2023). A unified theory of
diversity in ensemble learning. JMLR 24(359).
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ._checks import check_square_overflow
from .ensemble_checks import (
    _check_choice,
    check_bias,
    check_labels_in_range,
    check_members,
    check_target,
    member_logits,
)
from .numerics import log_softmax, logsumexp, option_sum
from .validation import check_base, to_base, unit_name

__all__ = [
    "BiasDiversity",
    "GroupTerms",
    "PaperEq14",
    "bias_diversity",
    "paper_eq14",
    "check_members",
    "check_labels_in_range",
    "check_bias",
    "check_target",
    "member_logits",
    "option_sum",
    "logsumexp",
    "log_softmax",
]

LOSSES = ("squared", "cross_entropy")
SPACES = ("logit", "probability")
SCALES = ("mean", "sum")


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    a.flags.writeable = False
    return a


# ---------------------------------------------------------------------------- results
@dataclass(frozen=True)
class GroupTerms:
    """Bias and diversity of one member group (embedding / attention / MLP), Eq. 9–10.

    ``bias`` and ``diversity`` are within-group means of the member terms (the paper's
    "Embedding Bias", "MLP Diversity", ...); ``weight = n_members / M``, so the group's part of
    the total is ``weight · bias`` and the parts of all groups add up to the ensemble totals.
    """

    n_members: int
    weight: float
    bias: float
    diversity: float
    bias_examples: np.ndarray
    diversity_examples: np.ndarray

    @property
    def bias_part(self) -> float:
        """``weight · bias``: this group's share of the total bias (Eq. 9)."""
        return self.weight * self.bias

    @property
    def diversity_part(self) -> float:
        """``weight · diversity``: this group's share of the total diversity (Eq. 10)."""
        return self.weight * self.diversity


@dataclass(frozen=True)
class BiasDiversity:
    """Result of :func:`bias_diversity`: ``loss = bias − diversity`` per example.

    Attributes
    ----------
    loss, bias, diversity : float
        Means over examples of the ensemble loss, the mean member loss and the diversity.
    loss_examples, bias_examples, diversity_examples : ndarray [N]
        The same per example.
    by_group : mapping or None
        Group name -> :class:`GroupTerms`, when groups were given.
    loss_kind, space, scale : str
        The variant. ``units`` names the unit ("logit^2", "probability^2", "bits", "nats").
    n_members : int
    """

    loss: float
    bias: float
    diversity: float
    loss_examples: np.ndarray
    bias_examples: np.ndarray
    diversity_examples: np.ndarray
    by_group: Mapping[str, GroupTerms] | None
    loss_kind: str
    space: str
    scale: str
    units: str
    n_members: int

    @property
    def residual_examples(self) -> np.ndarray:
        """``loss − (bias − diversity)`` per example: zero to rounding (the identity's check)."""
        return self.loss_examples - (self.bias_examples - self.diversity_examples)


# ---------------------------------------------------------------------------- member terms
def _squared_terms(v, t, space):
    """Per-member bias [N, M], diversity [N, M] and ensemble loss [N] for the squared loss."""
    c = v.shape[-1]
    if space == "probability":
        v = np.exp(log_softmax(v))
    vbar = v.mean(axis=1)
    loss = option_sum((t - vbar) ** 2) / c
    bias = option_sum((t[:, None, :] - v) ** 2) / c
    div = option_sum((vbar[:, None, :] - v) ** 2) / c
    return loss, bias, div


def _cross_entropy_terms(v, t):
    """Per-member CE(t, q_m) [N, M], KL(q̄ ‖ q_m) [N, M] and CE(t, q̄) [N] in nats.

    ``q_m = softmax(v_m)`` and ``q̄ = softmax(mean_m v_m)``, all through log-softmax.
    """
    logq = log_softmax(v)                          # [N, M, C]
    logqbar = log_softmax(v.mean(axis=1))          # [N, C]
    qbar = np.exp(logqbar)
    loss = -option_sum(t * logqbar)
    bias = -option_sum(t[:, None, :] * logq)
    div = option_sum(qbar[:, None, :] * (logqbar[:, None, :] - logq))
    return loss, bias, div


def _group_terms(bias_m, div_m, groups, m) -> dict[str, GroupTerms]:
    g = np.asarray(groups)
    if g.shape != (m,):
        raise ValueError(f"groups must give one label per member (M = {m}), got shape {g.shape}")
    out = {}
    for name in dict.fromkeys(g.tolist()):          # first-appearance order
        mask = g == name
        be, de = bias_m[:, mask].mean(axis=1), div_m[:, mask].mean(axis=1)
        out[str(name)] = GroupTerms(int(mask.sum()), float(mask.sum() / m), float(be.mean()),
                                    float(de.mean()), _frozen(be), _frozen(de))
    return out


# ---------------------------------------------------------------------------- public API
def bias_diversity(u, labels=None, *, loss: str = "squared", space: str = "logit",
                   scale: str = "mean", target=None, groups=None, bias=None,
                   base=2) -> BiasDiversity:
    r"""Exact bias–diversity decomposition of the ensemble of member logits (Theorem 1).

    For members ``v_1..v_M`` (see *Member scale* in the module docstring) and target ``t``,
    per example:

    - ``loss="squared", space="logit"`` (paper Eq. 8, Krogh & Vedelsby 1994)::

        ||t − v̄||²/C = mean_m ||t − v_m||²/C − mean_m ||v̄ − v_m||²/C,   v̄ = mean_m v_m

    - ``loss="squared", space="probability"``: the same identity for members
      ``p_m = softmax(v_m)`` and the ensemble ``p̄ = mean_m p_m`` (the arithmetic mean of member
      probabilities, NOT ``softmax(v̄)``; see :func:`paper_eq14` for the paper's mix of the two).
    - ``loss="cross_entropy"`` (Wood et al. 2023, the normalised geometric-mean ensemble)::

        CE(t, q̄) = mean_m CE(t, q_m) − mean_m KL(q̄ ‖ q_m),   q_m = softmax(v_m),
        q̄ = softmax(v̄)

      With ``scale="sum"``, ``q̄ = softmax(z)`` is the model's own prediction, so this splits the
      model's real loss. Computed with log-sum-exp (finite for ±1e4 logits); ``base`` sets the
      unit (2: bits, ``"e"``: nats).

    Parameters
    ----------
    u : array [N, M, C]
        Member logits (arrays only: ``infodiv.runs.ensemble_arrays(run)`` gives ``u``,
        ``labels``, ``bias`` and ``groups`` of a run).
    labels : array [N] of int in [0, C), optional
        Gold options; needed unless ``target`` is given.
    loss : {"squared", "cross_entropy"}
    space : {"logit", "probability"}
        For the squared loss only.
    scale : {"mean", "sum"}
        Members ``u_m + b/M`` (the paper) or ``M·u_m + b`` (mean = the model's logits).
    target : array [N, C] or [C], optional
        Default ``onehot(labels)``. In logit space this is the convention "logit 1 for the gold
        option, 0 elsewhere" (see module docstring); for cross-entropy it must be a probability
        vector per example.
    groups : array [M], optional
        Group label per member (e.g. ``"embed"``, ``"attn"``, ``"mlp"``) for the module
        breakdown of Eq. 9–10.
    bias : array [C] or [N, C], optional
        Constant member, spread equally over the members (zero by default).
    base : float or "e", default 2
        Logarithm base of the cross-entropy terms; unused by the squared loss.

    Returns
    -------
    BiasDiversity
    """
    _check_choice(loss, LOSSES, "loss")
    _check_choice(space, SPACES, "space")
    _check_choice(scale, SCALES, "scale")
    arr = check_members(u)
    n, m, c = arr.shape
    if labels is not None:
        labels = check_labels_in_range(labels, n, c)
    v = member_logits(arr, check_bias(bias, n, c), scale)
    k = 0
    if loss == "cross_entropy":
        if space != "logit":
            raise ValueError("space applies to the squared loss only; cross_entropy always "
                             "uses softmax members (leave space='logit')")
        t = check_target(target, labels, n, c, distribution=True)
        b = check_base(base)
        loss_e, bias_m, div_m = (to_base(x, b) for x in _cross_entropy_terms(v, t))
        units = unit_name(b)
    else:
        t = check_target(target, labels, n, c, distribution=False)
        k = check_square_overflow(v, "u", "bias-diversity decomposition") \
            if space == "logit" else 0
        if k:   # homogeneous of degree 2 in (v, t): exact on v·2^-k, t·2^-k, times 2^(2k)
            v, t = np.ldexp(v, -k), np.ldexp(t, -k)
        loss_e, bias_m, div_m = _squared_terms(v, t, space)
        units = f"{space}^2"
    bias_e, div_e = bias_m.mean(axis=1), div_m.mean(axis=1)
    means = [float(x.mean()) for x in (loss_e, bias_e, div_e)]
    if k:   # back to u's scale: means and terms beyond float64's range are inf
        with np.errstate(over="ignore"):
            means = [float(np.ldexp(x, 2 * k)) for x in means]
            loss_e, bias_e, div_e, bias_m, div_m = (np.ldexp(x, 2 * k) for x in (
                loss_e, bias_e, div_e, bias_m, div_m))
    by_group = None
    if groups is not None:
        with np.errstate(over="ignore"):
            by_group = types.MappingProxyType(_group_terms(bias_m, div_m, groups, m))
    return BiasDiversity(*means, _frozen(loss_e), _frozen(bias_e), _frozen(div_e), by_group,
                         loss, space, scale, units, m)


@dataclass(frozen=True)
class PaperEq14:
    """Result of :func:`paper_eq14` (means and per-example arrays).

    ``mse`` = MSE(onehot, softmax(v̄)); ``bias`` = mean_m MSE(onehot, softmax(v_m));
    ``diversity`` = ``bias − mse`` (what the paper's numbers imply); ``ambiguity`` =
    mean_m ||softmax(v̄) − softmax(v_m)||²/C (the Krogh–Vedelsby diversity around the reported
    ensemble); ``gap`` = ``mse − (bias − ambiguity)``, zero only if Eq. 14 were an identity.
    """

    mse: float
    bias: float
    diversity: float
    ambiguity: float
    gap: float
    mse_examples: np.ndarray
    bias_examples: np.ndarray
    diversity_examples: np.ndarray
    ambiguity_examples: np.ndarray
    gap_examples: np.ndarray
    scale: str


def paper_eq14(u, labels=None, *, scale: str = "mean", bias=None) -> PaperEq14:
    r"""The paper's Eq. 14 approximation of Eq. 8 in probability space, with its gap.

    With ``t = onehot(y)``, ``c = softmax(v̄)`` and ``q_m = softmax(v_m)``::

        MSE  = ||t − c||²/C,      bias = mean_m ||t − q_m||²/C

    This is not an exact identity because ``c`` is not the mean of the ``q_m``: expanding,
    ``bias = MSE + ambiguity − (2/C)⟨t − c, q̄ − c⟩`` with ``q̄ = mean_m q_m``, so
    ``gap = MSE − (bias − ambiguity) = (2/C)⟨t − c, q̄ − c⟩``. The exact probability-space
    identity is ``bias_diversity(..., space="probability")``.

    Parameters
    ----------
    u, labels, scale, bias
        As in :func:`bias_diversity` (``scale="mean"`` is the paper's setting).

    Returns
    -------
    PaperEq14
    """
    _check_choice(scale, SCALES, "scale")
    arr = check_members(u)
    n, m, c = arr.shape
    t = check_target(None, labels, n, c, distribution=False)
    v = member_logits(arr, check_bias(bias, n, c), scale)
    q = np.exp(log_softmax(v))
    cbar = np.exp(log_softmax(v.mean(axis=1)))
    mse = option_sum((t - cbar) ** 2) / c
    bias_e = (option_sum((t[:, None, :] - q) ** 2) / c).mean(axis=1)
    amb = (option_sum((cbar[:, None, :] - q) ** 2) / c).mean(axis=1)
    div = bias_e - mse
    gap = mse - (bias_e - amb)
    return PaperEq14(float(mse.mean()), float(bias_e.mean()), float(div.mean()),
                     float(amb.mean()), float(gap.mean()), _frozen(mse), _frozen(bias_e),
                     _frozen(div), _frozen(amb), _frozen(gap), scale)
