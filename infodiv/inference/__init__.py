"""Inference that survives a null (DESIGN.md 2.8).

- :mod:`~infodiv.inference.surrogates` — controls built from a run's own arrays;
- :mod:`~infodiv.inference.bootstrap` — the two-level bootstrap (examples outer, orders inner)
  and Monte-Carlo errors, on the resampling core of :mod:`estimators.resampling`;
- :mod:`~infodiv.inference.nulls` — label-permutation nulls of a whole pipeline, the one
  summary of a null's draws (:func:`null_summary`), null-corrected values, :func:`infer` (both);
- :mod:`~infodiv.inference.subsampling` — n, n/2, n/4 and the 1/n extrapolation;
- :mod:`~infodiv.inference.flags` — flags as data;
- :mod:`~infodiv.inference.power` — detection rates on surrogates with Wilson intervals;
- :mod:`~infodiv.inference.verdicts` — the verdicts' rules (example CI, null-corrected CI and
  label-null p; the step-down violation test) shared by the real run and its surrogates;
- :mod:`~infodiv.inference.depth` — truncated model vs member subsets;
- :mod:`~infodiv.inference.correlations` — correlations over junction series;
- :mod:`~infodiv.inference.claim`, :mod:`~infodiv.inference.engine` and
  :mod:`~infodiv.inference.record` — the engine that turns a claim of :mod:`infodiv.claims`
  into a verdict record.

Every function takes ``random_state`` (default 0) and draws one seeded stream per replicate.
"""

from .bootstrap import Estimate, Estimates, two_level_bootstrap
from .correlations import VARIANTS, fisher_z_average, junction_correlations
from .depth import DepthPipeline, depth_curves
from .flags import Flag, summary_lines
from .nulls import Inference, NullResult, infer, null_corrected, null_summary, permutation_null
from .power import surrogate_power, wilson_interval
from .subsampling import subsample_extrapolation
from .surrogates import (
    SURROGATES,
    conditionally_independent,
    make_surrogate,
    planted_redundancy,
    planted_synergy,
    shuffled_labels,
)
from .synthetic import dependent_ensemble

__all__ = ["DepthPipeline", "Estimate", "Estimates", "Flag", "Inference",
           "NullResult", "SURROGATES", "VARIANTS", "conditionally_independent",
           "dependent_ensemble", "depth_curves",
           "fisher_z_average", "infer", "junction_correlations", "make_surrogate",
           "null_corrected", "null_summary", "permutation_null", "planted_redundancy",
           "planted_synergy", "shuffled_labels",
           "subsample_extrapolation", "summary_lines", "surrogate_power", "two_level_bootstrap",
           "wilson_interval"]
