"""Exact max-norm neighbour counts in 1-D and 2-D spaces by sorting (no tree walk).

For a space of one or two coordinates, "how many other points lie strictly within ``r_i`` of
point ``i`` in the max-norm" is an orthogonal range count, which sorting answers in
``O(n log n)`` for all points at once:

* 1-D: sort the values once; ``|fl(a - c)| < r`` holds on a contiguous run of the sorted values
  (``fl(a - c)`` is monotone in ``a`` and ``fl(c - a) = -fl(a - c)``), whose two ends are found
  by a galloping search outwards from the point's own rank on *that same predicate*, so the
  count equals the one of a direct evaluation ``count(|x_j - x_i| < r_i)`` on the same
  floating-point numbers, not of ``x_i +- r_i`` (which rounds);
* 2-D: the ball is a box ``[lx, hx) x [ly, hy)`` of rank intervals in the two sorted orders
  (found as in 1-D); the number of points in a box is ``F(hx) - F(lx)`` with
  ``F(t) = #{j : xrank_j < t, ly <= yrank_j < hy}``, answered offline by one sweep over the
  x order with a Fenwick (binary indexed) tree over y ranks (Bentley 1980, "Multidimensional
  divide-and-conquer", CACM 23; Fenwick 1994, Softw. Pract. Exp. 24).

Tied values all fall on the same side of a predicate that depends on the value only, so the
intervals hold whole tie groups and any order within ties gives the same counts. The point
itself (distance 0) is removed; a ball that does not hold distance 0 (``r <= 0``, or ``r < 0``
when not strict) holds nothing. Single-threaded on purpose: a whole count takes a few
milliseconds at n = 10^4, less than a thread team costs on a shared machine. Compiled with numba
(``cache=True``); :data:`AVAILABLE` is False when numba cannot be imported, and the callers then
use their kd-tree counts (the same integers).
"""

from __future__ import annotations

import numpy as np

__all__ = ["AVAILABLE", "count_sorted"]

try:
    from numba import njit
except ImportError:  # pragma: no cover - numba is a dependency; the kd-tree path remains
    AVAILABLE = False
else:
    AVAILABLE = True

if AVAILABLE:
    @njit(cache=True, inline="always")
    def _inside(a, c, r, strict):
        d = abs(a - c)
        return d < r if strict else d <= r

    @njit(cache=True)
    def _run(sorted_vals, p, r, strict):
        """``[lo, hi)``: the run of ``sorted_vals`` within ``r`` of ``c = sorted_vals[p]``.

        Galloping (exponential then binary) search outwards from ``p``, where ``c`` itself sits:
        balls are local, so this touches ``O(log run)`` nearby values instead of ``O(log n)``
        scattered ones. Only called when ``c`` is inside its own ball.
        """
        n = sorted_vals.shape[0]
        c = sorted_vals[p]
        b, step = p, 1                    # b: not below the ball
        while True:
            a = b - step
            if a < 0:
                a = -1
                break
            if not _inside(sorted_vals[a], c, r, strict):
                break
            b = a
            step *= 2
        while b - a > 1:                   # a: below (or -1), b: inside
            mid = (a + b) >> 1
            if _inside(sorted_vals[mid], c, r, strict):
                b = mid
            else:
                a = mid
        lo = b
        a, step = p, 1                     # a: not above the ball
        while True:
            b = a + step
            if b >= n:
                b = n
                break
            if not _inside(sorted_vals[b], c, r, strict):
                break
            a = b
            step *= 2
        while b - a > 1:                   # a: inside, b: above (or n)
            mid = (a + b) >> 1
            if _inside(sorted_vals[mid], c, r, strict):
                a = mid
            else:
                b = mid
        return lo, b

    @njit(cache=True)
    def _ranks(order):
        rank = np.empty(order.shape[0], dtype=np.int64)
        for p in range(order.shape[0]):
            rank[order[p]] = p
        return rank

    @njit(cache=True)
    def _count_1d(x, order, radii, strict):
        n = x.shape[0]
        s = x[order]
        rank = _ranks(order)
        out = np.zeros(n, dtype=np.int64)
        for i in range(n):
            if radii[i] > 0 if strict else radii[i] >= 0:
                lo, hi = _run(s, rank[i], radii[i], strict)
                out[i] = hi - lo - 1
        return out

    @njit(cache=True)
    def _boxes(x, y, ox, oy, radii, strict):
        """Rank boxes of every ball (empty when the ball holds nothing) and the y ranks."""
        n = x.shape[0]
        sx, sy = x[ox], y[oy]
        xrank, yrank = _ranks(ox), _ranks(oy)
        box = np.zeros((n, 4), dtype=np.int64)
        for i in range(n):
            if radii[i] > 0 if strict else radii[i] >= 0:
                box[i, 0], box[i, 1] = _run(sx, xrank[i], radii[i], strict)
                box[i, 2], box[i, 3] = _run(sy, yrank[i], radii[i], strict)
        return box, yrank

    @njit(cache=True)
    def _count_2d(x, y, ox, oy, radii, strict):
        n = x.shape[0]
        box, yrank = _boxes(x, y, ox, oy, radii, strict)
        # queries: (threshold in x order, point, sign); counting sort by threshold
        start = np.zeros(n + 2, dtype=np.int64)
        for i in range(n):
            start[box[i, 0] + 1] += 1
            start[box[i, 1] + 1] += 1
        for t in range(n + 1):
            start[t + 1] += start[t]
        fill = start.copy()
        q_point = np.empty(2 * n, dtype=np.int64)
        q_sign = np.empty(2 * n, dtype=np.int64)
        for i in range(n):
            for side, sign in ((0, -1), (1, 1)):
                t = box[i, side]
                q_point[fill[t]] = i
                q_sign[fill[t]] = sign
                fill[t] += 1
        tree = np.zeros(n + 1, dtype=np.int64)  # Fenwick tree over y ranks (1-based)
        out = np.zeros(n, dtype=np.int64)
        for t in range(n + 1):
            for q in range(start[t], start[t + 1]):
                i = q_point[q]
                total = 0
                p = box[i, 3]                      # prefix [0, hy)
                while p > 0:
                    total += tree[p]
                    p -= p & (-p)
                p = box[i, 2]                      # minus prefix [0, ly)
                while p > 0:
                    total -= tree[p]
                    p -= p & (-p)
                out[i] += q_sign[q] * total
            if t < n:                              # insert the point of x rank t
                p = yrank[ox[t]] + 1
                while p <= n:
                    tree[p] += 1
                    p += p & (-p)
        for i in range(n):
            self_in = radii[i] > 0 if strict else radii[i] >= 0
            out[i] = out[i] - 1 if self_in else 0
        return out


def count_sorted(points: np.ndarray, radii: np.ndarray, *, strict: bool = True) -> np.ndarray:
    """Number of other points within ``radii`` (max-norm) of each point of an ``(n, 1)`` or
    ``(n, 2)`` array: ``#{j != i : max_c |x_jc - x_ic| < r_i}`` (``<=`` if not ``strict``)."""
    points = np.ascontiguousarray(points, dtype=np.float64)
    radii = np.ascontiguousarray(radii, dtype=np.float64)
    d = points.shape[1]
    if d == 1:
        x = points[:, 0].copy()
        return _count_1d(x, np.argsort(x), radii, strict)
    if d == 2:
        x, y = points[:, 0].copy(), points[:, 1].copy()
        return _count_2d(x, y, np.argsort(x), np.argsort(y), radii, strict)
    raise ValueError(f"points must have 1 or 2 columns for sorted counts, got {d}")
