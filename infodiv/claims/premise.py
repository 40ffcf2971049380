"""Claim: Theorem 7's premise fails — the members are dependent given the label.

Theorem 7 assumes the members conditionally independent given Y. Tested directly on the whole
member vectors u_m (C coordinates each; coordinates constant within a class are dropped):

    dep = Σ_y p(y) · mean over coordinate pairs (a, b) of different members of r²_y(a, b),

r_y the within-class Pearson correlation. Its null is the premise made true on the same rows:
every member permuted independently within each class
(:func:`infodiv.inference.surrogates.within_class_permutation`), which keeps each member's
class-conditional distribution and gives r² its chance level ≈ 1/(n_y − 1). The statistic
(a vector, judged by :func:`decide`) holds the effect size excess = dep − mean(dep under
:data:`N_WITHIN` permutations), the number of permutations at least as large as the observed
dep (exact permutation p = (1 + count)/(1 + N_WITHIN)), the between-class share of the
coordinates' variance (the members' label signal) and dep itself.

Why not the label null: with shuffled labels the "classes" are random groups and the premise
becomes "the members are independent", which marginally correlated members violate, so a
premise test rightly fires there. The rule therefore asks the premise question only about
members that carry label signal: detected = within-class permutation p < α and the label
signal beyond its label-permutation null (p < α) and excess > 0. Its false-positive rate is
the rate on the conditionally independent control (premise true); its rate on shuffled labels
is at most the signal gate's, α. Matched case: planted within-class dependence (the strongest
members copied with their own within-class noise onto others:
:func:`infodiv.inference.surrogates.planted_redundancy`).
"""

from __future__ import annotations

import numpy as np

from ..inference.claim import Claim
from ._cases import MARGINS, redundancy_copies
from ._control import needs_members

__all__ = ["CLAIM", "within_class_dependence", "label_signal", "dependence_test", "decide",
           "null_statistic", "N_WITHIN"]

#: within-class permutations per replicate (p can reach 1/40 < 0.05)
N_WITHIN = 39


def _coordinates(u, labels):
    """Float64 ``[N, M, C]`` and the mask ``[M, C]`` of coordinates that vary in every class."""
    x = np.asarray(u, dtype=np.float64)
    keep = np.ones(x.shape[1:], dtype=bool)
    for c in np.unique(labels):
        keep &= x[labels == c].std(axis=0) > 0
    return x, keep


class _Dependence:
    """dep (module docstring) of one ``u`` ``[N, M, C]`` under any within-class row
    re-indexing: the coordinates, their members and the pairs of different members are
    found once; each call gathers the kept coordinates of every class's (re-indexed) rows
    straight into the ``[n_y, D]`` matrix the correlations are taken of (the same values in
    the same column-major layout as boolean-indexing the re-indexed ``[N, M, C]`` array, so
    every reduction adds in the same order)."""

    def __init__(self, u, labels):
        self.y = np.asarray(labels)
        x, keep = _coordinates(u, self.y)
        self.n, m, c = x.shape
        self.flat = x.reshape(-1)
        member, option = np.nonzero(keep)          # the kept coordinates in row-major order
        self.member, self.offset = member, (member * c + option)[:, None]
        self.stride = m * c
        other = member[:, None] != member[None, :]
        self.n_pairs = other.sum()
        self.other = np.flatnonzero(other)
        self.same = np.nonzero(~other)       # the pairs within one member (diagonal included)
        self.classes = [np.flatnonzero(self.y == cls) for cls in np.unique(self.y)]

    def __call__(self, perms=None) -> float:
        """dep with member m's rows of class y taken in the order ``perms[y][m]`` (per class
        ``[M, n_y]``, as :func:`~infodiv.inference.surrogates.class_permutations` draws
        them; None: the rows as they are)."""
        if self.n_pairs == 0:
            return float("nan")
        dep = 0.0
        for k, idx in enumerate(self.classes):
            src = idx[None, :] if perms is None else perms[k][self.member]
            z = self.flat.take(src * self.stride + self.offset).T   # [n_y, D], F-ordered
            z = z - z.mean(axis=0)                       # standardised: z.std's own terms
            z /= np.sqrt((z * z).sum(axis=0) / z.shape[0])
            dep += (z.shape[0] / self.n) * self._squares(z) / self.n_pairs
        return dep

    def _squares(self, z) -> float:
        """Σ r_jk² over the pairs of coordinates of different members, r = zᵀz / n_y. With
        more coordinates D than rows n_y, from the Gram matrix of the rows: Σ_all r² =
        ‖zᵀz‖²_F / n_y² = ‖z zᵀ‖²_F / n_y² (both are tr((zᵀz)²)), less the pairs within a
        member (Σ_i z_ij z_ik over those pairs only): n_y²·D instead of n_y·D² products."""
        n_y, d = z.shape
        if d <= n_y:
            r = (z.T @ z) / n_y
            return float((r.take(self.other) ** 2).sum())
        j, k = self.same
        within = np.einsum("ij,ij->j", z[:, j], z[:, k]) / n_y
        gram = (z @ z.T) / n_y
        return float((gram * gram).sum() - (within * within).sum())


def within_class_dependence(u, labels, rows=None) -> float:
    """dep (module docstring) of ``u`` ``[N, M, C]``; ``rows`` ``[N, M]`` re-indexes each
    member's rows (a within-class permutation), None keeps them."""
    dependence = _Dependence(u, labels)
    return dependence(None if rows is None else [rows[idx].T for idx in dependence.classes])


def label_signal(u, labels) -> float:
    """Mean over coordinates of the between-class share of their variance (η²)."""
    y = np.asarray(labels)
    x = np.asarray(u, dtype=np.float64).reshape(y.size, -1)
    total = x.var(axis=0)
    keep = total > 0
    means = np.stack([x[y == c].mean(axis=0) for c in np.unique(y)])
    p = np.unique(y, return_counts=True)[1] / y.size
    between = (p[:, None] * (means - x.mean(axis=0)) ** 2).sum(axis=0)
    return float(np.mean(between[keep] / total[keep])) if keep.any() else float("nan")


def dependence_test(u, labels, rng, n_within: int = N_WITHIN) -> np.ndarray:
    """``[excess, count, n_within, dep]``: dep, its excess over the mean of ``n_within``
    within-class permutations and how many of them reach it."""
    from ..inference.surrogates import class_permutations

    m = np.asarray(u).shape[1]
    dependence = _Dependence(u, labels)
    dep = dependence()
    null = np.array([dependence([perm for _, perm in class_permutations(labels, m, rng)])
                     for _ in range(n_within)])
    return np.array([dep - null.mean(), float((null >= dep).sum()), float(n_within), dep])


def statistic(rep) -> np.ndarray:
    """``[excess, count, n_within, dep, signal]`` on this replicate's rows."""
    test = dependence_test(rep.run.u, rep.run.labels, rep.rng)
    return np.append(test, label_signal(rep.run.u, rep.run.labels))


def null_statistic(rep) -> np.ndarray:
    """Under the label null :func:`decide` reads the label signal only: the within-class
    draws of :func:`statistic` are made (the stream advances as there) and the dependence
    entries left NaN."""
    from ..inference.surrogates import class_permutations

    for _ in range(N_WITHIN):
        class_permutations(rep.run.labels, rep.run.n_members, rep.rng)
    nan = float("nan")
    return np.array([nan, nan, float(N_WITHIN), nan, label_signal(rep.run.u, rep.run.labels)])


def quick(rep, rng, n_bootstrap) -> dict:
    """The power shortcut: :func:`decide` reads the within-class permutation count, not the
    example-bootstrap se, so a surrogate needs the statistic once (``se`` None)."""
    test = dependence_test(rep.run.u, rep.run.labels, rng)
    return {"value": np.append(test, label_signal(rep.run.u, rep.run.labels)), "se": None}


def decide(value, se, null, alpha) -> tuple[bool, dict]:
    """Within-class permutation p < α, label signal beyond its label null (p < α), excess > 0.

    ``value`` is the statistic averaged over the engine's reruns on the unchanged rows (the
    count averaged over independent permutation draws: (1 + mean count)/(1 + N_WITHIN) is
    conservative against the pooled permutation p); ``null`` the label-permutation draws
    (only the signal column is read)."""
    from ..inference.verdicts import null_p

    value = np.asarray(value, dtype=np.float64)
    excess, count, n_within, dep, signal = value
    p_within = float((1 + count) / (1 + n_within))
    null = np.asarray(null, dtype=np.float64).reshape(-1, value.size)
    p_signal = null_p(signal, null[:, 4], "greater")
    hit = bool(excess > 0 and p_within < alpha and p_signal < alpha)
    extra = {"estimate_meaning": "excess mean squared within-class correlation between "
                                 "members' coordinates over the premise-true permutations",
             "p_within_class": p_within, "p_label_signal": p_signal,
             "within_class_dependence": float(dep),
             "premise_true_dependence": float(dep - excess), "label_signal": float(signal),
             "excess_rms_correlation": float(np.sqrt(max(excess, 0.0)))}
    out = {"estimate": float(excess), "p": p_within, "extra": extra}
    if se is not None and np.all(np.isfinite(np.asarray(se)[:1])):
        half = 1.96 * float(np.asarray(se)[0])   # normal interval from the example bootstrap
        out["interval"] = [float(excess) - half, float(excess) + half]
    return hit, out


#: the claim in words, as every record and page prints it
WORDS = {
    "theorem": "Theorem 7's premise (members conditionally independent given Y), tested directly",
    "statistic_name": "excess within-class dependence: mean squared within-class correlation "
                      "between coordinates of different members, minus its value with every member "
                      "permuted within its class",
    "sentence": "the members are dependent given the label: Theorem 7's premise fails on this run",
    "conclusions": {
        "holds": "the members are dependent given the label, so Theorem 7's premise fails",
        "absent": "the members are as good as conditionally independent given the label",
    },
}

CLAIM = Claim(
    name="premise",
    statistic=statistic, direction="greater", surrogate="planted_redundancy",
    matched_case="a matched case with planted within-class dependence (the strongest members "
                 "copied with their own within-class noise onto others, same n)",
    rule="within-class permutation p < {alpha} (members permuted independently within each "
         "class: the premise made true), excess > 0, and the members' label signal beyond its "
         "label-permutation null (p < {alpha})",
    quick=quick, decide=decide, null_statistic=null_statistic,
    surrogate_kwargs=redundancy_copies, applies=needs_members,
    units="dimensionless (squared correlation)",
    group="control", short="dependence given Y", default=True,
    margin=MARGINS["squared_correlation"], members_only=True,
    **WORDS)
