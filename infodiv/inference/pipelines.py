"""The curve/DR pipeline of the existing reports, as a refittable pipeline for inference.

:class:`CurvePipeline` computes, from one run, the statistics that the curves and
submodularity reports lead with — g(k) slope (k ≥ 1 and k ≥ 2), the random-order mean curve
and gain profile, Shapley values, the nested-chain DR differences and their mean, the raw
violation rate, the growth law chosen by AICc and by held-out extrapolation, and the Gaussian
Eq. 13 information terms with H(Y) and the Eq. 12 bounds — refitting everything on the run it
is given: the set function is rebuilt (calibration and covariances refitted, a new
cross-fitting split drawn from the replicate's stream) and ``n_orders`` fresh random orders are
drawn (the inner level of the two-level bootstrap).

The DR chains (A ⊂ B, x ∉ B) are drawn once from ``triple_seed`` and kept for every replicate,
so each triple's difference d_t = ρ_x(A) − ρ_x(B) gets its own bootstrap distribution.
"""

from __future__ import annotations

import numpy as np

from ._api import (
    diversity_regression,
    fit_growth_laws,
    gain_slopes,
    information_terms,
    make_set_function,
    member_variables,
    sample_triple,
    set_values,
    shapley_from_orders,
)

__all__ = ["CurvePipeline", "DiversityPipeline", "InformationPipeline",
           "INFORMATION_STATISTICS", "GROWTH_LAWS", "LABEL_FREE"]

INFORMATION_STATISTICS = ("joint", "relevancy", "redundancy", "conditional_redundancy",
                          "diversity", "h_y", "bound_lower", "bound_upper")
GROWTH_LAWS = ("linear", "log", "power")
#: statistics a label permutation leaves unchanged: their null says nothing about their bias
LABEL_FREE = ("redundancy", "h_y")
_INFO_DIRECTIONS = {"diversity": "two-sided", "bound_lower": "less", "bound_upper": "less"}


class CurvePipeline:
    """``pipeline(run, rng) -> dict`` of curve, DR and information statistics (module doc).

    Parameters
    ----------
    objective : str
        Set-function name (``infodiv.setfunctions.OBJECTIVES``), e.g. ``"accuracy_calibrated"``.
    n_orders : int
        Random orders per replicate (inner level).
    n_triples : int
        Nested chains for the DR differences (0 skips them).
    triple_seed : int, default 0
        Seed of the fixed chains.
    triples : list of (A, B, x), optional
        Use these chains instead (e.g. the ones the submodularity report drew), so each
        triple's interval belongs to the report's own difference.
    information : bool
        Also the Gaussian Eq. 13 terms of all members, H(Y) and the Eq. 12 bounds.
    growth_laws : bool
        Fit the three growth laws to each replicate's mean curve (indicator statistics
        ``growth_aicc_<law>`` / ``growth_extrapolation_<law>``: their bootstrap means are the
        fractions of resamples choosing each law).
    diversity : bool
        With DR chains: also the diversity regression of the submodularity report
        (``infodiv.submodularity.diversity_regression``: β of ρ_x(S) on x's non-redundancy
        with S given ρ_x(∅) and |S|, and its partial r), refitted per replicate.
    growth_fraction : float
        Fit them in this fraction of the replicates only (drawn from each replicate's stream;
        NaN elsewhere): the saturating power law costs ~0.5 s per fit.
    **objective_kwargs
        Passed to ``make_set_function`` (its ``random_state`` is drawn per replicate).
    """

    def __init__(self, objective: str = "accuracy_calibrated", *, n_orders: int = 20,
                 n_triples: int = 100, triple_seed: int = 0, information: bool = True,
                 growth_laws: bool = False, growth_fraction: float = 1.0, triples=None,
                 diversity: bool = True, **objective_kwargs):
        if n_orders < 2:
            raise ValueError(f"n_orders must be >= 2, got {n_orders}")
        if n_triples < 0:
            raise ValueError(f"n_triples must be >= 0, got {n_triples}")
        self.objective, self.n_orders, self.n_triples = objective, int(n_orders), int(n_triples)
        self.triple_seed, self.information = triple_seed, bool(information)
        if not 0 < growth_fraction <= 1:
            raise ValueError(f"growth_fraction must lie in (0, 1], got {growth_fraction}")
        self.growth_laws, self.objective_kwargs = bool(growth_laws), objective_kwargs
        self.growth_fraction = float(growth_fraction)
        self.diversity = bool(diversity)
        self._triples: dict = {}
        self._given = None
        if triples is not None:
            self._given = [(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64), int(x))
                           for a, b, x in triples]
            self.n_triples = len(self._given)
        self.directions = {"gain_slope": "less", "gain_slope_from_k2": "less",
                           "gain": "two-sided", "mean_curve": "greater", "shapley": "greater",
                           "dr_differences": "greater", "dr_mean_difference": "greater",
                           "dr_violation_rate": "greater", "diversity_beta": "greater",
                           "diversity_partial_r": "greater", **_INFO_DIRECTIONS}

    def triples(self, n_members: int) -> list:
        """The fixed chains ``(A, B, x)`` for a ground set of ``n_members``."""
        if self._given is not None:
            return self._given
        if n_members not in self._triples:
            rng = np.random.default_rng(self.triple_seed)
            self._triples[n_members] = [sample_triple(n_members, rng)
                                        for _ in range(self.n_triples)]
        return self._triples[n_members]

    def set_function(self, run, rng):
        seed = int(rng.integers(0, 2**31 - 1))
        return make_set_function(run, self.objective, random_state=seed, **self.objective_kwargs)

    def __call__(self, run, rng) -> dict:
        f = self.set_function(run, rng)
        m, sign = f.n_members, f.sign()
        perms = np.stack([rng.permutation(m) for _ in range(self.n_orders)])
        samples = np.stack([f.order_values(p) for p in perms])
        mean = samples.mean(axis=0)
        slope, slope_k2 = gain_slopes(samples, sign)
        out = {"gain_slope": slope, "gain_slope_from_k2": slope_k2, "mean_curve": mean,
               "gain": sign * np.diff(mean), "shapley": shapley_from_orders(perms, samples),
               "f_full": float(mean[-1]), "f_empty": float(mean[0])}
        if self.n_triples:
            out.update(self._dr(f, m, sign, run))
        if self.growth_laws:
            fit = self.growth_fraction >= 1 or rng.random() < self.growth_fraction
            out.update(self._growth(mean) if fit else
                       {f"growth_{key}_{law}": float("nan")
                        for key in ("aicc", "extrapolation") for law in GROWTH_LAWS})
        if self.information:
            out.update(self._information(run))
        return out

    def dr_sets(self, m: int, singles: bool) -> list:
        """The sets the DR statistics evaluate: (A, A+x, B, B+x) per triple, then (with
        ``singles``) ∅ and every {j} for ρ_j(∅)."""
        sets = []
        for a_set, b_set, x in self.triples(m):
            sets += [a_set, np.append(a_set, x), b_set, np.append(b_set, x)]
        if singles:
            sets += [np.zeros(0, dtype=np.int64)] + [np.array([j]) for j in range(m)]
        return sets

    def _dr(self, f, m, sign, run=None) -> dict:
        triples = self.triples(m)
        singles = self.diversity and run is not None and hasattr(run, "u")
        vals = set_values(f, self.dr_sets(m, singles))
        s = vals[: 4 * self.n_triples].reshape(self.n_triples, 4)
        d = sign * ((s[:, 1] - s[:, 0]) - (s[:, 3] - s[:, 2]))
        scale = max(1.0, float(np.abs(s).max()))
        out = {"dr_differences": d, "dr_mean_difference": float(d.mean()),
               "dr_violation_rate": float((d < -1e-12 * scale).mean())}
        if singles:
            empty = vals[4 * self.n_triples]
            out.update(self._diversity(run, triples, sign * s,
                                       sign * (vals[4 * self.n_triples + 1:] - empty)))
        return out

    @staticmethod
    def diversity_rows(run, triples, u):
        """(the regression's triple records, member covariance, d) from ``u`` = sign·f of
        (A, A+x, B, B+x) per triple (means over examples)."""
        x = member_variables(run.u)
        cov = np.cov(x.reshape(x.shape[0], -1), rowvar=False)
        rows = [{"A": a, "B": b, "x": int(xx), "gain_A": float(g[1] - g[0]),
                 "gain_B": float(g[3] - g[2])} for (a, b, xx), g in zip(triples, u)]
        return rows, cov, x.shape[2]

    def _diversity(self, run, triples, u, singles) -> dict:
        """β and partial r of the diversity regression; ``u`` = sign·f of (A, A+x, B, B+x)
        per triple and ``singles`` the utility gains ρ_j(∅)."""
        rows, cov, d = self.diversity_rows(run, triples, u)
        # (its permutation p-value is replaced by the label null: one permutation suffices)
        res = diversity_regression(rows, singles, cov, d, n_permutations=1)
        return {"diversity_beta": res.get("beta_diversity", float("nan")),
                "diversity_partial_r": res.get("partial_r", float("nan"))}

    def _growth(self, mean) -> dict:
        fits = fit_growth_laws(mean)
        return {f"growth_{key}_{law}": float(fits[f"best_{key}"] == law)
                for key in ("aicc", "extrapolation") for law in GROWTH_LAWS}

    def _information(self, run) -> dict:
        try:
            return information_terms(run)
        except ValueError:  # singular covariance in this replicate: NaN, counted downstream
            return {k: float("nan") for k in INFORMATION_STATISTICS}


class DiversityPipeline(CurvePipeline):
    """Only the diversity regression of :class:`CurvePipeline` (``diversity_beta``,
    ``diversity_partial_r``), for adding its verdict to an existing report.

    The set function's seed is the first draw of the replicate's stream in both pipelines and
    the chains are fixed, so on the same replicate seed its β equals CurvePipeline's exactly
    (the random orders, drawn after, do not enter β): a label null rerun with this pipeline
    reproduces the stored one.
    """

    def __init__(self, objective: str = "accuracy_calibrated", **kwargs):
        kwargs.update(information=False, growth_laws=False, diversity=True)
        super().__init__(objective, **kwargs)
        self.directions = {"diversity_beta": "greater", "diversity_partial_r": "greater"}

    def __call__(self, run, rng) -> dict:
        f = self.set_function(run, rng)
        out = self._dr(f, f.n_members, f.sign(), run)
        return {k: out.get(k, float("nan")) for k in self.directions}


class InformationPipeline:
    """``pipeline(run, rng) -> dict`` of the Gaussian (or copula) Eq. 13 terms of the member set
    ``members`` (all by default), H(Y) and the Eq. 12 bounds, in bits."""

    def __init__(self, members=None, *, copula: bool = False):
        self.members = None if members is None else np.asarray(members)
        self.copula = bool(copula)
        self.directions = dict(_INFO_DIRECTIONS)

    def __call__(self, run, rng) -> dict:
        return information_terms(run, self.members, copula=self.copula)
