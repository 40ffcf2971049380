"""The diversity regression on one fit, examples reweighted (the power shortcut).

The real run's intervals of β and of the partial correlation r refit everything per example
resample (:class:`~infodiv.inference.pipelines.CurvePipeline`, ``diversity_beta`` /
``diversity_partial_r``). On a surrogate the power analysis fits the set function once
(:class:`~infodiv.inference.power.FixedFitDetector`) and needs their example-bootstrap
intervals cheaply. Pair p's gain on example i is g_{p,i} = sign·(f_i(S_p ∪ {x_p}) − f_i(S_p))
(a per-example set function's scores average to f), so a bootstrap replicate's pair gains are
the reweighted means ḡ_b = Σ_i w_{b,i} g_{·,i} / n (:func:`estimators.resampling.
bootstrap_means`), and β_b, r_b follow from :func:`infodiv.diversity.diversity_fit` with the
design held at the surrogate's own values (non-redundancies from its member covariance,
ρ_x(∅), |S|): with the design fixed, β = c · ḡ is linear in the example means
(Frisch–Waugh–Lovell) and r = β ‖r_d‖ / ‖r_g‖. The fit, the split and the design's own
sampling spread are left out (second order for a regression coefficient); like the other
verdicts' shortcut intervals it is judged against the real run's refitted label null, and its
shuffled-label rate is reported next to the verdict, so a too-narrow interval shows as a
false-positive rate > α.

The verdict tests r, not β: β is in gain units per unit of non-redundancy, so its null spread
scales with the design's spread of diversity — on a synthetic run the label-null sd of β was
0.029 on the run and 0.007 on its planted-redundancy surrogate (r: 0.13 and 0.16), so judging
a surrogate's β against the run's β null would not measure power. r has the sign of β.
"""

from __future__ import annotations

import numpy as np

from ._api import bootstrap_means
from .bootstrap import percentile_interval

__all__ = ["diversity_statistics", "diversity_example_terms"]


def diversity_example_terms(pipe, f, run):
    """(g ``[n, P]``: every pair's per-example gain, design) on this fit (module docstring);
    ``None`` when the regression is undefined (fewer than 8 pairs)."""
    from ..diversity import diversity_design

    m, t = f.n_members, len(pipe.triples(f.n_members))
    s = f.sign() * np.asarray(f.set_scores(pipe.dr_sets(m, True)), dtype=np.float64)
    quad = s[: 4 * t].reshape(t, 4, -1)                    # [T, (A, A+x, B, B+x), n]
    gains = np.stack([quad[:, 1] - quad[:, 0], quad[:, 3] - quad[:, 2]], axis=1)  # [T, 2, n]
    singles = (s[4 * t + 1:] - s[4 * t]).mean(axis=1)      # ρ_j(∅), utility units
    rows, cov, d = pipe.diversity_rows(run, pipe.triples(m), quad.mean(axis=2))
    design = diversity_design(rows, singles, cov, d)
    if len(design["diversity"]) < 8:
        return None
    idx = design["index"]
    return gains[idx[:, 0], idx[:, 1]].T, design


def diversity_statistics(pipe, f, run, rng, n_bootstrap: int = 200) -> dict:
    """``{"diversity_beta" | "diversity_partial_r": {"value", "ci"}}`` for
    :func:`~infodiv.inference.verdicts.decide` on one fit of a per-example set function
    (module docstring); ``{}`` when the regression is undefined."""
    from ..diversity import diversity_fit

    terms = diversity_example_terms(pipe, f, run)
    if terms is None:
        return {}
    g, design = terms
    point = diversity_fit(g.mean(axis=0), design["diversity"], design["controls"])
    if point is None:
        return {}
    boot = diversity_fit(bootstrap_means(g, n_bootstrap, random_state=rng),
                         design["diversity"], design["controls"])
    out = {}
    for name, key in (("diversity_beta", "beta"), ("diversity_partial_r", "partial_r")):
        lo, hi = percentile_interval(boot[key])
        out[name] = {"value": float(point[key]), "ci": (float(lo), float(hi))}
    return out
