"""Synthetic ensemble members with exactly known ``I(U;Y)``, ``I(U_m;Y)`` and ``D``.

Built like real members (an ensemble's per-member logit contributions over ``C = K`` options):

    Y ~ pi,   z = mu_Y + eps (latent, L dims, eps ~ N(0, I)),   xi ~ N(0, I_q) (shared nuisance),
    U_m = B_m z + S_m xi + sigma eta_m,   eta_m ~ N(0, I_C),   m = 1..M,

with ``B_m = w_m mu + tau P_m`` (``mu`` the ``K x L`` class means, so the summed logits
``sum_m U_m`` are the Bayes logits of ``z`` plus perturbations: weights ``w_m > 0`` sum to 1,
the ``P_m`` sum to 0), ``S_m = 1_C a_m^T + rho R_m`` (a class-free component shared by all
members, mostly common-mode, which makes the members strongly correlated) and small member
noise ``sigma``. Given ``Y``, ``U`` is Gaussian with mean ``B mu_Y`` and the SAME covariance
``Sigma = B B^T + S S^T + sigma^2 I`` for every class, so the exact posterior is a softmax of
linear discriminants, ``log P(y|U) = log pi_y + mu_y^T t - mu_y^T G mu_y / 2 + const`` with the
sufficient statistic ``t = B^T Sigma^{-1} U ~ N(G mu_y, G)``, ``G = B^T Sigma^{-1} B`` (L x L).
So ``I(U;Y) = E[log P(Y|U) - log pi_Y]`` is a Monte Carlo average in L dimensions on exact
posteriors (standard error reported); each member likewise with ``G_m = B_m^T Sigma_mm^{-1}
B_m``; ``D = I(U;Y) - sum_m I(U_m;Y)``, its MC error from independent draws per term.

``warp=True`` applies a fixed strictly monotone map to every coordinate (alternately
``sinh(1.5 v / s)`` and ``exp(v / s)``, ``s`` the coordinate's sd): a bijection per coordinate,
so every information quantity is unchanged while the data stop being Gaussian and the summed
"logits" stop being logits.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy.special import log_softmax

__all__ = ["MemberModel", "member_cases", "truth"]

LN2 = np.log(2.0)


@dataclass(frozen=True)
class MemberModel:
    """One synthetic ensemble (see the module docstring); ``seed`` fixes its parameters."""

    name: str
    n_classes: int
    n_members: int
    separation: float
    latent_dim: int = 3
    shared_dim: int = 2
    tau: float = 0.6
    rho: float = 0.3
    sigma: float = 0.1
    warp: bool = False
    seed: int = 0

    @property
    def params(self):
        return _params(self)

    def sample(self, n: int, rng: np.random.Generator):
        """``(u (n, M, C) float64, y (n,) int64)``."""
        mu, prior, b, s = self.params
        k, m = self.n_classes, self.n_members
        y = rng.choice(k, size=n, p=prior)
        z = mu[y] + rng.standard_normal((n, self.latent_dim))
        xi = rng.standard_normal((n, self.shared_dim))
        u = z @ b.T + xi @ s.T + self.sigma * rng.standard_normal((n, m * k))
        if self.warp:
            u = _warp(u, self.params)
        return u.reshape(n, m, k), y


def _warp(u, params):
    mu, prior, b, s = params
    mean = prior @ (mu @ b.T)
    sd = np.sqrt(np.diag(b @ b.T + s @ s.T) + np.var(mu @ b.T, axis=0) + 1e-2)
    v = (u - mean) / sd
    out = np.where(np.arange(u.shape[1]) % 2 == 0, np.sinh(1.5 * v), np.exp(v))
    return out


@cache
def _params(model: MemberModel):
    rng = np.random.default_rng([model.seed, model.n_classes, model.n_members])
    k, m, lat, q = model.n_classes, model.n_members, model.latent_dim, model.shared_dim
    mu = rng.standard_normal((k, lat))
    mu -= mu.mean(axis=0)
    mu *= model.separation / np.sqrt((mu ** 2).sum(axis=1).mean())
    prior = np.full(k, 1.0 / k)
    w = 1.0 + np.arange(m) / m
    w /= w.sum()
    p = rng.standard_normal((m, k, lat))
    p -= p.mean(axis=0)
    b = (w[:, None, None] * mu[None] + model.tau * p / np.sqrt(m)).reshape(m * k, lat)
    a = rng.standard_normal((m, 1, q))
    s = (np.ones((1, k, 1)) * a + model.rho * rng.standard_normal((m, k, q))).reshape(m * k, q)
    return mu, prior, b, s


def _info_mc(g: np.ndarray, mu: np.ndarray, prior: np.ndarray, n_mc: int, rng):
    """``(mean, se)`` in nats of ``log P(Y|t) - log pi_Y`` with ``t ~ N(G mu_Y, G)``."""
    vals, vecs = np.linalg.eigh((g + g.T) / 2)
    root = vecs * np.sqrt(np.clip(vals, 0.0, None))
    y = rng.choice(len(prior), size=n_mc, p=prior)
    t = mu[y] @ g + rng.standard_normal((n_mc, len(g))) @ root.T
    logits = np.log(prior) + t @ mu.T - 0.5 * np.einsum("kl,lj,kj->k", mu, g, mu)
    terms = log_softmax(logits, axis=1)[np.arange(n_mc), y] - np.log(prior[y])
    return float(terms.mean()), float(terms.std(ddof=1) / np.sqrt(n_mc))


@cache
def truth(model: MemberModel, n_mc: int = 100_000) -> dict:
    """Exact quantities (bits) with their Monte Carlo standard errors (``*_se``)."""
    mu, prior, b, s = model.params
    k, m = model.n_classes, model.n_members
    cov = b @ b.T + s @ s.T + model.sigma ** 2 * np.eye(m * k)
    rng = np.random.default_rng([model.seed, 7])
    joint, joint_se = _info_mc(b.T @ np.linalg.solve(cov, b), mu, prior, n_mc, rng)
    rel, rel_se = [], []
    for i in range(m):
        sl = slice(i * k, (i + 1) * k)
        g = b[sl].T @ np.linalg.solve(cov[sl, sl], b[sl])
        v, e = _info_mc(g, mu, prior, n_mc, rng)
        rel.append(v)
        rel_se.append(e)
    rel, rel_se = np.asarray(rel) / LN2, np.asarray(rel_se) / LN2
    joint, joint_se = joint / LN2, joint_se / LN2
    rel_total_se = float(np.sqrt(np.sum(rel_se ** 2)))
    return {"h_y": float(-(prior * np.log2(prior)).sum()), "joint": joint,
            "joint_se": joint_se, "relevancies": rel, "relevancy": float(rel.sum()),
            "relevancy_se": rel_total_se, "diversity": float(joint - rel.sum()),
            "diversity_se": float(np.hypot(joint_se, rel_total_se))}


def member_cases() -> dict[str, MemberModel]:
    """The suite's cases by name: 2 and 4 classes, M = 4 to 61, Gaussian and warped."""
    cases = [MemberModel("binary_M4", 2, 4, 2.0),
             MemberModel("binary_M61", 2, 61, 2.0),
             MemberModel("binary_M16_warped", 2, 16, 2.0, warp=True),
             MemberModel("four_M8", 4, 8, 2.5),
             MemberModel("four_M61", 4, 61, 2.5),
             MemberModel("four_M8_warped", 4, 8, 2.5, warp=True)]
    return {c.name: c for c in cases}


#: tolerance of the suite: |estimate - truth| <= max(TOL_BITS, TOL_REL |truth|)
TOL_BITS, TOL_REL = 0.1, 0.12


def tolerance(true_bits: float) -> float:
    """The suite's tolerance for a quantity with value ``true_bits``."""
    return max(TOL_BITS, TOL_REL * abs(true_bits))


def _covers(pair, value) -> bool:
    return bool(pair[0] <= value <= pair[1])


def run_case(model: MemberModel, n: int, seeds, *, estimate=None, **options) -> list[dict]:
    """Estimate ``I(U;Y)``, relevancy and ``D`` on ``len(seeds)`` samples of ``model``.

    ``estimate(u, y, random_state)`` returns a
    :class:`estimators.label_decomposition.LabelDecomposition` (default: the package default
    with ``options``). One row per quantity: truth (with its MC error), mean / sd of the
    estimates, error of the mean, whether every seed is within :func:`tolerance`, how many
    estimates exceed ``H(Y)``, interval coverage over seeds and (joint) bracket coverage.
    """
    import time
    import zlib

    from estimators.label_decomposition import label_decomposition

    if estimate is None:
        def estimate(u, y, random_state):
            return label_decomposition(u, y, random_state=random_state, **options)
    tr = truth(model)
    results, times = [], []
    for seed in seeds:
        u, y = model.sample(n, np.random.default_rng([seed, zlib.crc32(model.name.encode())]))
        t0 = time.perf_counter()
        results.append(estimate(u, y, seed))
        times.append(time.perf_counter() - t0)
    rows = []
    for quantity, key, interval in (("I(U;Y)", "joint", "joint_interval"),
                                    ("R = sum I(U_m;Y)", "relevancy", "relevancy_interval"),
                                    ("D = I - R", "diversity", "diversity_interval")):
        values = np.array([getattr(r, key) for r in results])
        row = {"case": model.name, "quantity": quantity, "n": n, "seeds": len(results),
               "n_classes": model.n_classes, "n_members": model.n_members,
               "warped": model.warp, "true_bits": tr[key], "true_mc_se": tr[f"{key}_se"],
               "mean_bits": float(values.mean()),
               "sd_bits": float(values.std(ddof=1)) if len(values) > 1 else 0.0,
               "error_bits": float(values.mean() - tr[key]), "tolerance": tolerance(tr[key]),
               "all_within": bool(np.all(np.abs(values - tr[key]) <= tolerance(tr[key]))),
               "interval_coverage": float(np.mean([_covers(getattr(r, interval), tr[key])
                                                   for r in results])),
               "time_s": float(np.mean(times)), "estimates": values.tolist()}
        if key == "joint":
            row["above_h_y"] = int(np.sum(values > np.array([r.h_y for r in results])))
            row["bracket_coverage"] = float(np.mean([
                _covers((r.joint_lower, r.joint_upper), tr[key]) for r in results]))
            row["max_member_error"] = float(max(
                np.abs(np.array(r.relevancies) - tr["relevancies"]).max() for r in results))
        rows.append(row)
    return rows
