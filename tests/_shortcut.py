"""What the engine's power detector computes on one surrogate, from the public pieces: the
real run's label null of a claim, and the claim's one-fit shortcut statistic judged by the
claim's rule (:func:`infodiv.inference.engine.detect`)."""

from __future__ import annotations

import numpy as np

from infodiv.inference.claim import Replicate
from infodiv.inference.engine import ClaimStatistics, detect
from infodiv.inference.nulls import permutation_null


def label_null(run, claim, design, n_permutations: int, seed: int) -> np.ndarray:
    """The claim's label-permutation null draws on ``run`` (``[K]`` or ``[K, T]``), the whole
    statistic rerun on every permutation."""
    null = permutation_null(run, ClaimStatistics([claim], design),
                            n_permutations=n_permutations, random_state=seed, progress=False)
    return np.asarray(null[claim.name].distribution)


def shortcut_statistic(claim, design, run, rng, n_bootstrap: int) -> dict | None:
    """The claim's power shortcut on ``run``: one fit, examples reweighted."""
    return claim.quick(Replicate(run, design, rng), rng.spawn(1)[0], n_bootstrap)


def shortcut_detects(claim, design, run, null, rng, n_bootstrap: int,
                     alpha: float = 0.05) -> bool:
    """The claim's rule on its shortcut statistic of ``run`` against the null draws ``null``."""
    return detect(claim, shortcut_statistic(claim, design, run, rng, n_bootstrap), null, alpha)
