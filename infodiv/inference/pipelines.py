"""The Gaussian (or copula) Eq. 13 terms of a member set as a refittable pipeline
(``pipeline(run, rng) -> dict``) for :func:`~infodiv.inference.nulls.infer`.

These estimators assume jointly Gaussian members (or Gaussian copulas); about a discrete label
they are not bounds (``docs/estimators.md``): the valid default is usable information
(:func:`estimators.usable_information`). They stay available by name.
"""

from __future__ import annotations

import numpy as np

from infodiv.information import member_variables, set_terms

__all__ = ["InformationPipeline", "information_terms", "INFORMATION_STATISTICS", "LABEL_FREE"]

INFORMATION_STATISTICS = ("joint", "relevancy", "redundancy", "conditional_redundancy",
                          "diversity", "h_y", "bound_lower", "bound_upper")
INFORMATION_TERMS = ("joint", "relevancy", "redundancy", "conditional_redundancy", "diversity")
#: statistics a label permutation leaves unchanged: their null says nothing about their bias
LABEL_FREE = ("redundancy", "h_y")
_INFO_DIRECTIONS = {"diversity": "two-sided", "bound_lower": "less", "bound_upper": "less"}


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


class InformationPipeline:
    """``pipeline(run, rng) -> dict`` of the Gaussian (or copula) Eq. 13 terms of the member set
    ``members`` (all by default), H(Y) and the Eq. 12 bounds, in bits."""

    def __init__(self, members=None, *, copula: bool = False):
        self.members = None if members is None else np.asarray(members)
        self.copula = bool(copula)
        self.directions = dict(_INFO_DIRECTIONS)

    def __call__(self, run, rng) -> dict:
        return information_terms(run, self.members, copula=self.copula)
