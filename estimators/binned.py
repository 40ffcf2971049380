"""Binning transform for ``method="binned"``: continuous columns to integer bin codes.

Each continuous column is cut into ``bins`` bins on the pooled sample, either of equal width
between its minimum and maximum (``binning="uniform"``) or at its empirical quantiles
(``binning="quantile"``, equal-count bins; repeated edges from ties are merged). The codes are
then handled by the discrete estimators of :mod:`estimators.discrete`, so MI, CMI, TC and the
label-conditioned quantities of binned data satisfy the plug-in identities exactly.

Differential entropy needs the bin volumes: for the histogram density estimate,
``H(X) = H(codes) + E[log vol(cell(X))]`` with ``vol`` the product of the bin widths of the
sample's cell (e.g. Cover & Thomas, Thm 8.3.1). :func:`transform` returns that mean log-volume as
``log_jacobian``; it cancels exactly from MI/CMI/TC. A constant column has zero width, so its
entropy is ``-inf`` (the differential entropy of a point mass).
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["BINNINGS", "bin_edges", "transform"]

BINNINGS = ("uniform", "quantile")


def bin_edges(col: np.ndarray, bins: int, binning: str) -> np.ndarray:
    """Bin edges (length ``n_bins + 1``) of one column."""
    if binning == "uniform":
        return np.linspace(col.min(), col.max(), bins + 1)
    if binning == "quantile":
        return np.unique(np.quantile(col, np.linspace(0.0, 1.0, bins + 1)))
    raise ValueError(f"binning must be one of {BINNINGS}, got {binning!r}")


def transform(x: np.ndarray, *, bins: int = 8, binning: str = "uniform",
              with_jacobian: bool = False):
    """Bin codes ``(n, d)`` int64 of ``x`` and the mean log cell volume (nats) if asked."""
    if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or bins < 1:
        raise ValueError(f"bins must be a positive integer, got {bins!r}")
    n, d = x.shape
    codes = np.empty((n, d), dtype=np.int64)
    log_volume = 0.0
    for j in range(d):
        edges = bin_edges(x[:, j], int(bins), binning)
        if len(edges) < 2:  # constant column: one bin of zero width
            codes[:, j] = 0
            log_volume += -np.inf
            continue
        c = np.clip(np.searchsorted(edges, x[:, j], side="right") - 1, 0, len(edges) - 2)
        codes[:, j] = c
        if with_jacobian:
            with np.errstate(divide="ignore"):
                log_volume += float(np.mean(np.log(np.diff(edges))[c]))
    return codes, (log_volume if with_jacobian else 0.0)
