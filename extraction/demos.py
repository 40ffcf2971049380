"""In-context demonstrations: which records precede each prompt (seeded, per example or fixed).

Torch-free; used by :meth:`extraction.tasks.Task.with_demonstrations` and
:func:`extraction.tasks.get_task`.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

__all__ = ["DEMO_SEPARATOR", "DemoSource", "demo_prefixes"]

#: what follows every demonstration (and so separates the last one from the prompt)
DEMO_SEPARATOR = "\n\n"


class DemoSource(Protocol):
    """What demonstrations are drawn from (an :class:`extraction.tasks.Task`): its number of
    records and record ``j`` written as a demonstration (prompt + gold answer)."""

    def __len__(self) -> int: ...

    def demonstration(self, i: int) -> str: ...


def demo_prefixes(src: DemoSource, count: int, shots: int, seed: int, *, exclude_self: bool,
                   fixed: bool = False) -> list[list[str]]:
    """Demonstration prefixes for examples ``0..count-1`` drawn from ``src``.

    Example ``i`` gets ``shots`` distinct records of ``src`` drawn with
    ``numpy.random.default_rng([seed, i])`` (excluding record ``i`` when ``exclude_self``),
    each written as :meth:`Task.demonstration` and followed by ``DEMO_SEPARATOR`` (one list of
    demonstrations per example). ``fixed``: one draw with ``default_rng([seed])`` for every
    example (with ``exclude_self``, among records ``count..`` that are no example).
    """
    if fixed:
        first = count if exclude_self else 0
        if shots > len(src) - first:
            raise ValueError(f"shots={shots} fixed demonstrations requested but the pool holds "
                             f"only {len(src) - first} records that are not examples")
        idx = first + np.random.default_rng([int(seed)]).choice(len(src) - first, size=shots,
                                                                 replace=False)
        return [[src.demonstration(int(j)) + DEMO_SEPARATOR for j in idx]] * count
    n_pool = len(src) - (1 if exclude_self else 0)
    if shots > n_pool:
        raise ValueError(f"shots={shots} demonstrations requested but the pool holds only {n_pool}")
    demos = []
    for i in range(count):
        rng = np.random.default_rng([int(seed), i])
        idx = rng.choice(n_pool, size=shots, replace=False)
        if exclude_self:
            idx = idx + (idx >= i)  # skip the example itself
        demos.append([src.demonstration(int(j)) + DEMO_SEPARATOR for j in idx])
    return demos
