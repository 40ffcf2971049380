"""One seed plan per study: every random procedure draws from its own named stream.

A study has one seed. :class:`SeedPlan` turns it into one :class:`numpy.random.SeedSequence`
and gives each procedure a child named by its path, e.g. ``("curves", "mi_readout",
"verdicts")`` or ``("selection", "verdicts")``: the child's ``spawn_key`` is the root's
followed by one 32-bit word per path element (CRC-32 of the name). Children of different
paths are different streams, and each is independent of the order in which procedures run,
of which of them run at all, and of ``n_jobs``; inside a procedure the engine spawns one
child per replicate from it (:mod:`infodiv.inference.replicates`).

Names rather than positions: a spawned child's key depends on how many children were spawned
before it, so adding a stage would shift every later stream; a name never moves.
"""

from __future__ import annotations

import zlib

import numpy as np

__all__ = ["SeedPlan"]


class SeedPlan:
    """Named child streams of one study seed (module docstring).

    Parameters
    ----------
    seed : int >= 0
        The study's seed.
    """

    def __init__(self, seed: int = 0):
        if int(seed) != seed or seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
        self.seed = int(seed)
        self.root = np.random.SeedSequence(self.seed)

    def sequence(self, *path: str) -> np.random.SeedSequence:
        """The stream of the procedure named ``path`` (a non-empty sequence of names)."""
        if not path or not all(isinstance(p, str) and p for p in path):
            raise ValueError(f"path must be one or more non-empty names, got {path!r}")
        key = tuple(zlib.crc32(p.encode()) for p in path)
        return np.random.SeedSequence(self.root.entropy, spawn_key=self.root.spawn_key + key)

    def integer(self, *path: str) -> int:
        """An integer ``random_state`` in [0, 2**31 − 1) drawn from ``path``'s stream, for the
        functions that take an integer seed."""
        return int(self.sequence(*path).generate_state(1, np.uint32)[0] % (2**31 - 1))
