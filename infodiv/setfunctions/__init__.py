"""Set functions f(S) over the members of a run, and the registry of named objectives.

- :mod:`.base`: the protocol (``scores``, ``value``, ``start``/``add``/``remove`` states,
  ``added_values``/``removed_values`` over candidates, ``order_values``, ``restrict``);
- :mod:`.readout`: accuracy / cross-entropy / Brier of the summed readout, raw or calibrated
  (:mod:`.calibration`: the batched Newton fit and the readout metrics);
- :mod:`.information`: I(U_S; Y) objectives (Gaussian, copula, kNN, probe);
- :mod:`.registry`: :data:`OBJECTIVES` (name -> builder) and :func:`make_set_function`.

``greater_is_better`` tells search which direction improves; curves report native units.
"""

from .base import (
           CallableSetFunction,
           RestrictedSetFunction,
           SetFunction,
           check_members,
           split_halves,
)
from .calibration import READOUT_METRICS, fit_calibration, readout_scores
from .information import EstimatorSetFunction, GaussianSetFunction, ProbeSetFunction
from .readout import ReadoutSetFunction
from .registry import OBJECTIVE_NAMES, OBJECTIVES, Objective, as_set_function, make_set_function

__all__ = ["SetFunction", "RestrictedSetFunction", "CallableSetFunction", "ReadoutSetFunction",
           "GaussianSetFunction", "ProbeSetFunction", "EstimatorSetFunction", "Objective",
           "OBJECTIVES", "OBJECTIVE_NAMES", "make_set_function", "as_set_function",
           "check_members", "split_halves", "fit_calibration", "readout_scores",
           "READOUT_METRICS"]
