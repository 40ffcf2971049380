"""The one place where :mod:`infodiv.inference` reaches into the rest of ``infodiv``.

Everything the inference package needs from the curve, set-function, information, growth and
table modules and from the resampling engine is imported here, so that a move of those modules
is absorbed by editing this file only. Nothing here computes a formula of its own.
"""

from __future__ import annotations

import numpy as np

from estimators.resampling import bootstrap_indices as _bootstrap_indices
from estimators.resampling import bootstrap_means, chunk_sizes, parallel_map, spawn_generators
from extraction.contributions import Contributions
from infodiv.curves import order_scores, set_values, shapley_from_orders
from infodiv.growth import fit_growth_laws
from infodiv.information import error_bounds, label_entropy, member_variables, set_terms
from infodiv.junctions import junction_curves
from infodiv.reports.serialize import jsonable
from infodiv.setfunctions import ReadoutSetFunction, SetFunction, make_set_function
from infodiv.submodularity import (
    benjamini_hochberg,
    diversity_regression,
    dr_example_differences,
    gain_slope,
    sample_triple,
)
from infodiv.tables import fisher_z_mean

__all__ = ["Contributions", "ReadoutSetFunction", "SetFunction", "benjamini_hochberg",
           "bootstrap_means", "chunk_sizes", "dr_example_differences", "gain_slope",
           "order_scores", "diversity_regression", "error_bounds", "fisher_z_mean",
           "fit_growth_laws", "gain_slopes",
           "information_terms", "jsonable", "junction_curves", "label_entropy",
           "make_set_function", "member_variables", "parallel_map", "resample_rows",
           "sample_triple", "set_values", "shapley_from_orders", "spawn_generators"]

INFORMATION_TERMS = ("joint", "relevancy", "redundancy", "conditional_redundancy", "diversity")


def resample_rows(n: int, rng) -> np.ndarray:
    """One bootstrap resample of ``n`` rows (:func:`estimators.resampling.bootstrap_indices`)."""
    return _bootstrap_indices(n, rng)


def gain_slopes(samples, sign: float) -> tuple[float, float]:
    """OLS slopes of g(k) on k, for k ≥ 1 and k ≥ 2, of f along random orders ``[P, M+1]``.

    The slope formula is :func:`infodiv.submodularity.gain_slope`'s (its orders-only bootstrap
    is not used here: one replicate is drawn and ignored).
    """
    out = gain_slope(samples, sign, n_bootstrap=1)
    return float(out["slope"]), float(out["from_k2"]["slope"])


def information_terms(contrib, members=None, *, copula: bool = False) -> dict:
    """Gaussian (or copula) Eq. 13 terms of the member set (all members by default), in bits,
    with H(Y) and the Eq. 12 bounds on the error (:func:`infodiv.information.set_terms`)."""
    x = member_variables(contrib.u)
    if members is not None:
        x = x[:, np.asarray(members, dtype=np.int64)]
    terms = set_terms(x, contrib.labels, n_classes=contrib.n_options,
                      method="copula" if copula else "gaussian", random_state=0)
    out = {k: float(terms[k]) for k in INFORMATION_TERMS}
    out.update(h_y=float(terms["h_y"]), bound_lower=float(terms["error_lower_bound"]),
               bound_upper=float(terms["error_upper_bound"]))
    return out
