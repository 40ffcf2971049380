"""The depth estimand: the truncated model versus member subsets (DESIGN.md 2.4, 2.8).

Two different things are called "the first k layers":

- **truncated model** — the model cut after junction k and read out through its own final
  norm and head: the logit-lens readout (scale_M / scale_k)·Σ_{m≤k} u_m + b, exact from the
  stored ``scale``. This is what "a shallower model" means (a total effect of the later layers'
  absence on the readout's normalisation, though later members are simply absent);
- **member subsets (direct effect)** — the fixed-scale readout Σ_{m≤k} u_m + b of the same
  members, each keeping the scale of the full residual. Arbitrary member sets (greedy, random
  orders) are always read this way.

:func:`depth_curves` returns both at every junction, named apart, from
:func:`infodiv.junctions.junction_curves` with ``scale="sum"`` (the ensemble is the readout
itself, so the cross-entropy is the prefix model's loss). :class:`DepthPipeline` turns them into
pipeline statistics so they go through the same bootstrap and null as everything else.
"""

from __future__ import annotations

import numpy as np

from infodiv.junctions import junction_curves
from infodiv.submodularity import gain_slope

__all__ = ["depth_curves", "DepthPipeline", "DEPTH_LABELS", "DEPTH_MEASURES"]

DEPTH_LABELS = {"truncated_model": "truncated model (logit lens at junction k)",
                "member_subsets": "member subsets (direct effect, fixed scale)"}
DEPTH_MEASURES = {"accuracy": 1.0, "cross_entropy": -1.0}


def depth_curves(contrib, *, base=2) -> dict:
    """Accuracy and cross-entropy of the truncated model and of the member-subset readout at
    every junction (module docstring)."""
    out = {"labels": dict(DEPTH_LABELS)}
    for key, readout in (("truncated_model", "logit_lens"), ("member_subsets", "fixed")):
        jc = junction_curves(contrib, readout=readout, space="logit", scale="sum", base=base)
        out[key] = {m: np.asarray(getattr(jc, m)) for m in DEPTH_MEASURES}
        out["k"], out["names"] = np.asarray(jc.k), list(jc.names)
        out["units"] = {"accuracy": "fraction", "cross_entropy": jc.ce_units}
    return out


class DepthPipeline:
    """``pipeline(run, rng) -> dict``: both depth curves of ``measure``, their difference and
    the OLS slope of the increments between consecutive junctions (utility units)."""

    def __init__(self, measure: str = "accuracy", *, base=2):
        if measure not in DEPTH_MEASURES:
            raise ValueError(f"measure must be one of {tuple(DEPTH_MEASURES)}, got {measure!r}")
        self.measure, self.base = measure, base
        self.directions = {f"{k}_slope": "less" for k in DEPTH_LABELS}
        self.directions["truncated_minus_subsets"] = "two-sided"

    def __call__(self, run, rng) -> dict:
        curves = depth_curves(run, base=self.base)
        sign = DEPTH_MEASURES[self.measure]
        out = {}
        for key in DEPTH_LABELS:
            values = curves[key][self.measure]
            out[f"{key}_curve"] = values
            out[f"{key}_slope"] = (gain_slope(values[None, :], sign, n_bootstrap=1)["slope"]
                                   if values.size >= 3 else float("nan"))
        out["truncated_minus_subsets"] = (curves["truncated_model"][self.measure]
                                          - curves["member_subsets"][self.measure])
        return out
