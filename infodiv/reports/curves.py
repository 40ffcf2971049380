"""The curves report of one run: layer-addition curves with the verdicts of the paper's
claims, selection, greedy stability and the layer graph, written as JSON, markdown and
figures.

``curves_report(contrib, out)`` writes ``report.json`` (every number), ``report.md`` (a
readable summary, :mod:`infodiv.reports.curves_md`), per objective ``answer_<objective>.png``
(the real members' mean curve against their conditionally independent control, with bands:
:mod:`infodiv.reports.answer_figure`), ``curves_<objective>.png``,
``gains_<objective>.png`` and ``shapley_<objective>.png``, and ``layer_graph.graphml`` /
``layer_graph.png``.

Per objective the document holds the point estimates (the curves of
:func:`infodiv.curves.layer_curves`, Shapley values, greedy orders, the submodularity ratio,
the curvature and the growth-law fits: plain functions, no interval) and one
:class:`~infodiv.inference.record.VerdictRecord` per claim (``verdicts``), computed by
:func:`infodiv.inference.engine.evaluate`: every interval, null and power on the page is a
record's, so a quantity has one interval.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..curves import layer_curves
from ..growth import fit_growth_laws
from ..inference.flags import flags_from_curve_notes
from ..layergraph import export_graphml, layer_graph, redundancy_communities, tree_bound
from ..runs import run_names
from ..selection import greedy_stability, subset_selection
from ..setfunctions import make_set_function
from ..submodularity import curvature, submodularity_ratio
from .answer_figure import answer_curves, plot_answer_curves
from .curves_md import curves_markdown
from .figures import plot_gains, plot_layer_curves, plot_layer_graph, plot_shapley, run_label
from .serialize import jsonable, write_json

__all__ = ["DEFAULT_OBJECTIVES", "DEFAULT_CLAIMS", "CurvesSettings", "curves_report",
           "curve_verdicts", "selection_inference", "k_marks"]

#: the model's own readout, and information about the label as usable information of the
#: calibrated summed readout (``mi_readout``: H(Y) − held-out cross-entropy, a valid lower bound
#: on I(U_S;Y), never above H(Y), one batched calibration fit per set). ``mi_usable`` (best of
#: several probe families by nested cross-validation) is tighter and is asked by name: it refits
#: a probe for every member set, ~0.2 s a set at n = 1000, M = 30
DEFAULT_OBJECTIVES = ("accuracy", "mi_readout")
#: the claims judged on every objective by default (``infodiv.claims.CURVE_CLAIMS``)
DEFAULT_CLAIMS = ("diminishing_returns", "dr_mean_difference_positive", "violations",
                  "diversity_effect")


@dataclass(frozen=True)
class CurvesSettings:
    """What the curves report computes (the CLI flags of ``infodiv curves``).

    ``n_bootstrap`` is B, the example resamples of every verdict (everything refitted);
    ``n_null`` is K, the label permutations (default B); ``power_replicates`` the surrogates
    of each kind behind every verdict's power and false-positive rate (0 skips them);
    ``inference=False`` leaves the point estimates only (no verdict)."""

    objectives: tuple = DEFAULT_OBJECTIVES
    claims: tuple = DEFAULT_CLAIMS
    n_permutations: int = 200
    n_triples: int = 200
    n_bootstrap: int = 200
    n_null: int | None = None
    power_replicates: int = 20
    stability: int = 10
    ridge: float = 0.0
    graph: bool = True
    seed: int = 0
    n_jobs: int = 1
    inference: bool = True
    #: example resamples B of the selection claims (K = max(20, B); 0 skips them)
    inference_selection: int = 50

    @property
    def k_null(self) -> int:
        return int(self.n_null or self.n_bootstrap)

    @property
    def n_orders(self) -> int:
        """Random orders per replicate (the inner level of the two-level bootstrap)."""
        return min(20, max(2, self.n_permutations // 10))

    @property
    def n_mc(self) -> int:
        """Reruns on the unchanged rows (the estimate and its Monte-Carlo error)."""
        return min(10, max(3, self.n_permutations // 20))

    def sizes(self) -> dict:
        return {"n_bootstrap": self.n_bootstrap, "n_null": self.k_null,
                "n_orders": self.n_orders, "n_mc": self.n_mc,
                "power_replicates": self.power_replicates}


def k_marks(m: int) -> list[int]:
    """The set sizes the summary quotes: 1, M/4 and M/2."""
    return sorted({1, max(1, m // 4), max(1, m // 2)})


def point_estimates(f, lc) -> dict:
    """What the curves say without inference: f(∅), f(V), the submodularity ratio and the
    curvature along greedy, the growth-law fits of the random-order mean curve."""
    greedy = lc["greedy"]
    curv = curvature(f, greedy.order, greedy.extra["values_in_sample"])
    curv.pop("last_gains", None)
    return {"f_empty": float(lc["random"].values[0]), "f_all": float(lc["random"].values[-1]),
            "ratio": submodularity_ratio(f, greedy.order), "curvature": curv,
            "fits": fit_growth_laws(lc["random"].values)}


def curve_verdicts(contrib, objective: str, settings: CurvesSettings | None = None, *,
                   progress: bool = False) -> dict:
    """The verdict records of ``settings.claims`` on ``objective`` through the engine
    (:func:`infodiv.inference.engine.evaluate`); claims that cannot be tested on the run
    (e.g. M = 1) are listed under ``not_tested`` with the reason."""
    from ..claims import get_claims
    from ..inference.claim import Design
    from ..inference.engine import evaluate

    s = settings or CurvesSettings()
    design = Design(objective, {"ridge": s.ridge}, n_orders=s.n_orders, n_triples=s.n_triples,
                    triple_seed=s.seed)
    claims, skipped = [], {}
    for c in get_claims(s.claims):
        why = c.applies(contrib, design) if c.applies is not None else None
        if why:
            skipped[c.name] = why
        else:
            claims.append(c)
    doc = {"verdicts": {}, "not_tested": skipped, "sizes": s.sizes(), "cpu_s": {}}
    if claims:
        res = evaluate(contrib, claims, design, n_bootstrap=s.n_bootstrap,
                       n_permutations=s.k_null, n_mc=s.n_mc, n_power=s.power_replicates,
                       random_state=s.seed, n_jobs=s.n_jobs, progress=progress)
        doc.update(verdicts={n: r.to_dict() for n, r in res["records"].items()},
                   cpu_s=res["cpu_s"], n_failed=res["n_failed"])
    return doc


def _objective(contrib, obj, s: CurvesSettings, out: Path) -> dict:
    kw = {"ridge": s.ridge}
    f = make_set_function(contrib, obj, **kw)
    lc = layer_curves(f, n_permutations=s.n_permutations, random_state=s.seed,
                      n_jobs=s.n_jobs)
    entry = {"curves": jsonable(lc.to_dict()), "point": jsonable(point_estimates(f, lc)),
             "k_marks": k_marks(contrib.n_members)}
    # the curves' own flags; each verdict record keeps its own (read from there, not copied)
    entry["flags"] = [fl.to_dict() for fl in flags_from_curve_notes(lc.notes, obj)]
    if s.inference:
        entry.update(curve_verdicts(contrib, obj, s))
    label = run_label(contrib)   # model, task and N in every title
    if f.per_example:   # the page's answer figure: real members against their CI control
        entry["answer_curves"] = answer_curves(contrib, obj, n_bootstrap=s.n_bootstrap,
                                               random_state=s.seed, ridge=s.ridge)
        plot_answer_curves(entry["answer_curves"], out / f"answer_{obj}.png", title=label)
    plot_layer_curves(lc, out / f"curves_{obj}.png", title=label)
    slope = (entry.get("verdicts") or {}).get("diminishing_returns")
    plot_gains(lc, {"slope": slope["estimate"], "ci": slope["interval"]} if slope
               else _plain_slope(lc, f), out / f"gains_{obj}.png", title=label)
    plot_shapley(lc, contrib.names, out / f"shapley_{obj}.png", title=label)
    return jsonable(entry)


def _plain_slope(lc, f) -> dict:
    """The point OLS slope of g(k) over the report's random orders (no interval)."""
    from ..submodularity import gain_slope

    return {"slope": gain_slope(np.asarray(lc["random"].samples), f.sign(),
                                n_bootstrap=1)["slope"], "ci": None}


def _graph(contrib, s: CurvesSettings, out: Path) -> dict:
    g = layer_graph(contrib, random_state=s.seed)
    export_graphml(g, out / "layer_graph.graphml")
    plot_layer_graph(g, out / "layer_graph.png", title=run_label(contrib))
    return {"tree_bound": tree_bound(g),
            "communities": [[contrib.names[i] for i in c] for c in redundancy_communities(g)]}


def selection_inference(contrib, objective: str, *, n_resamples: int = 50,
                        power_replicates: int = 20, seed: int = 0, ridge: float = 0.0,
                        n_jobs: int = 1, progress: bool = False) -> dict:
    """The selection claims (:data:`infodiv.claims.SELECTION_CLAIMS`: held-out greedy vs the
    best of 50 random orders and vs the depth prefix, each one budget-averaged difference)
    through the engine: B = ``n_resamples`` example resamples, K = max(20, B) label
    permutations, ``power_replicates`` surrogates of each kind when the set function has
    per-example scores (none otherwise). ``{"verdicts": {claim: VerdictRecord dict}, ...}``."""
    from ..claims import SELECTION_CLAIMS, get_claims
    from ..inference.claim import Design
    from ..inference.engine import evaluate

    kw = {"ridge": ridge}
    per_example = make_set_function(contrib, objective, **kw).per_example
    k = max(20, n_resamples)
    res = evaluate(contrib, get_claims(SELECTION_CLAIMS), Design(objective, kw, n_random=50),
                   n_bootstrap=n_resamples, n_permutations=k, n_mc=2,
                   n_power=power_replicates if per_example else 0, random_state=seed,
                   n_jobs=n_jobs, progress=progress)
    return jsonable({"objective": objective, "n_resamples": n_resamples, "n_null": k,
                     "n_random": 50, "cpu_s": res["cpu_s"],
                     "verdicts": {n: r.to_dict() for n, r in res["records"].items()}})


def _selection(contrib, s: CurvesSettings, log) -> dict:
    first = s.objectives[0]
    sel = jsonable({**subset_selection(contrib, objective=first, random_state=s.seed),
                    "k_marks": k_marks(contrib.n_members)})
    if s.inference and s.inference_selection:
        try:
            sel["inference"] = selection_inference(
                contrib, first, n_resamples=s.inference_selection,
                power_replicates=s.power_replicates, seed=s.seed, ridge=s.ridge,
                n_jobs=s.n_jobs)
        except ValueError as exc:   # e.g. M = 1: no budget to compare
            sel["inference_error"] = str(exc)
            log(f"infodiv curves: selection inference failed: {exc}")
    return sel


def curves_report(contrib, out, settings: CurvesSettings | None = None, *,
                  run_dir=None, log=print) -> dict:
    """Compute the curves report of one run and write it to ``out`` (module docstring).

    An objective that cannot be computed on the run (a ValueError: too few examples per class
    for a Gaussian objective, ...) is recorded as ``{"error": message}`` and reported through
    ``log``; the others go on. Returns the JSON document that was written.
    """
    s = settings or CurvesSettings()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model, task = run_names(contrib.meta)
    # the run folder relative to the report, so the JSON holds no machine-specific path
    rel_dir = None if run_dir is None else os.path.relpath(Path(run_dir).resolve(), out.resolve())
    doc = {"run": {"dir": rel_dir, "model": model or "?", "task": task or "?",
                   "N": contrib.n_examples, "M": contrib.n_members, "C": contrib.n_options,
                   "members": contrib.names},
           "settings": {"n_permutations": s.n_permutations, "n_triples": s.n_triples,
                        "seed": s.seed, "ridge": s.ridge, "objective": list(s.objectives),
                        "claims": list(s.claims), "inference": s.inference, **s.sizes()},
           "objectives": {}, "timings_s": {}}
    for obj in s.objectives:
        t0 = time.perf_counter()
        try:
            doc["objectives"][obj] = _objective(contrib, obj, s, out)
        except ValueError as exc:
            doc["objectives"][obj] = {"error": str(exc)}
            log(f"infodiv curves: {obj} failed: {exc}")
            continue
        doc["timings_s"][obj] = time.perf_counter() - t0
    if "error" not in doc["objectives"].get(s.objectives[0], {"error": 1}):
        doc["selection"] = _selection(contrib, s, log)
        if s.stability:
            st = greedy_stability(contrib, objective=s.objectives[0], n_bootstrap=s.stability,
                                  random_state=s.seed, n_jobs=s.n_jobs)
            st.pop("orders")
            doc["stability"] = jsonable(st)
    if s.graph:
        try:
            doc["graph"] = _graph(contrib, s, out)
        except ValueError as exc:
            doc["graph_error"] = str(exc)
    doc = jsonable(doc)
    write_json(out / "report.json", doc)
    (out / "report.md").write_text(curves_markdown(doc))
    return doc
