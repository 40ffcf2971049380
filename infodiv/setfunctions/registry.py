"""The registry of named objectives: ``OBJECTIVES[name]`` builds a set function from a run.

Every name the toolkit accepts (``make_set_function(contrib, name)``, ``infodiv curves
--objective``, whose argparse ``choices`` are :data:`OBJECTIVE_NAMES`) is one registry entry
with its builder, its family and a one-line description; nothing parses names.

- readouts: ``accuracy``, ``cross_entropy``, ``brier`` and their ``*_calibrated`` variants
  (:mod:`infodiv.setfunctions.readout`);
- information (units of ``base``, bits by default): ``mi_readout``, usable information of the
  calibrated summed readout, the cheap valid lower bound the curves use by default
  (:mod:`infodiv.setfunctions.readout_information`); ``mi_gaussian``, ``mi_copula``,
  ``mi_knn``, ``mi_probe`` (:mod:`infodiv.setfunctions.information`), on the member variables
  of :func:`infodiv.information.member_variables`; ``mi_usable``, the valid default estimate
  (:func:`estimators.usable_information`), on the whole member vectors (no centring).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..information import member_variables
from .base import CallableSetFunction, SetFunction
from .calibration import READOUT_METRICS
from .information import (
    EstimatorSetFunction,
    GaussianSetFunction,
    ProbeSetFunction,
    UsableSetFunction,
)
from .readout import ReadoutSetFunction
from .readout_information import ReadoutInformationSetFunction

__all__ = ["Objective", "OBJECTIVES", "OBJECTIVE_NAMES", "make_set_function",
           "as_set_function", "is_run"]


@dataclass(frozen=True)
class Objective:
    """A registered objective: ``build(contrib, **options) -> SetFunction``."""

    name: str
    family: str  # "readout" or "information"
    description: str
    build: Callable


def _readout(metric, calibrated):
    def build(contrib, *, random_state=0, **_):
        return ReadoutSetFunction(contrib.u, contrib.bias, contrib.labels, metric,
                                  calibrated=calibrated, random_state=random_state)
    return build


def _gaussian(copula):
    def build(contrib, *, centre=True, ridge=0.0, bias_correction=True, base=2,
              random_state=0, **_):
        return GaussianSetFunction(member_variables(contrib.u, centre=centre), contrib.labels,
                                   copula=copula, bias_correction=bias_correction, ridge=ridge,
                                   base=base, random_state=random_state)
    return build


def _knn(contrib, *, centre=True, k=3, base=2, random_state=0, **_):
    return EstimatorSetFunction(member_variables(contrib.u, centre=centre), contrib.labels,
                                method="knn", k=k, base=base, random_state=random_state)


def _probe(contrib, *, base=2, random_state=0, **_):
    return ProbeSetFunction(contrib.u, contrib.labels, base=base, random_state=random_state)


def _usable(contrib, *, base=2, random_state=0, **_):
    return UsableSetFunction(contrib.u, contrib.labels, base=base, random_state=random_state)


def _readout_information(contrib, *, base=2, random_state=0, **_):
    return ReadoutInformationSetFunction(contrib.u, contrib.bias, contrib.labels, base=base,
                                         random_state=random_state)


def _entries():
    for metric in READOUT_METRICS:
        yield Objective(metric, "readout", f"{metric} of the fixed-scale summed readout",
                        _readout(metric, False))
        yield Objective(f"{metric}_calibrated", "readout",
                        f"{metric} of softmax(a z_S + c), (a, c) cross-fitted on two halves",
                        _readout(metric, True))
    yield Objective("mi_readout", "information",
                    "usable I(U_S; Y) of the calibrated summed readout: H(Y) - held-out CE",
                    _readout_information)
    yield Objective("mi_gaussian", "information", "Gaussian I(U_S; Y)", _gaussian(False))
    yield Objective("mi_copula", "information", "Gaussian-copula I(U_S; Y)", _gaussian(True))
    yield Objective("mi_knn", "information", "KSG/Ross kNN I(U_S; Y)", _knn)
    yield Objective("mi_probe", "information", "probe lower bound H(Y) - held-out CE", _probe)
    yield Objective("mi_usable", "information",
                    "usable I(U_S; Y): H(Y) - held-out CE, best family by nested CV", _usable)


#: name -> :class:`Objective`, in the order they are documented
OBJECTIVES: dict[str, Objective] = {o.name: o for o in _entries()}
#: the names, e.g. for argparse ``choices``
OBJECTIVE_NAMES: tuple[str, ...] = tuple(OBJECTIVES)


def is_run(obj) -> bool:
    """Whether ``obj`` looks like a Contributions run (member logits and labels)."""
    return hasattr(obj, "u") and hasattr(obj, "labels") and hasattr(obj, "members")


def make_set_function(contrib, objective: str = "accuracy", *, centre=True, ridge=0.0,
                      bias_correction=True, base=2, random_state=0, k=3) -> SetFunction:
    """Build the registered objective ``objective`` on a ``Contributions`` run.

    Parameters
    ----------
    contrib : Contributions
    objective : str
        One of :data:`OBJECTIVE_NAMES`.
    centre : bool
        Information objectives: project member logits on the sum-zero subspace (d = C − 1).
    ridge, bias_correction : Gaussian objectives (:class:`estimators.blocks.GaussianBlockMI`).
    base : float or "e"
        Unit of the information objectives (2: bits).
    random_state : int, default 0
        Fixes the cross-fitting split (calibrated, probe), the kNN jitter and the copula tie
        order.
    k : int
        Neighbours of ``mi_knn``.
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown objective {objective!r}; choose from {OBJECTIVE_NAMES}")
    return OBJECTIVES[objective].build(contrib, centre=centre, ridge=ridge,
                                       bias_correction=bias_correction, base=base,
                                       random_state=random_state, k=k)


def as_set_function(contrib_or_f, *, objective=None, n_members=None, **kwargs) -> SetFunction:
    """One dispatch for the public entry points: Contributions + objective, or a callable."""
    if isinstance(contrib_or_f, SetFunction):
        return contrib_or_f
    if hasattr(contrib_or_f, "u") and hasattr(contrib_or_f, "labels"):
        if n_members is not None and n_members != contrib_or_f.n_members:
            raise ValueError(f"n_members={n_members} contradicts the Contributions' "
                             f"M={contrib_or_f.n_members}")
        return make_set_function(contrib_or_f, objective or "accuracy", **kwargs)
    if callable(contrib_or_f):
        if n_members is None:
            raise ValueError("a callable set function needs n_members (size of the ground set)")
        if objective is not None:
            raise ValueError("objective names a set function of a Contributions; "
                             "pass either a Contributions with objective or a callable")
        return CallableSetFunction(contrib_or_f, n_members)
    raise TypeError(f"expected a Contributions, a SetFunction or a callable, "
                    f"got {type(contrib_or_f).__name__}")
