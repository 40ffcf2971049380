"""Small synthetic :class:`~extraction.contributions.Contributions`: members that each carry a
random share of a class signal (:func:`synthetic`), and a three-member run of pure noise with
its task and model named in its meta (:func:`synthetic_run`)."""

from __future__ import annotations

import numpy as np

from extraction.contributions import Contributions, Member


def synthetic(n=400, m=8, c=3, signal=0.4, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    mu = signal * rng.random(m)
    u = (mu[None, :, None] * np.eye(c)[y][:, None, :]
         + rng.standard_normal((n, m, c))).astype(np.float32)
    bias = rng.normal(size=c).astype(np.float32) * 0.1
    members = [Member("embed", "embed")] + [Member(f"L{i}", "attn", i) for i in range(m - 1)]
    return Contributions(u, bias, y, u.sum(1) + bias, np.ones((n, m)), members,
                         [f"o{j}" for j in range(c)])


def synthetic_run(task="sst2", n=20, seed=0, model="some/model") -> Contributions:
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(n, 3, 2)).astype(np.float32)
    bias = np.zeros(2, np.float32)
    return Contributions(u, bias, np.arange(n) % 2, u.sum(1) + bias, np.ones((n, 3)),
                         [{"name": "embed", "kind": "embed"},
                          {"name": "L0.attn#0", "kind": "attn", "block": 0},
                          {"name": "L0.mlp#0", "kind": "mlp", "block": 0}],
                         ["negative", "positive"],
                         meta={"task": task, "n_examples": n, "model": {"model_id": model}})


def saved_tiny_run(path, n=40):
    """A saved 3-member, 2-option run of n rows (alternating labels, Gaussian members)."""
    rng = np.random.default_rng(0)
    u = rng.normal(size=(n, 3, 2)).astype(np.float32)
    members = [Member("embed", "embed"), Member("L0", "attn", 0), Member("L1", "attn", 1)]
    return Contributions(u, np.zeros(2, np.float32), np.arange(n) % 2, u.sum(1),
                         np.ones((n, 3)), members, ["a", "b"],
                         meta={"task": "t", "n_examples": n, "model": {"model_id": "m"}}
                         ).save(path)
