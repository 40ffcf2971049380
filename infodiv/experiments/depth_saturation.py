"""Where accuracy saturates along depth, per difficulty, and whether that depth moves with the
difficulty (the depth experiment asks for two values of k and whether the saturation depth
moves between them; DESIGN.md 2.9).

The saturation depth of a grid is the smallest trained unshared depth whose seed-median held-out
accuracy reaches ``threshold`` (0.90 by default): the grid's own target (median accuracy at the
deepest depth >= 0.90) applied to every depth,

.. math:: d^*(K) = \\min\\{d : \\operatorname{median}_s a_{K,s}(d) \\ge \\tau\\},

with :math:`a_{K,s}(d)` the held-out accuracy of the depth-d model of seed s at difficulty K;
:math:`d^* = \\infty` ("beyond the grid") when no trained depth reaches it. The median (with 3
seeds: at least 2 of them reach it) keeps one seed that never leaves the chance plateau, an
optimisation failure, from moving the depth the architecture needs. Its uncertainty comes from
the same two-level replicates as every interval across models
(:func:`infodiv.experiments.across.seed_example_interval`): in each shared example resample b the
seeds are resampled with replacement (one draw for every depth, as the growth laws across depth do:
a seed's models share their data order), the median over them is taken per depth and
:math:`d^*_b` read off. While some depth lacks a seed (still training), every depth keeps all
of its finished seeds, in the point and in its own draws: a depth is never judged on fewer
seeds than it has.

Roots of different difficulty have different held-out files, so their replicates are
independent draws; the shift :math:`d^*(K_{hard}) - d^*(K_{easy})` is judged on the replicate
pairs (b of one root with b of the other: independent, so any pairing is a draw from the product
of the two bootstrap distributions): the share of pairs in which the harder difficulty
saturates deeper, in which both saturate at the same depth and in which it saturates earlier.
"""

from __future__ import annotations

import numpy as np

from .across import depth_groups

__all__ = ["THRESHOLD", "saturation_depth", "saturation_shift"]

#: the accuracy a depth must reach to count as saturated (the grid's target)
THRESHOLD = 0.90


def _first_reaching(acc, depths, threshold) -> float:
    """Smallest depth whose accuracy reaches ``threshold`` (``inf`` when none does)."""
    hit = np.flatnonzero(np.asarray(acc) >= threshold)
    return float(depths[hit[0]]) if hit.size else float("inf")


def _json_depth(d: float):
    return None if not np.isfinite(d) else int(d)


def saturation_depth(records, points, reps, *, threshold: float = THRESHOLD,
                     random_state: int = 0) -> dict | None:
    """The saturation depth of one difficulty's unshared models (module docstring).

    Parameters
    ----------
    records : list of dict
        ``summary.json`` model records of one difficulty (``shared``, ``depth``, ``seed``,
        ``model``).
    points, reps : dict
        Per model: the held-out ``accuracy`` and its replicates on the root's shared example
        resamples (:func:`infodiv.experiments.depth_across.points_and_replicates`).
    threshold : float
        Accuracy that counts as saturated, in (0, 1].
    random_state : int
        Seed of the seed resampling.

    Returns
    -------
    dict or None
        ``depth`` (``None``: beyond the deepest trained depth), ``depths`` and the seed-median
        ``accuracy`` per depth, ``seeds``, ``replicates`` (``n``, ``share`` per depth and
        ``"beyond"``, and the raw per-replicate depths with ``None`` for beyond); ``None`` when
        no unshared depth has a finished model.
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must lie in (0, 1], got {threshold}")
    groups = {d: rs for (s, d), rs in depth_groups(records).items() if not s}
    if not groups:
        return None
    seed_sets = {frozenset(int(r["seed"]) for r in rs) for rs in groups.values()}
    # every depth has the same seeds: one draw serves them all; otherwise (a depth still
    # training) each depth keeps all of its own seeds and draws them on its own
    seeds = sorted(next(iter(seed_sets))) if len(seed_sets) == 1 else None
    depths = np.array(sorted(groups), dtype=np.float64)
    rng = np.random.default_rng(random_state)
    medians, draws = [], []
    for d in sorted(groups):
        rs = sorted(groups[d], key=lambda r: int(r["seed"]))
        medians.append(float(np.median([points[r["model"]]["accuracy"] for r in rs])))
        draws.append(np.stack([np.asarray(reps[r["model"]]["accuracy"], np.float64)
                               for r in rs]))                                   # [S_d, B]
    n_b = min(x.shape[1] for x in draws)
    rep_medians = np.empty((n_b, len(draws)))
    # one seed draw per replicate for every depth (a seed's models share their data order)
    shared_pick = None if seeds is None else rng.integers(0, len(seeds), size=(n_b, len(seeds)))
    for j, x in enumerate(draws):
        pick = (shared_pick if shared_pick is not None
                else rng.integers(0, x.shape[0], size=(n_b, x.shape[0])))
        rep_medians[:, j] = np.median(x[pick, np.arange(n_b)[:, None]], axis=1)
    rep_depth = np.array([_first_reaching(row, depths, threshold) for row in rep_medians])
    share = {str(int(d)): float(np.mean(rep_depth == d)) for d in depths}
    share["beyond"] = float(np.mean(~np.isfinite(rep_depth)))
    return {"threshold": float(threshold),
            "depth": _json_depth(_first_reaching(medians, depths, threshold)),
            "depths": [int(d) for d in depths], "accuracy": medians,
            "seeds": seeds if seeds is not None else "per depth",
            "deepest": int(depths[-1]),
            "replicates": {"n": int(n_b), "share": share,
                           "depth": [_json_depth(d) for d in rep_depth]}}


def _as_array(sat) -> np.ndarray:
    return np.array([np.inf if d is None else d for d in sat["replicates"]["depth"]],
                    dtype=np.float64)


def saturation_shift(by_hops: dict) -> dict | None:
    """The hardest against the easiest difficulty's saturation depth (module docstring).

    Parameters
    ----------
    by_hops : dict
        ``{K: saturation_depth(...)}`` with at least two difficulties (``None`` entries are
        skipped).

    Returns
    -------
    dict or None
        ``harder``, ``easier`` (the K), their depths, ``n_pairs`` and the shares of replicate
        pairs with the harder difficulty saturating ``deeper``, at the ``same`` depth or
        ``earlier``; ``None`` with fewer than two difficulties.
    """
    ks = sorted((int(k) for k, v in by_hops.items() if v), reverse=True)
    if len(ks) < 2:
        return None
    hard, easy = by_hops[str(ks[0])], by_hops[str(ks[-1])]
    a, b = _as_array(hard), _as_array(easy)
    n = min(a.size, b.size)
    a, b = a[:n], b[:n]
    both_beyond = ~np.isfinite(a) & ~np.isfinite(b)
    return {"harder": ks[0], "easier": ks[-1], "harder_depth": hard["depth"],
            "easier_depth": easy["depth"], "n_pairs": int(n),
            "deeper": float(np.mean((a > b) & ~both_beyond)),
            "same": float(np.mean((a == b) | both_beyond)),
            "earlier": float(np.mean(a < b)),
            "easier_deepest": easy["deepest"], "harder_deepest": hard["deepest"]}
