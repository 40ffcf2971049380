"""Synthetic runs whose best member set is known: the planted members carry the label, every
other member is noise (or exactly zero), laid out like a real block run (``embed``, then
``L{i}.attn#0`` and ``L{i}.mlp#0`` per layer)."""

from __future__ import annotations

import numpy as np

from extraction.contributions import Contributions, Member


def planted_run(planted=("L1.mlp#0", "L3.attn#0", "L4.mlp#0"), *, n=400, layers=5, c=3,
                signal=1.5, others="noise", seed=0) -> Contributions:
    """A run of ``1 + 2·layers`` members where the members named in ``planted`` each add
    ``signal`` to the label's logit (plus unit noise) and the others are unit noise
    (``others="noise"``) or exactly zero (``"zero"``: adding them changes nothing)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    members = [Member("embed", "embed")]
    for i in range(layers):
        members += [Member(f"L{i}.attn#0", "attn", i), Member(f"L{i}.mlp#0", "mlp", i)]
    names = [m.name for m in members]
    u = rng.normal(size=(n, len(members), c))
    if others == "zero":
        u[:, [i for i, name in enumerate(names) if name not in planted], :] = 0.0
    for p in planted:
        u[:, names.index(p), :] += signal * np.eye(c)[y]
    u = u.astype(np.float32)
    bias = np.zeros(c, np.float32)
    return Contributions(u, bias, y, u.sum(1) + bias, np.ones((n, len(members))), members,
                         [f"o{j}" for j in range(c)],
                         meta={"model": {"model_id": "planted"}, "task": "synthetic"})
