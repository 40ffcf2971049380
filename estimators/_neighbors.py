"""Max-norm neighbour searches and neighbour counts for the kNN estimators.

Three interchangeable back ends compute exactly the same integers:

* sorting for the counts in spaces of one or two coordinates (:mod:`estimators._sorted_counts`:
  binary searches and one Fenwick-tree sweep, ``O(n log n)``), the marginal counts of KSG on
  scalar or 2-D variables, which a tree answers much more slowly when balls hold many points;
* kd-trees when the joint space has at most :data:`TREE_MAX_DIMS` dimensions, where they are
  efficient: :class:`scipy.spatial.cKDTree` for k-th neighbour searches and
  :class:`sklearn.neighbors.KDTree` (node-level counting) for radius counts, on all cores;
* brute force in row chunks above that, where a kd-tree degenerates to a slow linear scan. The
  max-norm distance over a concatenation of blocks is the maximum of the per-block max-norm
  distances, so one ``cdist(..., "chebyshev")`` per block and row chunk gives both the joint
  k-th-neighbour distance and every marginal count. Chunks are sized to stay under
  :data:`CHUNK_BYTES` and run in threads (NumPy and SciPy release the GIL).

Distances are never rounded or recomputed differently between the two stages, so "strictly
closer than eps" is decided on the very same floating-point numbers that defined eps.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy.spatial import cKDTree
from scipy.spatial.distance import cdist
from sklearn.neighbors import KDTree
from tqdm.auto import tqdm

from . import _sorted_counts

__all__ = ["TREE_MAX_DIMS", "CHUNK_BYTES", "kth_neighbor_distance", "nearest_indices",
           "count_within", "neighbor_counts"]

#: joint dimensionality up to which kd-trees are used (brute force above it)
TREE_MAX_DIMS = 10
#: memory bound for one chunk of per-block distance matrices (per worker thread)
CHUNK_BYTES = 64 * 2**20
_PROGRESS_PAIRS = 2 * 10**9  # show a progress bar above this many pair-dimension evaluations


def _n_workers() -> int:
    """Cores this process may run on (respects taskset / cgroup affinity where available)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _run_chunks(work, tasks, total_work: float, desc: str) -> None:
    """Run ``work(task)`` for every task on all cores, with a progress bar for long jobs."""
    with ThreadPoolExecutor(_n_workers()) as pool:
        results = pool.map(work, tasks)
        for _ in tqdm(results, total=len(tasks), desc=desc, leave=False,
                      disable=total_work < _PROGRESS_PAIRS):
            pass


def _row_chunks(start: int, stop: int, rows: int):
    return [(r, min(r + rows, stop)) for r in range(start, stop, rows)]


def kth_neighbor_distance(points: np.ndarray, k: int) -> np.ndarray:
    """Max-norm distance from each point to its k-th nearest *other* point."""
    n, d = points.shape
    if d <= TREE_MAX_DIMS:
        dist, _ = cKDTree(points).query(points, k=[k + 1], p=np.inf, workers=-1)
        return dist[:, 0]  # the k+1-th smallest distance counting the point itself (0)
    return neighbor_counts([points], [], k)[0]


def nearest_indices(points: np.ndarray, k: int) -> np.ndarray:
    """Indices ``(n, k)`` of the ``k`` nearest *other* points of each point (max-norm), nearest
    first; the neighbourhoods of the joint search (same metric as :func:`kth_neighbor_distance`).

    kd-tree up to :data:`TREE_MAX_DIMS` dimensions, chunked brute force (``cdist`` + partial
    sort) above it. A point is never its own neighbour, also when another point coincides
    with it.
    """
    n, d = points.shape
    if d <= TREE_MAX_DIMS:
        _, idx = cKDTree(points).query(points, k=k + 1, p=np.inf, workers=-1)
        own = idx == np.arange(n)[:, None]
        own[~own.any(axis=1), -1] = True  # a coincident point came first: drop the farthest
        return idx[~own].reshape(n, k)
    out = np.empty((n, k), dtype=np.int64)
    rows = max(1, CHUNK_BYTES // (8 * n))

    def work(span):
        r0, r1 = span
        dist = cdist(points[r0:r1], points, "chebyshev")
        dist[np.arange(r1 - r0), np.arange(r0, r1)] = np.inf
        part = np.argpartition(dist, k - 1, axis=1)[:, :k]
        order = np.argsort(np.take_along_axis(dist, part, axis=1), axis=1, kind="stable")
        out[r0:r1] = np.take_along_axis(part, order, axis=1)

    _run_chunks(work, _row_chunks(0, n, rows), float(n) * n * d, "kNN neighbours")
    return out


def count_within(points: np.ndarray, radii: np.ndarray, *, strict: bool = True) -> np.ndarray:
    """Number of other points ``j`` with ``||x_j - x_i||_inf < r_i`` (``<= r_i`` if not strict)."""
    n, d = points.shape
    radii = np.asarray(radii, dtype=np.float64)
    if d <= 2 and _sorted_counts.AVAILABLE:
        return _sorted_counts.count_sorted(points, radii, strict=strict)
    if d <= TREE_MAX_DIMS:
        r = np.nextafter(radii, -np.inf) if strict else radii
        # for floats, d <= nextafter(eps, -inf)  <=>  d < eps. scikit-learn's KDTree counts whole
        # nodes that lie inside a ball at once (several times faster than cKDTree's per-point
        # walk when neighbourhoods hold hundreds of points); the point itself (d = 0) is in every
        # ball of radius >= 0 and is removed; a negative radius holds nothing.
        tree = KDTree(points, metric="chebyshev")
        lengths = np.empty(n, dtype=np.int64)

        def work(span):
            r0, r1 = span
            lengths[r0:r1] = tree.query_radius(points[r0:r1], np.maximum(r[r0:r1], 0.0),
                                               count_only=True)

        _run_chunks(work, _row_chunks(0, n, -(-n // (4 * _n_workers()))), 0.0, "kNN counts")
        return np.where(r >= 0, lengths - 1, 0)
    out = np.empty(n, dtype=np.int64)
    rows = max(1, CHUNK_BYTES // (8 * n))

    def work(span):
        r0, r1 = span
        dist = cdist(points[r0:r1], points, "chebyshev")
        dist[np.arange(r1 - r0), np.arange(r0, r1)] = np.inf
        rad = radii[r0:r1, None]
        out[r0:r1] = np.count_nonzero(dist < rad if strict else dist <= rad, axis=1)

    _run_chunks(work, _row_chunks(0, n, rows), float(n) * n * d, "kNN counts")
    return out


def neighbor_counts(blocks, spaces, k: int, groups=None, *, include_all: bool = True):
    """Joint k-th-neighbour distances and strict marginal counts, the core of KSG-type estimators.

    The joint space is the concatenation of ``blocks`` with the max-norm, i.e. the joint distance
    is the maximum over blocks of the per-block max-norm distances. For each point ``i`` this
    finds ``eps_i``, the joint distance to its ``k``-th nearest other point, and for each counting
    space ``s`` (a tuple of block indices; its distance is the maximum over those blocks) the
    number of other points strictly closer than ``eps_i`` in that space.

    Parameters
    ----------
    blocks : list of (n, d_b) float arrays
    spaces : list of tuples of block indices
    k : int
        Neighbour order for the search over all points.
    groups : list of (start, stop, k_g), optional
        Contiguous row ranges (the caller sorts rows by class). When given, the search and the
        counts are repeated *within* each group with its own neighbour order ``k_g``, reusing the
        same distance matrices (conditional estimators given a discrete variable).
    include_all : bool
        With ``groups``, ``False`` skips the search over all points (``eps``, ``counts`` are
        then ``None``).

    Returns
    -------
    eps : (n,) array
    counts : (n, len(spaces)) int64 array
    eps_g, counts_g : same, within groups (``None`` when ``groups`` is None)
    """
    n = blocks[0].shape[0]
    total_dims = sum(b.shape[1] for b in blocks)
    if total_dims <= TREE_MAX_DIMS:
        return _neighbor_counts_tree(blocks, spaces, k, groups, include_all)
    return _neighbor_counts_brute(blocks, spaces, k, groups, include_all, n, total_dims)


def _space_points(blocks, space) -> np.ndarray:
    return blocks[space[0]] if len(space) == 1 else np.hstack([blocks[b] for b in space])


def _neighbor_counts_tree(blocks, spaces, k, groups, include_all):
    def search(sub_blocks, kk):
        eps = kth_neighbor_distance(np.hstack(sub_blocks), kk)
        counts = np.empty((len(eps), len(spaces)), dtype=np.int64)
        for s, space in enumerate(spaces):
            counts[:, s] = count_within(_space_points(sub_blocks, space), eps)
        return eps, counts

    eps, counts = search(blocks, k) if include_all or groups is None else (None, None)
    if groups is None:
        return eps, counts, None, None
    n = blocks[0].shape[0]
    eps_g = np.empty(n)
    counts_g = np.empty((n, len(spaces)), dtype=np.int64)
    for start, stop, kg in groups:
        eps_g[start:stop], counts_g[start:stop] = search([b[start:stop] for b in blocks], kg)
    return eps, counts, eps_g, counts_g


def _neighbor_counts_brute(blocks, spaces, k, groups, include_all, n, total_dims):
    m, n_spaces = len(blocks), len(spaces)
    singles = [tuple(s) for s in spaces] == [(b,) for b in range(m)]
    rows = max(1, CHUNK_BYTES // (8 * (m + (0 if singles else n_spaces)) * n))
    include_all = include_all or groups is None
    eps = np.empty(n) if include_all else None
    counts = np.empty((n, n_spaces), dtype=np.int64) if include_all else None
    eps_g = np.empty(n) if groups is not None else None
    counts_g = np.empty((n, n_spaces), dtype=np.int64) if groups is not None else None
    spans = groups if groups is not None else [(0, n, k)]
    tasks = [(r0, r1, s, e, kg) for s, e, kg in spans for r0, r1 in _row_chunks(s, e, rows)]

    def work(task):
        r0, r1, start, stop, kg = task
        c = r1 - r0
        # columns searched: all points, or only the row's own group when that is all we need
        c0, c1 = (0, n) if include_all else (start, stop)
        dist = np.empty((m, c, c1 - c0))
        for b, xb in enumerate(blocks):
            cdist(xb[r0:r1], xb[c0:c1], "chebyshev", out=dist[b])
        dist[:, np.arange(c), np.arange(r0, r1) - c0] = np.inf  # a point is not its own neighbour
        joint = dist.max(axis=0)
        if singles:
            space_dist = dist
        elif spaces:
            space_dist = np.stack([dist[list(sp)].max(axis=0) for sp in spaces])
        else:
            space_dist = dist[:0]
        if include_all:
            e = np.partition(joint, k - 1, axis=1)[:, k - 1]
            eps[r0:r1] = e
            counts[r0:r1] = np.count_nonzero(space_dist < e[None, :, None], axis=2).T
        if groups is not None:
            g0, g1 = start - c0, stop - c0
            eg = np.partition(joint[:, g0:g1], kg - 1, axis=1)[:, kg - 1]
            eps_g[r0:r1] = eg
            counts_g[r0:r1] = np.count_nonzero(
                space_dist[:, :, g0:g1] < eg[None, :, None], axis=2).T

    _run_chunks(work, tasks, float(n) * n * total_dims, "kNN joint search")
    return eps, counts, eps_g, counts_g
