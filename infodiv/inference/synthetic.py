"""Synthetic runs with dependent members, for tests and benchmarks of the inference layer.

:func:`dependent_ensemble` draws U_m = μ_m·(onehot(Y) − 1/C) + √ρ·L·Z + √(1−ρ)·ε_m with one
latent factor Z ~ N(0, I_C) shared by all members (loadings L = ±1 per member, so members are
dependent both marginally and given Y: TC(U | Y) > 0), independent noise ε_m ~ N(0, I_C) and
per-member signal μ_m drawn uniformly in [0, 2·signal]. ``signal = 0`` gives members that
carry nothing about Y but are still dependent.
"""

from __future__ import annotations

import numpy as np

from extraction.contributions import Contributions

__all__ = ["dependent_ensemble"]


def dependent_ensemble(n_examples: int = 400, n_members: int = 8, *, n_options: int = 2,
                       signal: float = 0.3, rho: float = 0.3, random_state=0) -> Contributions:
    """A run with a shared latent factor and per-member signal (module docstring)."""
    from extraction.contributions import Member

    if not 0 <= rho < 1:
        raise ValueError(f"rho must lie in [0, 1), got {rho}")
    if n_members < 2 or n_options < 2:
        raise ValueError(f"need n_members >= 2 and n_options >= 2, got {n_members}, {n_options}")
    rng = np.random.default_rng(random_state)
    y = rng.integers(0, n_options, n_examples)
    mu = rng.uniform(0, 2 * signal, n_members)
    load = rng.choice([-1.0, 1.0], n_members)
    target = np.eye(n_options)[y] - 1.0 / n_options
    z = rng.standard_normal((n_examples, 1, n_options))
    u = (mu[None, :, None] * target[:, None, :] + np.sqrt(rho) * load[None, :, None] * z
         + np.sqrt(1 - rho) * rng.standard_normal((n_examples, n_members, n_options)))
    members = [Member("embed", "embed", -1)] + [
        Member(f"L{i // 2}.{'attn' if i % 2 == 0 else 'mlp'}", "attn" if i % 2 == 0 else "mlp",
               i // 2) for i in range(n_members - 1)]
    bias = np.zeros(n_options, dtype=np.float32)
    u = u.astype(np.float32)
    return Contributions(u, bias, y, u.sum(axis=1), np.ones((n_examples, n_members), np.float32),
                         members, [f"option{j}" for j in range(n_options)], None,
                         {"model": "synthetic-dependent", "task": "synthetic",
                          "signal": signal, "rho": rho, "random_state": random_state})
