"""Controls with known answers, run through the same code path as real objectives.

- :class:`ModularSurrogate`: f(S)_i = Σ_{m∈S} v_im + σ·ε_i(S) — modular up to noise that is a
  fixed function of S (seeded by S), so the DR tests must find no effect; the false-positive
  rate over seeds measures the calibration of the bootstrap + BH procedure.
  :func:`matched_modular_surrogate` takes v and σ from a real set function.
- :func:`conditionally_independent_ensemble`: U_m = μ_m·onehot(Y) + independent noise, so the
  members are independent given Y (Theorem 7's premise holds) and I(U_S; Y) is submodular.
- :func:`xor_ensemble`: Y = 1[U_0·U_1 > 0]; each parent alone carries no information, the pair
  carries about 1 bit, so adding U_1 after U_0 gains more than adding it first (a violation).
- :class:`FacilityLocation`: f(S)_i = max_{j∈S} w_ij (0 for ∅), monotone submodular.
- :func:`greedy_vs_optimum`: exact enumeration for M ≤ 16, f(greedy_k) / f(OPT_k)
  (Nemhauser–Wolsey–Fisher 1978: ≥ 1 − 1/e for monotone submodular f with f(∅) = 0).
"""

from __future__ import annotations

import itertools

import numpy as np

from extraction.contributions import Contributions, Member

from .curves import greedy_forward
from .setfunctions import SetFunction, check_members

__all__ = ["ModularSurrogate", "matched_modular_surrogate", "FacilityLocation",
           "conditionally_independent_ensemble", "xor_ensemble", "greedy_vs_optimum"]


class ModularSurrogate(SetFunction):
    """Per-example modular function plus set-seeded noise (module docstring).

    Parameters
    ----------
    values : array ``[n, M]``
        Per-example member values v_im.
    noise_scale : float
        σ of the noise ε_i(S) ~ N(0, 1), drawn from ``SeedSequence(random_state, spawn_key=S)``
        so that repeated evaluations of the same set agree.
    """

    name = "modular_surrogate"

    def __init__(self, values, noise_scale: float = 0.0, *, random_state: int = 0):
        values = np.asarray(values, dtype=np.float64)
        if values.ndim != 2:
            raise ValueError(f"values must be [n, M], got shape {values.shape}")
        if noise_scale < 0:
            raise ValueError(f"noise_scale must be >= 0, got {noise_scale}")
        super().__init__(values.shape[1], values.shape[0])
        self.values, self.noise_scale, self.seed = values, float(noise_scale), int(random_state)

    def scores(self, members):
        idx = check_members(members, self.n_members)
        out = self.values[:, idx].sum(axis=1)
        if self.noise_scale:
            key = tuple(int(j) for j in np.sort(idx))  # () for the empty set
            rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=key))
            out = out + self.noise_scale * rng.standard_normal(self.n_examples)
        return out


def matched_modular_surrogate(f: SetFunction, *, random_state: int = 0) -> ModularSurrogate:
    """A modular surrogate with f's singleton gains per example and f's noise level.

    v_im = f({m})_i − f(∅)_i (per-example singleton gains of f); σ = the standard deviation
    over examples of f(V)_i − Σ_m v_im, scaled by 1/√M (the per-evaluation noise of f that
    a modular model does not explain, spread over the members).
    """
    if not f.per_example:
        raise ValueError(f"{f.name} has no per-example scores to match")
    empty = f.scores([])
    vals = np.stack([f.scores([m]) - empty for m in range(f.n_members)], axis=1)
    resid = f.scores(list(range(f.n_members))) - empty - vals.sum(axis=1)
    sigma = float(resid.std() / np.sqrt(f.n_members))
    sur = ModularSurrogate(vals, sigma, random_state=random_state)
    sur.greater_is_better = f.greater_is_better
    return sur


class FacilityLocation(SetFunction):
    """f(S)_i = max_{j∈S} w_ij with w ≥ 0 and f(∅) = 0: monotone submodular."""

    name = "facility_location"

    def __init__(self, weights):
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 2 or (w < 0).any():
            raise ValueError("weights must be a non-negative [n, M] array")
        super().__init__(w.shape[1], w.shape[0])
        self.w = w

    def scores(self, members):
        idx = check_members(members, self.n_members)
        return self.w[:, idx].max(axis=1) if idx.size else np.zeros(self.n_examples)

    def restrict(self, examples):
        return FacilityLocation(self.w[np.asarray(examples)])


def _make_contributions(u, labels, meta) -> Contributions:
    n, m, c = u.shape
    members = [Member("embed", "embed", -1, junction=True)] + [
        Member(f"L{i}.{'attn' if i % 2 == 0 else 'mlp'}", "attn" if i % 2 == 0 else "mlp", i)
        for i in range(m - 1)]
    bias = np.zeros(c, dtype=np.float32)
    return Contributions(u.astype(np.float32), bias, labels, u.sum(axis=1) + bias,
                         np.ones((n, m), dtype=np.float32), members,
                         [f"option{j}" for j in range(c)], None, meta)


def conditionally_independent_ensemble(n_examples=2000, n_members=12, *, n_options=2, mu=0.3,
                                       random_state=0) -> Contributions:
    """U_m = μ_m·onehot(Y) + N(0, I_C) noise, independent across members given Y.

    ``mu`` is a scalar or an ``[M]`` array of signal strengths.
    """
    rng = np.random.default_rng(random_state)
    y = rng.integers(0, n_options, n_examples)
    mus = np.broadcast_to(np.asarray(mu, dtype=np.float64), (n_members,))
    u = (mus[None, :, None] * np.eye(n_options)[y][:, None, :]
         + rng.standard_normal((n_examples, n_members, n_options)))
    return _make_contributions(u, y, {"control": "conditionally_independent", "mu": mus.tolist()})


def xor_ensemble(n_examples=2000, n_members=6, *, random_state=0) -> Contributions:
    """Two XOR parents (members 0 and 1) and independent noise members; Y = 1[U_0·U_1 > 0].

    Each member's logit vector is (0, v_m), so its centred variable is ∝ v_m.
    """
    if n_members < 2:
        raise ValueError(f"xor_ensemble needs at least 2 members, got {n_members}")
    rng = np.random.default_rng(random_state)
    v = rng.standard_normal((n_examples, n_members))
    y = (v[:, 0] * v[:, 1] > 0).astype(np.int64)
    u = np.stack([np.zeros_like(v), v], axis=2)
    return _make_contributions(u, y, {"control": "xor"})


def greedy_vs_optimum(f: SetFunction) -> dict:
    """f(greedy_k) against the exact optimum over all size-k sets, k = 1..M (M ≤ 16).

    Returns ``greedy``, ``optimum`` (values, utility direction of f), ``ratio`` =
    f(greedy_k)/f(OPT_k) (for maximised, positive objectives) and the optimal sets.
    """
    m = f.n_members
    if m > 16:
        raise ValueError(f"exact enumeration needs M <= 16, got M={m} "
                         f"({2 ** m} subsets)")
    sign = f.sign()
    _, greedy_vals, _ = greedy_forward(f)
    best = np.full(m + 1, -np.inf)
    best_sets = [()] * (m + 1)
    best[0] = sign * f.value([])
    for k in range(1, m + 1):
        for s in itertools.combinations(range(m), k):
            v = sign * f.value(list(s))
            if v > best[k]:
                best[k], best_sets[k] = v, s
    opt = sign * best
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(opt != 0, greedy_vals / opt, np.nan)
    return {"greedy": greedy_vals, "optimum": opt, "ratio": ratio,
            "optimal_sets": [list(s) for s in best_sets]}
