"""The toolkit's per-run reports of one zoo checkpoint: the decompositions (what ``infodiv
decompose`` writes) and the curves report, with their settings, caching and the summary the zoo
quotes.

The curves stage runs one objective at a time (:func:`infodiv.study.curves.curves_stage`,
each with its own :class:`~infodiv.study.settings.StudySettings`: :func:`objective_settings`,
:func:`study_settings`), so the headline objective
(held-out accuracy of the summed readout) gets its verdicts at full size with the power
surrogates while a secondary objective (usable information of the calibrated summed readout,
``mi_readout``: a valid lower bound on I(U_S;Y), never above H(Y)) runs at a smaller size; the
selection verdicts run with the first objective only (the secondary objectives pass
``inference_selection = 0``). Every objective is judged on :data:`ZOO_CLAIMS`: the curves
report's own claims and those that tell redundancy from a ceiling against the members' own
conditionally independent control (DESIGN.md 2.7); the report-only claims
(:data:`REPORT_CLAIMS`: Theorem 8's Eq. 12 bounds, whose statistic reads the member vectors,
not the objective) run once, on the first objective, at B = K = ``report_size`` without power
(a report never detects). The entries are merged into one ``curves/report.json`` (+
``report.md``, :func:`infodiv.reports.curves_md.curves_markdown`). Every entry records its
settings (``zoo_settings``: the settings actually used; no power surrogates below
:data:`MIN_POWER_MEMBERS` members) and its process CPU seconds (``zoo_cpu_s``) and is reused by
a rerun with the same settings when it holds verdict records; anything else is stale and
recomputed. An interrupted report resumes per objective (the file is rewritten after every
objective).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from infodiv.claims import claim_names

from .zoo_verdicts import verdict_overview

__all__ = ["ZOO_CLAIMS", "REPORT_CLAIMS", "curves_settings", "objective_settings",
           "reduce_curves", "run_analyses", "curve_summary", "current_curves",
           "verdict_overview"]

_DONE = {"decompose": "decompositions.json", "curves": "report.json"}   # written last
#: the files of each per-model analysis folder (checked before any work: infodiv.outputs)
STAGE_FILES = {"decompose": ("decompositions.json", "decompositions.md", "zoo_settings.json"),
               "curves": ("report.json", "report.md", "zoo_settings.json")}
#: the power surrogates plant XOR synergy into 2 member pairs
#: (infodiv.inference.surrogates.planted_synergy): fewer members get no power run
MIN_POWER_MEMBERS = 4
#: the claims judged on every curve objective: the registered curve and control claims
#: (:mod:`infodiv.claims`)
ZOO_CLAIMS = claim_names(("curve", "control"))
#: report-only claims, on the first objective at B = K = ``report_size``, no power
REPORT_CLAIMS = claim_names("report")


def curves_settings(inference: int = 200, power: int = 20, *, secondary=(50, 10),
                    objectives=("accuracy", "mi_readout"), claims=ZOO_CLAIMS,
                    report_claims=REPORT_CLAIMS, report_size: int = 20) -> dict:
    """The zoo's curves settings: 100 random orders and DR triples, no stability bootstrap or
    graph; every objective judged on ``claims``; the first objective with ``inference``
    example resamples and as many label permutations (0: no inference) and ``power``
    surrogates per kind, the others with ``secondary`` = (resamples = permutations,
    surrogates); ``report_claims`` on the first objective at B = K = ``report_size``."""
    if report_claims and int(report_size) < 20:   # K = B label permutations: p >= 1/(1 + K)
        raise ValueError(f"report_size must be >= 20 (K = B label permutations, so that p "
                         f"can fall below 0.05), got {report_size}")
    sizes = {obj: (inference, power) if i == 0 else tuple(secondary)
             for i, obj in enumerate(objectives)}
    return {"objectives": list(objectives), "n_permutations": 100, "n_triples": 100,
            "n_bootstrap": 200, "stability": 0, "graph": False, "claims": list(claims),
            "report_claims": list(report_claims), "report_size": int(report_size),
            "sizes": {obj: {"inference": int(b), "power": int(p)}
                      for obj, (b, p) in sizes.items()}}


def reduce_curves(settings: dict, size: int, objectives=None) -> dict:
    """``settings`` with the inference of ``objectives`` (all: None) cut to ``size``
    resamples = permutations (their power kept)."""
    out = json.loads(json.dumps(settings))
    for obj, cell in out["sizes"].items():
        if (objectives is None or obj in objectives) and cell["inference"]:
            cell["inference"] = int(size)
    return out


def objective_settings(settings: dict, obj: str) -> dict:
    """``CurvesSettings`` keyword arguments of objective ``obj`` alone (JSON-plain: lists),
    with ``report_claims`` / ``report_size`` on the first objective (:func:`_report_claims`)."""
    cell = settings["sizes"][obj]
    b, p = int(cell["inference"]), int(cell["power"])
    common = {k: v for k, v in settings.items()
              if k not in ("objectives", "sizes", "report_claims", "report_size")}
    kw = {**common, "objectives": [obj], "inference": bool(b), "n_bootstrap": b or 20,
          "n_null": b or None, "power_replicates": p}
    if obj != settings["objectives"][0]:   # the selection belongs to the first objective only
        kw["inference_selection"] = 0
    elif b and settings.get("report_claims"):
        kw["report_claims"] = list(settings["report_claims"])
        kw["report_size"] = int(settings.get("report_size", 20))
    return kw


def study_settings(kw: dict, **changes):
    """The :class:`~infodiv.study.settings.StudySettings` of :func:`objective_settings`' ``kw``
    (the zoo's stored record of what it ran: ``n_permutations`` random orders of the curves,
    ``n_null`` label permutations, ``inference`` verdicts on or off, ``inference_selection``
    0 for no selection verdicts; report claims left out), with ``changes`` applied."""
    from infodiv.study import StudySettings

    study = {"objectives": tuple(kw["objectives"]), "n_curve_orders": kw["n_permutations"],
             "n_triples": kw["n_triples"], "n_bootstrap": kw["n_bootstrap"],
             "n_permutations": kw["n_null"], "power_replicates": kw["power_replicates"],
             "stability": kw["stability"], "graph": kw["graph"], "verdicts": kw["inference"],
             "selection_verdicts": kw.get("inference_selection", 1) != 0}
    if "claims" in kw:
        study["claims"] = tuple(kw["claims"])
    return StudySettings().with_settings(**{**study, **changes})


def _report_claims(contrib, obj: str, kw: dict, entry: dict) -> None:
    """Add the verdict records of ``kw["report_claims"]`` on ``obj`` to ``entry`` (B = K =
    ``report_size``, no power); a claim that cannot run is listed under ``not_tested``."""
    from infodiv.study.curves import curve_verdicts

    size = int(kw["report_size"])
    s = study_settings(kw, claims=tuple(kw["report_claims"]), n_bootstrap=size,
                       n_permutations=size, power_replicates=0)
    doc = curve_verdicts(contrib, obj, s)
    entry.setdefault("verdicts", {}).update(doc["verdicts"])
    entry.setdefault("not_tested", {}).update(doc["not_tested"])
    entry["report_claims"] = {"claims": list(kw["report_claims"]),
                              "sizes": s.inference.sizes(), "cpu_s": doc.get("cpu_s")}


def cases_current(entry: dict) -> bool:
    """Whether every claim verdict of a curves-report objective ``entry`` was judged on the
    matched case its claim declares now (a claim whose surrogate changed makes the entry stale:
    recomputed, never patched)."""
    from infodiv.claims import CLAIMS

    return all(v.get("matched_case") == CLAIMS[name].matched_case
               for name, v in (entry.get("verdicts") or {}).items()
               if name in CLAIMS and isinstance(v, dict))


def _curves(run_dir, dest: Path, settings: dict, log=print) -> list[str]:
    """Compute (or reuse) every objective's entry, merge, write; the failed objectives'
    messages are returned (their entries keep the error and are recomputed next time)."""
    from extraction import Contributions
    from infodiv.reports.curves_md import curves_markdown
    from infodiv.study.curves import curves_stage

    from .owned import own_json, write_owned

    contrib = Contributions.load(run_dir)
    old_path = dest / "report.json"
    old = own_json(old_path, log, "every objective is recomputed") or {"objectives": {}}
    merged = None
    for obj in settings["objectives"]:
        kw = objective_settings(settings, obj)
        if kw["power_replicates"] and contrib.n_members < MIN_POWER_MEMBERS:
            # the planted-XOR surrogate replaces 2 member pairs: no power run below M = 4
            kw = {**kw, "power_replicates": 0}
            log(f"  curves {obj}: M = {contrib.n_members} < {MIN_POWER_MEMBERS}, no power")
        prev = old["objectives"].get(obj) or {}
        if (prev.get("zoo_settings") == kw and "error" not in prev and "point" in prev
                and cases_current(prev)):
            doc = {**old, "objectives": {obj: prev},
                   "timings_s": {obj: (old.get("timings_s") or {}).get(obj)}}
            log(f"  curves {obj}: reused")
        else:
            t0 = time.process_time()
            with tempfile.TemporaryDirectory(prefix="infodiv-zoo-curves-") as tmp:
                # its figures are regenerated, not kept
                doc = curves_stage(contrib, Path(tmp), study_settings(kw), run_dir=run_dir,
                                   log=log)
            entry = doc["objectives"][obj]
            if kw.get("report_claims") and "error" not in entry:
                _report_claims(contrib, obj, kw, entry)
            entry["zoo_settings"] = kw
            entry["zoo_cpu_s"] = time.process_time() - t0
            log(f"  curves {obj}: computed ({entry['zoo_cpu_s']:.0f} CPU s)")
        if merged is None:
            merged = doc
        else:
            merged["objectives"].update(doc["objectives"])
            merged["timings_s"].update(doc.get("timings_s") or {})
        # written after every objective (the others' stored entries kept): resumable
        partial = {**merged, "objectives": {**old["objectives"], **merged["objectives"]}}
        _write(dest, old_path, partial, settings, run_dir)
    _write(dest, old_path, merged, settings, run_dir)
    write_owned(dest, {"report.md": curves_markdown(merged)}, log=log)
    return [f"{obj}: {e['error']}" for obj, e in merged["objectives"].items() if "error" in e]


def _write(dest: Path, path: Path, doc: dict, settings: dict, run_dir) -> None:
    from infodiv.reports.serialize import jsonable, write_json

    from .owned import write_owned

    doc["settings"]["objective"] = list(settings["objectives"])
    doc["settings"]["zoo"] = settings
    doc["run"]["dir"] = os.path.relpath(Path(run_dir).resolve(), dest.resolve())
    write_owned(dest, {path.name: lambda p: write_json(p, jsonable(doc))})


def _decompose_resamples(inference: int | None) -> int:
    """The decomposition's example resamples (None: the library's default,
    :data:`infodiv.study.decompose.DEFAULT_INFERENCE`)."""
    from infodiv.study.decompose import DEFAULT_INFERENCE

    return DEFAULT_INFERENCE if inference is None else int(inference)


def _decompose(run_dir, dest: Path, inference: int | None, key: dict, log=print) -> None:
    """The decompositions of ``run_dir`` written to ``dest``
    (:func:`infodiv.study.decompose.decomposition_report`, as ``infodiv decompose``
    writes them with ``--info-method usable``: seed 0, the usable information terms with
    :func:`_decompose_resamples` example resamples and the label null of its default size,
    Figures 3/5/7 in every variant), with the ``zoo_settings.json`` marker ``key``: the
    whole stage replaces the toolkit's own files of ``dest`` only
    (:func:`infodiv.outputs.staged_output`)."""
    from extraction import Contributions
    from infodiv.outputs import staged_output
    from infodiv.study.decompose import decomposition_report

    from .owned import ZOO

    with staged_output(dest, ZOO, log=log, replace_changed=True,
                       expect=STAGE_FILES["decompose"]) as tmp:
        decomposition_report(Contributions.load(run_dir), tmp, random_state=0,
                             info_methods=("usable",),
                             inference=_decompose_resamples(inference), info_null=None,
                             every_variant=True)
        (tmp / "zoo_settings.json").write_text(json.dumps(key))


def _decompose_size(path: Path) -> int | None:
    """The inference resamples a written ``decompositions.json`` was computed with (None:
    not recorded, an older report: accepted as it is)."""
    doc = json.loads(path.read_text())
    n = ((doc.get("information_inference") or {}).get("settings") or {}).get("n_resamples")
    return None if n is None else int(n)


def run_analyses(run_dir, out, analyses=("decompose", "curves"), *, curves=None,
                 decompose_inference: int | None = None, log=print) -> dict:
    """The toolkit's per-run reports of ``run_dir`` into ``out/<analysis>`` (skipped when
    already finished with the same settings: their JSON exists, as the toolkit wrote it:
    :func:`infodiv.experiments.owned.own_json`; an edited one is recomputed and the log says
    so). ``curves``: the :func:`curves_settings` dict. Returns ``{analysis: "done" | "exists" |
    "failed: ..."}``: a failed analysis is recorded, not hidden (a file of the user's in the way
    is refused: UserError). ``decompose_inference``: the decomposition's example resamples
    (:func:`_decompose_resamples`; None: the library's default); a decomposition written with
    another size (its ``information_inference.settings.n_resamples``) is recomputed."""
    from infodiv.runfiles import UserError

    from .owned import own_json, write_owned

    curves = curves_settings() if curves is None else curves
    status = {}
    for name in analyses:
        dest = Path(out) / name
        key = {"decompose": {"info_method": "usable"}, "curves": curves}[name]
        done = own_json(dest / _DONE[name], log) is not None
        if done and name == "decompose":
            done = _decompose_size(dest / _DONE[name]) in (
                None, _decompose_resamples(decompose_inference))
        elif done:
            done = own_json(dest / "zoo_settings.json", log) == key
        if done:
            status[name] = "exists"
            log(f"  {name}: exists (same settings)")
            continue
        try:
            if name == "curves":
                errors = _curves(run_dir, dest, curves, log=log)
                if errors:
                    raise RuntimeError("; ".join(errors))
                write_owned(dest, {"zoo_settings.json": json.dumps(key)}, log=log)
            else:
                _decompose(run_dir, dest, decompose_inference, key, log)
            status[name] = "done"
        except UserError:     # a file of the user's in the way: refused, never overwritten
            raise
        except Exception as exc:  # a toolkit analysis broken mid-refactor must not stop the zoo
            status[name] = f"failed: {type(exc).__name__}: {exc}"
        log(f"  {name}: {status[name]}")
    return status


def _rate(cell):
    return None if not cell else {k: cell.get(k) for k in ("rate", "n_detected", "n", "ci")}


#: Theorem 8's report entries the zoo quotes (bits and error rates)
_REPORT_EXTRA = ("mi", "mi_lower", "mi_upper", "error_lower_bound", "error_upper_bound",
                 "best_readout_error", "h_y", "consistent")


def _verdict_detail(v: dict) -> dict:
    """A curves-report verdict reduced to what the zoo quotes: the finding (detected and
    calibrated), the estimate with its interval, null-corrected value and p, the power on its
    matched case and the shuffled-label firing rate, its sentence, the conclusion its engine
    recorded (``outcome``, with its margin δ and the n that would decide); a report-only record
    (Theorem 8) its Eq. 12 bounds beside the best readout's error (``report``)."""
    out = {"finding": v.get("finding"), "detected": v.get("detected"),
           "calibrated": v.get("calibrated"), "estimate": v.get("estimate"),
           "interval": v.get("interval"), "corrected": v.get("corrected"), "p": v.get("p"),
           "units": v.get("units"), "power": _rate(v.get("power")),
           "false_positive": _rate(v.get("false_positive")),
           "matched_case": v.get("matched_case"), "text": v.get("text"), "rule": v.get("rule")}
    if v.get("outcome"):   # the conclusion its engine recorded (holds / opposite / ...)
        out |= {"outcome": v["outcome"], "outcome_reason": v.get("outcome_reason"),
                "margin": (v.get("margin") or {}).get("value"), "mde": v.get("mde"),
                "n_needed": v.get("n_needed")}
    extra = v.get("extra") or {}
    if extra.get("report_only"):
        out["report"] = {k: extra.get(k) for k in _REPORT_EXTRA}
    return out


def curve_summary(report_json) -> dict:
    """Per objective of a curves ``report.json``: the verdicts (the finding: detected and
    calibrated) with their power and shuffled-label rates (:func:`_verdict_detail`) and the
    diminishing-returns statistic (the g(k) slope) with its refitted interval, null-corrected
    value and label-null p; ``{}`` when the file is absent. The selection verdicts
    (``greedy_beats_random``, ``greedy_beats_prefix``) are listed with the objective they
    were computed on (the first one), with ``selection_n_resamples``."""
    path = Path(report_json)
    if not path.is_file():
        return {}
    doc = json.loads(path.read_text())
    sel = doc.get("selection") or {}
    sel_inf = sel.get("inference") or {}
    out = {}
    for obj, entry in doc.get("objectives", {}).items():
        verdicts = dict(entry.get("verdicts") or {})
        if obj == sel.get("objective"):
            verdicts.update(sel_inf.get("verdicts") or {})
        dr = verdicts.get("diminishing_returns") or {}
        out[obj] = {"verdicts": {k: v.get("finding") for k, v in verdicts.items()},
                    "verdict_details": {k: _verdict_detail(v) for k, v in verdicts.items()},
                    "gain_slope": {"slope": dr.get("estimate"), "ci": dr.get("interval"),
                                   "corrected": dr.get("corrected"),
                                   "corrected_ci": dr.get("corrected_interval"),
                                   "p": dr.get("p")},
                    "n_resamples": dr.get("n_bootstrap"),
                    "power_replicates": (entry.get("zoo_settings") or {}).get(
                        "power_replicates")}
        if obj == sel.get("objective") and sel_inf:
            out[obj]["selection_n_resamples"] = (sel_inf.get("sizes") or {}).get(
                "n_bootstrap", sel_inf.get("n_resamples"))
    return out


def current_curves(dest, settings: dict) -> dict:
    """:func:`curve_summary` of ``dest/report.json`` when its ``zoo_settings.json`` marker is
    ``settings`` (the report is of the requested claims and sizes), else ``{}`` (absent or
    stale: nothing quoted from it). Both are read only as the toolkit wrote them
    (:func:`infodiv.outputs.read_verified`): UserError (one line, with the command that
    recomputes them) otherwise."""
    from infodiv.outputs import read_verified_json

    dest = Path(dest)
    redo = (f"recompute it with `infodiv zoo report --out {dest.parent.parent} --analyses "
            "curves` (same options)")
    marker = dest / "zoo_settings.json"
    if not marker.is_file() or read_verified_json(marker, redo) != settings:
        return {}
    read_verified_json(dest / "report.json", redo)
    return curve_summary(dest / "report.json")
