"""The curves stage of a study: layer-addition curves with the verdicts of the paper's claims,
selection, greedy stability and the layer graph, written as JSON, markdown and figures.

:func:`curves_stage` writes ``report.json`` (every number), ``report.md``
(:func:`infodiv.reports.curves_md.curves_markdown`), per objective ``answer_<objective>.png``
(the real members' mean curve against their conditionally independent control:
:mod:`infodiv.reports.answer_figure`), ``curves_<objective>.png``, ``gains_<objective>.png``,
``shapley_<objective>.png``, and ``layer_graph.graphml`` / ``layer_graph.png``.

The document opens with ``testability``
(:func:`infodiv.inference.testability.testability`): the model's raw readout against chance and
whether the members carry the label; a run whose members carry none is *untestable* in every
record, and so is the raw readout's objective of a prompt that reads out below chance.
Per objective the document holds the point estimates (the curves of
:func:`infodiv.curves.layer_curves`, Shapley values, greedy orders, the submodularity ratio,
the curvature and the growth-law fits: plain functions, no interval) and one
:class:`~infodiv.inference.record.VerdictRecord` per claim (``verdicts``) from
:func:`infodiv.inference.engine.evaluate`: every interval, null and power on the page is a
record's, so a quantity has one interval. Every random procedure draws from its own stream of
the study's :class:`~infodiv.study.seeds.SeedPlan` (named by stage, objective and procedure).
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..curves import layer_curves
from ..growth import fit_growth_laws
from ..inference.flags import flags_from_curve_notes
from ..inference.testability import testability, untestable_reason
from ..layergraph import export_graphml, layer_graph, redundancy_communities, tree_bound
from ..reports.answer_figure import plot_answer_curves
from ..reports.curves_md import curves_markdown
from ..reports.figures import (
    plot_gains,
    plot_layer_curves,
    plot_layer_graph,
    plot_shapley,
    run_label,
)
from ..reports.serialize import jsonable, write_json
from ..runs import run_names
from ..selection import greedy_stability, subset_selection
from ..setfunctions import make_set_function
from ..submodularity import curvature, submodularity_ratio
from .answer_curves import answer_curves
from .seeds import SeedPlan
from .settings import StudySettings

__all__ = ["curves_stage", "curve_verdicts", "selection_verdicts", "k_marks",
           "settings_record"]


def k_marks(m: int) -> list[int]:
    """The set sizes the summary quotes: 1, M/4 and M/2."""
    return sorted({1, max(1, m // 4), max(1, m // 2)})


def settings_record(s: StudySettings) -> dict:
    """The curves document's ``settings``: what was computed, every size under its one
    name."""
    c = s.curves
    return {"seed": s.seed, "objective": list(c.objectives), "claims": list(c.claims),
            "n_curve_orders": c.n_curve_orders, "n_triples": c.n_triples, "ridge": c.ridge,
            "stability": c.stability, "inference": c.verdicts,
            "selection_verdicts": s.selection.selection_verdicts,
            "n_random": s.selection.n_random,
            **s.inference.sizes()}


def point_estimates(f, lc) -> dict:
    """What the curves say without inference: f(∅), f(V), the submodularity ratio and the
    curvature along greedy, the growth-law fits of the random-order mean curve."""
    greedy = lc["greedy"]
    curv = curvature(f, greedy.order, greedy.extra["values_in_sample"])
    curv.pop("last_gains", None)
    return {"f_empty": float(lc["random"].values[0]), "f_all": float(lc["random"].values[-1]),
            "ratio": submodularity_ratio(f, greedy.order), "curvature": curv,
            "fits": fit_growth_laws(lc["random"].values)}


def _evaluate(contrib, claims, design, s: StudySettings, stream, *, power: bool = True,
              progress: bool = False, untestable: str | None = None) -> dict:
    """The engine on ``claims`` with the study's sizes: ``{"verdicts", "cpu_s", "n_failed"}``."""
    from ..inference.engine import evaluate

    inf = s.inference
    res = evaluate(contrib, claims, design, n_bootstrap=inf.n_bootstrap,
                   n_permutations=inf.k, n_mc=inf.n_mc,
                   n_power=inf.power_replicates if power else 0, alpha=inf.alpha,
                   random_state=stream, n_jobs=inf.n_jobs, progress=progress,
                   untestable=untestable)
    return {"verdicts": {n: r.to_dict() for n, r in res["records"].items()},
            "cpu_s": res["cpu_s"], "n_failed": res["n_failed"]}


def curve_verdicts(contrib, objective: str, settings: StudySettings | None = None, *,
                   progress: bool = False, untestable: str | None = None) -> dict:
    """The verdict records of the claims of ``settings.curves`` on ``objective``; claims that
    cannot be tested on the run (e.g. M = 1) are listed under ``not_tested`` with the
    reason. ``untestable`` (a reason:
    :func:`~infodiv.inference.testability.untestable_reason`) makes every outcome
    *untestable*."""
    from ..claims import get_claims
    from ..inference.claim import Design

    s = settings or StudySettings()
    s = replace(s, inference=s.inference.for_objective(objective))
    plan = SeedPlan(s.seed)
    design = Design(objective, {"ridge": s.curves.ridge}, n_orders=s.inference.n_orders,
                    n_triples=s.curves.n_triples,
                    triple_seed=plan.integer("curves", objective, "chains"),
                    n_random=s.selection.n_random)
    claims, skipped = [], {}
    for c in get_claims(s.curves.claims):
        why = c.applies(contrib, design) if c.applies is not None else None
        if c.objectives is not None and objective not in c.objectives:
            why = f"judged on {', '.join(c.objectives)} only, not on {objective}"
        if why:
            skipped[c.name] = why
        else:
            claims.append(c)
    doc = {"verdicts": {}, "not_tested": skipped, "sizes": s.inference.sizes(), "cpu_s": {}}
    if claims:
        doc.update(_evaluate(contrib, claims, design, s,
                             plan.sequence("curves", objective, "verdicts"), progress=progress,
                             untestable=untestable))
    return doc


def selection_verdicts(contrib, objective: str, settings: StudySettings | None = None, *,
                       progress: bool = False, untestable: str | None = None) -> dict:
    """The registered selection claims (held-out greedy against the best of ``n_random``
    random orders and against the depth prefix, each one budget-averaged difference) through
    the engine with the study's sizes B, K and power replicates (power only where the set
    function has per-example scores)."""
    from ..claims import claim_names, get_claims
    from ..inference.claim import Design

    s = settings or StudySettings()
    kw = {"ridge": s.curves.ridge}
    per_example = make_set_function(contrib, objective, **kw).per_example
    design = Design(objective, kw, n_orders=s.inference.n_orders,
                    n_random=s.selection.n_random)
    res = _evaluate(contrib, get_claims(claim_names("selection")), design, s,
                    SeedPlan(s.seed).sequence("selection", objective, "verdicts"),
                    power=per_example, progress=progress, untestable=untestable)
    return jsonable({"objective": objective, "n_random": s.selection.n_random,
                     "sizes": s.inference.sizes(), **res})


def _plain_slope(lc, f) -> dict:
    """The point OLS slope of g(k) over the report's random orders (no interval)."""
    from ..submodularity import gain_slope

    return {"slope": gain_slope(np.asarray(lc["random"].samples), f.sign(),
                                n_bootstrap=1)["slope"], "ci": None}


def _objective(contrib, obj, s: StudySettings, out: Path, test: dict) -> dict:
    s = replace(s, inference=s.inference.for_objective(obj))
    plan = SeedPlan(s.seed)
    f = make_set_function(contrib, obj, ridge=s.curves.ridge)
    lc = layer_curves(f, n_permutations=s.curves.n_curve_orders,
                      random_state=plan.integer("curves", obj, "orders"),
                      n_jobs=s.inference.n_jobs)
    lc.member_names = list(contrib.names)   # f is a set function: the names come from the run
    entry = {"curves": jsonable(lc.to_dict()), "point": jsonable(point_estimates(f, lc)),
             "k_marks": k_marks(contrib.n_members)}
    # the curves' own flags; each verdict record keeps its own (read from there, not copied)
    entry["flags"] = [fl.to_dict() for fl in flags_from_curve_notes(lc.notes, obj)]
    if s.curves.verdicts:
        entry.update(curve_verdicts(contrib, obj, s, untestable=untestable_reason(test, obj)))
    label = run_label(contrib)   # model, task and N in every title
    if f.per_example:   # the page's answer figure: real members against their CI control
        entry["answer_curves"] = answer_curves(
            contrib, obj, n_bootstrap=s.inference.n_bootstrap,
            random_state=plan.integer("curves", obj, "answer_figure"), ridge=s.curves.ridge,
            split_state=getattr(f, "random_state", 0))   # the curves' split: one f(all)
        plot_answer_curves(entry["answer_curves"], out / f"answer_{obj}.png", title=label)
    plot_layer_curves(lc, out / f"curves_{obj}.png", title=label, no_band=(
        f"its example-resampled band: answer_{obj}.png" if "answer_curves" in entry
        else "no example-resampled band for this objective"))
    slope = (entry.get("verdicts") or {}).get("diminishing_returns")
    plot_gains(lc, {"slope": slope["estimate"], "ci": slope["interval"]} if slope
               else _plain_slope(lc, f), out / f"gains_{obj}.png", title=label)
    plot_shapley(lc, contrib.names, out / f"shapley_{obj}.png", title=label)
    return jsonable(entry)


def _graph(contrib, s: StudySettings, out: Path) -> dict:
    g = layer_graph(contrib, random_state=SeedPlan(s.seed).integer("curves", "layer_graph"))
    export_graphml(g, out / "layer_graph.graphml")
    plot_layer_graph(g, out / "layer_graph.png", title=run_label(contrib))
    return {"tree_bound": tree_bound(g),
            "communities": [[contrib.names[i] for i in c] for c in redundancy_communities(g)]}


def _selection(contrib, s: StudySettings, log, test: dict) -> dict:
    first, plan = s.curves.objectives[0], SeedPlan(s.seed)
    sel = jsonable({**subset_selection(contrib, objective=first, n_random=s.selection.n_random,
                                       random_state=plan.integer("selection", first, "split")),
                    "k_marks": k_marks(contrib.n_members)})
    if s.curves.verdicts and s.selection.selection_verdicts:
        try:
            sel["inference"] = selection_verdicts(contrib, first, s,
                                                  untestable=untestable_reason(test, first))
        except ValueError as exc:   # e.g. M = 1: no budget to compare
            sel["inference_error"] = str(exc)
            log(f"infodiv curves: selection inference failed: {exc}")
    return sel


def curves_stage(contrib, out, settings: StudySettings | None = None, *, run_dir=None,
                 log=print, progress=None, replace_changed: bool = False) -> dict:
    """Compute the curves of one run and write them to ``out`` (module docstring).

    The files are written into a private folder and reach ``out`` only when the stage has
    finished, over nothing but this stage's own earlier files, with the folder's manifest
    (:func:`infodiv.outputs.staged_output`, writer ``infodiv curves``; ``replace_changed``
    as there). An objective that cannot be computed on the run (a ValueError: too few
    examples per class for a Gaussian objective, ...) is recorded as ``{"error": message}``
    and reported through ``log``; the others go on. ``progress`` (a callable, or None) is told
    when each part starts and how long each objective took. Returns the JSON document that
    was written.
    """
    from ..outputs import staged_output

    out = Path(out)
    # the run folder relative to the report, so the JSON holds no machine-specific path
    rel_dir = None if run_dir is None else os.path.relpath(Path(run_dir).resolve(), out.resolve())
    with staged_output(out, "infodiv curves", log=log, replace_changed=replace_changed,
                       expect=("report.json", "report.md")) as tmp:
        return _curves(contrib, tmp, settings or StudySettings(), rel_dir, log,
                       progress or (lambda line: None))


def _curves(contrib, out: Path, s: StudySettings, rel_dir, log, say) -> dict:
    """The body of :func:`curves_stage`, writing into ``out``."""
    model, task = run_names(contrib.meta)
    doc = {"run": {"dir": rel_dir, "model": model or "?", "task": task or "?",
                   "N": contrib.n_examples, "M": contrib.n_members, "C": contrib.n_options,
                   "members": contrib.names},
           "settings": settings_record(s), "objectives": {}, "timings_s": {}}
    doc["testability"] = testability(contrib, random_state=SeedPlan(s.seed).integer(
        "curves", "testability"))
    for i, obj in enumerate(s.curves.objectives, 1):
        sizes = s.inference.for_objective(obj)
        say(f"curves: objective {obj} ({i} of {len(s.curves.objectives)}): its curves"
            + (f" and verdicts (B = {sizes.n_bootstrap}, K = {sizes.k}, "
               f"{sizes.power_replicates} surrogates of each kind)" if s.curves.verdicts
               else ""))
        t0 = time.perf_counter()
        try:
            doc["objectives"][obj] = _objective(contrib, obj, s, out, doc["testability"])
        except ValueError as exc:
            doc["objectives"][obj] = {"error": str(exc)}
            log(f"infodiv curves: {obj} failed: {exc}")
            continue
        doc["timings_s"][obj] = time.perf_counter() - t0
        say(f"curves: objective {obj} done in {doc['timings_s'][obj]:.0f} s")
    first = s.curves.objectives[0]
    if "error" not in doc["objectives"].get(first, {"error": 1}):
        say("curves: held-out greedy selection"
            + (f" and greedy stability ({s.curves.stability} resamples)"
               if s.curves.stability else ""))
        doc["selection"] = _selection(contrib, s, log, doc["testability"])
        if s.curves.stability:
            st = greedy_stability(contrib, objective=first, n_bootstrap=s.curves.stability,
                                  random_state=SeedPlan(s.seed).integer("selection", first,
                                                                        "stability"),
                                  n_jobs=s.inference.n_jobs)
            st.pop("orders")
            doc["stability"] = jsonable(st)
    if s.curves.graph:
        try:
            doc["graph"] = _graph(contrib, s, out)
        except ValueError as exc:
            doc["graph_error"] = str(exc)
    doc = jsonable(doc)
    write_json(out / "report.json", doc)
    (out / "report.md").write_text(curves_markdown(doc))
    return doc
