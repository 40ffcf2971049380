"""Regenerate docs/results/, one resumable part at a time.

Called by ``scripts/regenerate_results.sh`` (which also extracts the runs); usable alone::

    python scripts/regenerate_results.py curves RUN_DIR OUT --objectives accuracy_calibrated \
        mi_readout --power accuracy_calibrated=20 mi_readout=20
    python scripts/regenerate_results.py decompositions RUN_DIR ... --out DIR
    python scripts/regenerate_results.py readme

``curves`` computes each objective as its own part with the public
``infodiv.study.curves.curves_stage`` (so that power replicates — 3 surrogate kinds × N, each
with its own bootstrap — can be spent on the headline objectives only), in
``runs/.regen/parts/<OUT name>/<objective>/``; a part whose ``report.json`` exists is reused
(resume). The first objective's part also carries the selection, greedy-stability and layer-graph
sections. The parts are merged into ``OUT/report.json`` (objectives in the given order) with
``report.md`` rendered by ``curves_markdown`` from that JSON, the figures copied, and
``OUT/regeneration.json`` recording each part's settings and CPU seconds.

``--claims`` names the registered claims (``infodiv.claims.CLAIMS``) a part judges; the
default is the registered curve claims (``claim_names("curve")``), computed as above. Any other
claim set computes only the verdict records (``infodiv.study.curves.curve_verdicts``: no curves, no
figures) of each objective as a *claim part*, ``runs/.regen/parts/<OUT name>/<objective>+<claim
>+...``, reused when its ``report.json`` exists, and no page (the parts of the page's other
objectives are not named in such a call). The merge of a default call puts every claim part
found for an objective beside that objective's default part: one verdict record per claim and
objective (a claim in two parts of one objective: exit 2, naming both).

``decompositions`` writes per-task reports (every variant of Figures 3/5/7, information terms
under the example bootstrap and the label null) and the cross-task Figure 3: per task
``junction_correlations`` (every variant, bootstrap with the series recomputed, leave-last-k
out), across tasks the Fisher-z average with the interval of the replicate-wise averages.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARTS = Path("runs/.regen/parts")
#: the figures a curves report writes (an earlier report's are removed from OUT before the copy)
FIGURES = ("answer_*.png", "curves_*.png", "gains_*.png", "shapley_*.png", "layer_graph.*")


def _commit() -> str:
    """The commit of the library code this process imports (not of the checkout's HEAD, which
    other engineers move while a part runs): a snapshot's ``.regen_commit`` (written by
    ``scripts/regenerate_results.sh`` with ``REGEN_SNAPSHOT=1``), else ``git rev-parse`` in the
    imported package's checkout, with ``+dirty`` when its infodiv/, estimators/ or extraction/
    have uncommitted changes."""
    import infodiv

    root = Path(infodiv.__file__).resolve().parent.parent
    stamp = root / ".regen_commit"
    if stamp.exists():
        return stamp.read_text().strip()[:7]
    try:
        def git(*a):
            return subprocess.run(["git", *a], capture_output=True, text=True, check=True,
                                  cwd=root).stdout.strip()
        dirty = git("status", "--porcelain", "--", "infodiv", "estimators", "extraction")
        return git("rev-parse", "--short", "HEAD") + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _load(run_dir):
    from infodiv.runfiles import load_run

    contrib, _, root = load_run(run_dir)
    return contrib, root


def _power_map(items) -> dict:
    out = {}
    for item in items or ():
        name, _, n = item.partition("=")
        if not n.isdigit():
            raise SystemExit(f"--power takes OBJECTIVE=N, got {item!r}")
        out[name] = int(n)
    return out


def _claim_set(names) -> tuple:
    """The claims of ``--claims`` (None: the default set), validated against the registry
    (an unknown name: one line naming the choices, exit 2)."""
    from infodiv.claims import claim_names, get_claims

    if not names:
        return claim_names("curve")
    try:
        get_claims(names)
    except ValueError as exc:
        print(f"regenerate_results.py curves: --claims: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    return tuple(names)


def _claim_part_dir(parts_root: Path, objective: str, claims) -> Path:
    """The folder of a claim part: the objective and its claims joined by '+'."""
    return parts_root / "+".join((objective, *claims))


def claim_parts(args, claims) -> None:
    """The verdict records of ``claims`` on each objective, one resumable claim part each
    (module docstring)."""
    from infodiv.inference.testability import testability, untestable_reason
    from infodiv.reports.serialize import jsonable, write_json
    from infodiv.study import StudySettings
    from infodiv.study.curves import curve_verdicts
    from infodiv.study.seeds import SeedPlan

    contrib, root = _load(args.run_dir)
    power = _power_map(args.power)
    test = None   # the run's testability, as curves_stage computes it (same seed stream)
    for obj in args.objectives:
        part = _claim_part_dir(PARTS / Path(args.out).name, obj, claims)
        settings = StudySettings().with_settings(
            objectives=(obj,), claims=claims, n_curve_orders=args.n_curve_orders,
            n_triples=args.n_triples, n_bootstrap=args.resamples,
            n_permutations=args.n_permutations or None, power_replicates=power.get(obj, 0),
            n_jobs=args.n_jobs)
        meta = part / "part.json"
        if meta.exists() and (part / "report.json").exists():
            done = json.loads(meta.read_text())
            print(f"[curves] {part.name}: reused (resume; B = {done['n_bootstrap']}, power "
                  f"{done['power_replicates']}; delete the folder to recompute)", flush=True)
            continue
        print(f"[curves] {part.name}: computing (B = {args.resamples}, power "
              f"{power.get(obj, 0)})", flush=True)
        part.mkdir(parents=True, exist_ok=True)
        t0, w0 = time.process_time(), time.perf_counter()
        if test is None:
            test = testability(contrib, random_state=SeedPlan(settings.seed).integer(
                "curves", "testability"))
        entry = curve_verdicts(contrib, obj, settings, progress=True,
                               untestable=untestable_reason(test, obj))
        cpu, wall = time.process_time() - t0, time.perf_counter() - w0
        write_json(part / "report.json", jsonable({
            "run": {"N": contrib.n_examples, "M": contrib.n_members},
            "settings": {"claims": list(claims), **settings.inference.sizes()},
            "objectives": {obj: entry}}))
        meta.write_text(json.dumps({
            "objective": obj, "claims": list(claims), "power_replicates": power.get(obj, 0),
            "n_bootstrap": args.resamples, "n_permutations": settings.inference.k,
            "n_curve_orders": args.n_curve_orders, "n_triples": args.n_triples,
            "cpu_s": cpu, "wall_s": wall, "n_jobs": args.n_jobs, "commit": _commit()},
            indent=1))
        print(f"[curves] {part.name}: {cpu:.0f} CPU s", flush=True)


def _merge_claim_parts(parts_root: Path, obj: str, entry: dict, record: dict) -> None:
    """Put the verdict records of every claim part of ``obj`` into ``entry`` (the default
    part's) and their settings into ``record``; a claim twice: exit 2 naming both parts."""
    owner = {name: obj for name in entry.get("verdicts") or {}}
    for part in sorted(parts_root.glob(f"{obj}+*")):
        if not (part / "report.json").exists() or not (part / "part.json").exists():
            print(f"[curves] {part.name}: unfinished claim part, left out", flush=True)
            continue
        extra = json.loads((part / "report.json").read_text())["objectives"][obj]
        for name, verdict in (extra.get("verdicts") or {}).items():
            if name in owner:
                print(f"regenerate_results.py curves: claim {name} of {obj} is in both part "
                      f"{owner[name]} and part {part.name} (one verdict per claim and "
                      f"objective): delete one of {parts_root}/{{{owner[name]},{part.name}}}",
                      file=sys.stderr)
                raise SystemExit(2)
            owner[name] = part.name
            entry.setdefault("verdicts", {})[name] = verdict
        entry.setdefault("not_tested", {}).update(extra.get("not_tested") or {})
        record["parts"][part.name] = json.loads((part / "part.json").read_text())


def curve_parts(args) -> None:
    from infodiv.claims import claim_names
    from infodiv.reports.curves_md import curves_markdown
    from infodiv.reports.serialize import write_json
    from infodiv.study import StudySettings
    from infodiv.study.curves import curves_stage

    claims = _claim_set(args.claims)
    if claims != claim_names("curve"):
        claim_parts(args, claims)
        return
    contrib, root = _load(args.run_dir)
    out = Path(args.out)
    power = _power_map(args.power)
    parts_root = PARTS / out.name
    record = {"commit_at_merge": _commit(), "run_dir": str(args.run_dir), "parts": {}}
    docs = {}
    for i, obj in enumerate(args.objectives):
        part = parts_root / obj
        first = i == 0 and (args.with_first or not args.parts_only)
        settings = StudySettings().with_settings(
            objectives=(obj,), claims=claim_names("curve"), n_curve_orders=args.n_curve_orders,
            n_triples=args.n_triples, stability=args.stability if first else 0,
            graph=first and not args.no_graph, verdicts=args.resamples != 0,
            n_bootstrap=args.resamples or 20, n_permutations=args.n_permutations or None,
            power_replicates=power.get(obj, 0), n_jobs=args.n_jobs,
            selection_verdicts=first and not args.no_selection_verdicts)
        meta = part / "part.json"
        fresh = (part / "report.json").exists() and "point" in json.loads(
            (part / "report.json").read_text())["objectives"].get(obj, {})
        if fresh and meta.exists():
            print(f"[curves] {out.name}/{obj}: reused (resume)", flush=True)
        else:
            print(f"[curves] {out.name}/{obj}: computing (power {power.get(obj, 0)})", flush=True)
            t0, w0 = time.process_time(), time.perf_counter()
            curves_stage(contrib, part, settings, run_dir=root)
            meta.write_text(json.dumps({
                "objective": obj, "power_replicates": power.get(obj, 0),
                "n_bootstrap": args.resamples, "n_permutations": args.n_permutations or None,
                "stability": settings.curves.stability, "graph": settings.curves.graph,
                "selection_verdicts": settings.selection.selection_verdicts,
                "cpu_s": time.process_time() - t0, "wall_s": time.perf_counter() - w0,
                "n_jobs": args.n_jobs, "commit": _commit()}, indent=1))
        docs[obj] = json.loads((part / "report.json").read_text())
        record["parts"][obj] = json.loads(meta.read_text())
    if args.parts_only:
        return
    if not record["parts"][args.objectives[0]]["stability"] and args.stability:
        print(f"[curves] note: the first part ({args.objectives[0]}) was computed without "
              "greedy stability; delete it to recompute", flush=True)
    merged = dict(docs[args.objectives[0]])
    merged["objectives"] = {o: d["objectives"][o] for o, d in docs.items()}
    for o, entry in merged["objectives"].items():
        if "error" not in entry:
            _merge_claim_parts(parts_root, o, entry, record)
    merged["timings_s"] = {o: d["timings_s"].get(o) for o, d in docs.items()}
    # one number when every part ran the same power replicates (what curves_markdown prints),
    # else one per objective
    per_obj = {o: power.get(o, 0) for o in args.objectives}
    merged["settings"] = {**merged["settings"], "objective": list(args.objectives),
                          "claims_by_objective": {o: list(e.get("verdicts") or {})
                                                  for o, e in merged["objectives"].items()},
                          "power_replicates": (per_obj[args.objectives[0]]
                                               if len(set(per_obj.values())) == 1 else per_obj)}
    # the report folder moves from the part to OUT: the run folder relative to OUT
    merged["run"]["dir"] = os.path.relpath(Path(root).resolve(), out.resolve())
    model = merged["run"].get("model")
    if model and os.path.isabs(model):   # a model folder: named relative to the repository
        merged["run"]["model"] = os.path.relpath(model, ROOT)
    out.mkdir(parents=True, exist_ok=True)
    for pattern in FIGURES:
        for stale in out.glob(pattern):   # figures of an earlier report, not of these parts
            stale.unlink()
    for d in (parts_root / o for o in args.objectives):
        for f in d.iterdir():
            if f.suffix in (".png", ".graphml") and not (f.suffix == ".graphml"
                                                           and f.stat().st_size > 5e6):
                shutil.copy2(f, out / f.name)
    write_json(out / "report.json", merged)
    (out / "report.md").write_text(curves_markdown(merged))
    record["cpu_s_total"] = sum(p["cpu_s"] for p in record["parts"].values())
    write_json(out / "regeneration.json", record)
    print(f"[curves] wrote {out} ({record['cpu_s_total']:.0f} CPU s in parts)", flush=True)


def decompositions(args) -> None:
    from infodiv.inference.correlations import VARIANTS, fisher_z_average, junction_correlations
    from infodiv.reports.serialize import write_json

    out = Path(args.out)
    results, record = {}, {"commit_at_merge": _commit(), "tasks": {}}
    for run_dir in args.run_dirs:
        contrib, _ = _load(run_dir)
        task = contrib.meta.get("task") or Path(run_dir).name
        contrib.meta["model"] = args.model  # as scripts/paper_figures.py labels it
        part = PARTS / "decompositions" / task
        part.mkdir(parents=True, exist_ok=True)
        if not args.correlations_only and (not args.reuse_only
                                           or (part / "report_part.json").exists()):
            record.setdefault("reports", {})[task] = _task_report(contrib, part, run_dir, args)
            # the part's report replaces the per-task folder (no stale files of older reports)
            shutil.rmtree(out / task, ignore_errors=True)
            shutil.copytree(part / "report", out / task)
        elif not args.correlations_only:
            print(f"[decompositions] {task}: report: no finished part (--reuse-only): the "
                  "folder is left as it was", flush=True)
        done = part / "part.json"
        if not done.exists():
            print(f"[decompositions] {task}: correlations: computing", flush=True)
            t1 = time.process_time()
            corr = junction_correlations(contrib, variants=tuple(VARIANTS),
                                         leave_last=tuple(args.leave_last),
                                         n_bootstrap=args.resamples)
            write_json(part / "correlations.json", corr)
            done.write_text(json.dumps({"task": task, "run_dir": str(run_dir),
                                        "report_cpu_s": 0.0,
                                        "correlations_cpu_s": time.process_time() - t1,
                                        "commit": _commit()}, indent=1))
        else:
            print(f"[decompositions] {task}: correlations: reused (resume)", flush=True)
        corr = json.loads((part / "correlations.json").read_text())
        results[task] = corr
        record["tasks"][task] = json.loads(done.read_text())
    if not args.correlations_only:
        write_json(out / "information_summary.json",
                   _information_summary(out, record.get("reports", {})))
    first = next(iter(results.values()))
    keys = sorted({_row_key(r) for r in first["rows"]})
    # keyed "variant,measure,method,left_out" (e.g. "paper_eq14/mean,diversity,pearson,0")
    doc = {"tasks": {t: {"by_key": {_row_key(row): row for row in r["rows"]},
                         "n_points": r["n_points"], "n_bootstrap": r["n_bootstrap"],
                         "leave_last": r["leave_last"]} for t, r in results.items()},
           "fisher_z_average": {k: fisher_z_average(results, *k.split(",")[:3],
                                                    left_out=int(k.split(",")[3]))
                                for k in keys},
           "p_value": "per task: example bootstrap with the junction series recomputed, "
                      "min(1, 2 min(#{r_b <= 0} + 1, #{r_b >= 0} + 1) / (B + 1)); across "
                      "tasks: Fisher-z average (weights K - 3) of r, interval = percentile "
                      "interval of the replicate-wise averages (tasks independent)"}
    for key, avg in doc["fisher_z_average"].items():   # tasks each p calls significant at 0.05
        rows = [t["by_key"][key] for t in doc["tasks"].values()]
        avg["n_tasks_significant_bootstrap"] = sum(r["p_bootstrap"] < 0.05 for r in rows)
        avg["n_tasks_significant_naive"] = sum(r["p_independent_points"] < 0.05 for r in rows)
    write_json(out / "figure3_inference.json", doc)
    _plot_figure3(doc, out / "figure3_variants.png")
    record["cpu_s_total"] = (sum(t["correlations_cpu_s"] for t in record["tasks"].values())
                             + sum(r["cpu_s"] for r in record.get("reports", {}).values()))
    write_json(out / "regeneration.json", record)
    print(f"[decompositions] wrote {out}", flush=True)


def _information_summary(out: Path, tasks) -> dict:
    """Per task and estimator, the information terms under the label null (value, null mean,
    p, null-corrected value and interval) with the codes of the flags raised on them, copied from
    each task's ``decompositions.json`` (so that a reading can quote them from one file)."""
    summary = {}
    for task in tasks:
        doc = json.loads((out / task / "decompositions.json").read_text())
        inf = doc.get("information_inference") or {}
        row = {"N": doc["run"]["N"], "M": doc["run"]["M"], "C": doc["run"]["C"],
               "dimension": doc["run"]["M"] * (doc["run"]["C"] - 1),
               "accuracy": doc["run"]["accuracy"], "methods": {}}
        for method, terms in (inf.get("methods") or {}).items():
            if "error" in terms:
                row["methods"][method] = {"error": terms["error"]}
                continue
            row["methods"][method] = {
                term: {k: t.get(k) for k in ("value", "null_mean", "p", "corrected",
                                             "corrected_ci", "ci", "bracket")}
                for term, t in terms.items() if isinstance(t, dict) and "value" in t}
        for flag in inf.get("flags") or ():
            codes = row.setdefault("flags", {}).setdefault(flag["where"], [])
            codes.append(flag["code"])
        row["flag_text"] = "; ".join(f"{w}: {', '.join(c)}"
                                     for w, c in row.get("flags", {}).items()) or "none"
        summary[task] = row
    return summary


def _task_report(contrib, part: Path, run_dir, args) -> dict:
    """The per-task decomposition report (what ``infodiv decompose`` writes: every variant of
    Figures 3/5/7, information terms under the example bootstrap and the label null) as its own
    resumable part ``part/report/`` with ``part/report_part.json`` (settings, CPU seconds)."""
    from infodiv.study.decompose import decomposition_report

    meta = part / "report_part.json"
    settings = {"info_methods": list(args.info_methods), "inference": args.resamples,
                "every_variant": True}
    if meta.exists() and json.loads(meta.read_text()).get("settings") == settings:
        print(f"[decompositions] {part.name}: report: reused (resume)", flush=True)
        return json.loads(meta.read_text())
    print(f"[decompositions] {part.name}: report: computing {settings}", flush=True)
    t0, w0 = time.process_time(), time.perf_counter()
    decomposition_report(contrib, part / "report", info_methods=tuple(args.info_methods),
                         inference=args.resamples, every_variant=True)
    doc = {"task": part.name, "run_dir": str(run_dir), "settings": settings,
           "cpu_s": time.process_time() - t0, "wall_s": time.perf_counter() - w0,
           "commit": _commit()}
    meta.write_text(json.dumps(doc, indent=1))
    return doc


def _row_key(row) -> str:
    return ",".join(str(row[k]) for k in ("variant", "measure", "method", "left_out"))


def _plot_figure3(doc, path, left_out: int = 0) -> None:
    """Figure 3 in every variant across tasks: one panel per variant (``plot_correlations``),
    a star where the bootstrap p < 0.05, the Fisher-z average as the last column."""
    from infodiv.reports.figures import plot_correlations
    from infodiv.tables import Table

    rows = [(r["variant"], task, r["measure"], r["method"], r["r"], r["p_bootstrap"],
             r["n_points"]) for task, t in doc["tasks"].items() for r in t["by_key"].values()
            if r["left_out"] == left_out]
    rows += [(a["variant"], "Fisher-z avg.", a["measure"], a["method"], a["r"],
              float("nan"), a["n_tasks"]) for a in doc["fisher_z_average"].values()
             if a["left_out"] == left_out]
    plot_correlations(Table(("model", "task", "measure", "method", "r", "p", "n"),
                            tuple(rows), "Figure 3 in every variant"), path)


def information(args) -> None:
    """Information terms of all members with their label null: the valid usable terms (I(U;Y)
    with its bracket, relevancy, D with its paired bootstrap) and the model-based Gaussian and
    copula terms (labelled, flagged above H(Y)) under the example bootstrap
    (:func:`infodiv.inference.information_terms.information_inference`), and the n, n/2, n/4
    subsampling with the 1/n extrapolation of the Gaussian I(U;Y) and D (model-based: how far
    they move with n)."""
    from infodiv.inference.information_terms import ModelBasedTerms, information_inference
    from infodiv.inference.subsampling import subsample_extrapolation
    from infodiv.reports.serialize import write_json

    contrib, _ = _load(args.run_dir)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.process_time()
    doc = {"run": {"dir": os.path.relpath(Path(args.run_dir).resolve(), out.resolve()),
                   "N": contrib.n_examples, "M": contrib.n_members},
           "information": information_inference(contrib, ("usable", "gaussian", "copula"),
                                                 n_resamples=args.resamples,
                                                 n_null=max(19, args.resamples // 5))}
    gaussian = ModelBasedTerms()
    doc["subsampling"] = {f"{t} (gaussian, model-based)": subsample_extrapolation(
        contrib, lambda r, t=t: gaussian(r, None)[t], n_subsamples=5,
        n_bootstrap=args.subsampling_resamples) for t in ("joint", "diversity")}
    doc["cpu_s"] = time.process_time() - t0
    doc["commit"] = _commit()
    write_json(out / "information.json", doc)
    print(f"[information] wrote {out / 'information.json'} ({doc['cpu_s']:.0f} CPU s)",
          flush=True)


def agnews_select(args) -> None:
    """The prompt-setting comparison on held-out rows: per setting (one extracted run each, the
    same rows), the model's own accuracy (argmax of its option logits) with its Wilson 95%
    interval; ``chosen`` is the setting of the highest accuracy (the first listed on a tie).
    Written to ``--out`` (JSON); the setting name is the run folder's name after 'select-'."""
    from infodiv.inference.power import wilson_interval
    from infodiv.reports.serialize import write_json

    settings, rows = {}, None
    for run_dir in args.run_dirs:
        contrib, _ = _load(run_dir)
        meta = contrib.meta.get("task_meta") or {}
        span = [meta.get("start", 0), meta.get("start", 0) + contrib.n_examples]
        if rows is not None and span != rows:
            print(f"regenerate_results.py agnews-select: {run_dir} holds rows {span[0]}.."
                  f"{span[1] - 1}, the first run rows {rows[0]}..{rows[1] - 1}: compare one "
                  "set of rows", file=sys.stderr)
            raise SystemExit(2)
        rows = span
        correct = contrib.logits.argmax(axis=1) == contrib.labels
        k, n = int(correct.sum()), int(correct.size)
        name = Path(run_dir).name.removeprefix("select-")
        settings[name] = {
            "run_dir": str(run_dir), "n": n, "correct": k, "accuracy": k / n,
            "accuracy_ci": list(wilson_interval(k, n)),
            "chat_template": bool(contrib.meta.get("chat_template")),
            "shots": int(meta.get("shots", 0)), "fixed_demos": bool(meta.get("fixed_demos")),
            "demo_rows": meta.get("demo_rows")}
    chosen = max(settings, key=lambda s: settings[s]["accuracy"])
    write_json(Path(args.out), {
        "task": "ag_news", "split": "test", "rows": rows, "rule": (
            "the setting of the highest accuracy of the model's own option logits on these "
            "held-out rows (outside the analysed rows 0-1999); Wilson 95% intervals"),
        "settings": settings, "chosen": chosen})
    listed = ", ".join(f"{name} {v['accuracy']:.4f}" for name, v in settings.items())
    print(f"[agnews-select] {listed}: chosen {chosen}", flush=True)


def agnews_decompose(args) -> None:
    """What ``infodiv decompose`` writes (bias-diversity in every variant, module shares,
    junction curves with the fixed-scale and the logit-lens readout, Figures 3/5/7 in every
    variant, the usable information terms: I(U;Y) with its bracket, relevancy, D by the
    identity) for one run, as one resumable part ``runs/.regen/parts/<OUT name>/decompositions``
    (``part.json``: settings and CPU seconds), copied to ``OUT/decompositions/``."""
    from infodiv.study.decompose import decomposition_report

    out = Path(args.out)
    part = PARTS / out.name / "decompositions"
    meta = part / "part.json"
    settings = {"info_methods": list(args.info_methods), "inference": args.resamples,
                "info_null": args.info_null, "every_variant": True}
    if meta.exists() and json.loads(meta.read_text()).get("settings") == settings:
        print(f"[decompose] {out.name}: reused (resume; delete {part} to recompute)", flush=True)
    else:
        contrib, _ = _load(args.run_dir)
        print(f"[decompose] {out.name}: computing {settings}", flush=True)
        t0, w0 = time.process_time(), time.perf_counter()
        decomposition_report(contrib, part / "report", info_methods=tuple(args.info_methods),
                             inference=args.resamples, info_null=args.info_null,
                             every_variant=True, progress=True)
        meta.write_text(json.dumps({
            "run_dir": str(args.run_dir), "settings": settings,
            "cpu_s": time.process_time() - t0, "wall_s": time.perf_counter() - w0,
            "commit": _commit()}, indent=1))
    shutil.rmtree(out / "decompositions", ignore_errors=True)
    shutil.copytree(part / "report", out / "decompositions")
    print(f"[decompose] wrote {out / 'decompositions'}", flush=True)


def _prefix_readout(dec: dict) -> dict:
    """Per block, the readouts of the prefix that ends with the block's MLP write (its
    junction): the logit lens (the model cut after the block) with its example-bootstrap band,
    and the fixed-scale sum, copied from the decompositions' junction curves."""
    lens, fixed = (dec["junction_curves"][r] for r in ("logit_lens", "fixed"))
    rows = {"block": [], "k": [], "logit_lens_accuracy": [], "logit_lens_ci": [],
            "fixed_accuracy": []}
    for i, name in enumerate(lens["names"]):
        if name.endswith(".mlp#0"):
            rows["block"].append(int(name[1:name.index(".")]))
            rows["k"].append(lens["k"][i])
            rows["logit_lens_accuracy"].append(lens["accuracy"][i])
            rows["logit_lens_ci"].append(lens["accuracy_ci"][i])
            rows["fixed_accuracy"].append(fixed["accuracy"][fixed["names"].index(name)])
    rows["embedding_logit_lens_accuracy"] = lens["accuracy"][0]
    rows["majority_rate"] = lens.get("majority_rate")
    return rows


def agnews_page(args) -> None:
    """``OUT/report_page.json``: what the page states beyond the curves report (OUT/report.json)
    and the decompositions (OUT/decompositions/): the answer paragraph generated from their
    records (:func:`infodiv.reports.answer.answer_of`), the run and its prompt setting, the
    model's own accuracy with its Wilson interval and the per-example labels and predictions it
    is computed from, the prompt-setting comparison, the prefix readout per block, and the CPU
    seconds of every step (extractions from ``runs/.regen/<step>.cpu``, curves parts from
    OUT/regeneration.json, the decompositions part)."""
    from infodiv.inference.power import wilson_interval
    from infodiv.reports.answer import answer_document
    from infodiv.reports.serialize import write_json

    contrib, _ = _load(args.run_dir)
    out = Path(args.out)
    selection = json.loads(Path(args.selection).read_text())
    pred = contrib.logits.argmax(axis=1)
    correct = pred == contrib.labels
    k, n = int(correct.sum()), int(correct.size)
    meta = contrib.meta.get("task_meta") or {}
    dec = json.loads((out / "decompositions" / "decompositions.json").read_text())
    cpu = {}
    for name in args.steps:
        marker = Path("runs/.regen") / f"{name}.cpu"
        cpu[name] = float(marker.read_text()) if marker.exists() else None
    regen = json.loads((out / "regeneration.json").read_text())
    for name, part in regen["parts"].items():
        cpu[f"curves {name}"] = part["cpu_s"]
    dpart = json.loads((PARTS / out.name / "decompositions" / "part.json").read_text())
    cpu["decompositions"] = dpart["cpu_s"]
    write_json(out / "report_page.json", {
        # the answer paragraph, generated from the records as on every run's HTML page
        "answer": answer_document(dec, json.loads((out / "report.json").read_text())),
        "run": {"dir": os.path.relpath(Path(args.run_dir).resolve(), out.resolve()),
                "model": "SmolLM2-135M-Instruct (smollm2-135m, GGUF Q4_1 de-quantized, float32)",
                "task": "ag_news", "split": meta.get("split"), "rows": [0, n],
                "N": n, "M": contrib.n_members, "C": contrib.n_options,
                "granularity": contrib.meta.get("granularity"),
                "options": list(contrib.options),
                "prompt_setting": selection["chosen"],
                "chat_template": bool(contrib.meta.get("chat_template")),
                "shots": int(meta.get("shots", 0)), "fixed_demos": bool(meta.get("fixed_demos")),
                "demo_rows": meta.get("demo_rows"), "template": contrib.meta.get("template"),
                "max_exactness_error": contrib.meta.get("max_exactness_error")},
        "accuracy": {"value": k / n, "ci": list(wilson_interval(k, n)), "correct": k, "n": n,
                     "interval": "Wilson 95%", "of": "the model's own option logits (argmax)"},
        "arrays": {"labels": contrib.labels.tolist(), "predictions": pred.tolist()},
        "prompt_selection": selection,
        "prefix_readout": _prefix_readout(dec),
        # Theorems 5-6 along the depth order: usable I of the prefixes 1, 2, 4, .., M (cross-
        # fitted readouts, the same folds), R and D = I - R, from the decompositions
        "information_prefix": {**dec["information_inference"]["methods"]["usable"]["prefix"],
                               "last_member": [contrib.members[k - 1].name for k in
                                               dec["information_inference"]["methods"][
                                                   "usable"]["prefix"]["sizes"]]},
        # Figure 3 (Pearson/Spearman r of accuracy with MSE, bias, diversity over the junction
        # points, bootstrap with the series recomputed) keyed VARIANT-MEASURE-METHOD-LEFTOUT,
        # and Figure 4 (module shares of bias and diversity) keyed TERM_GROUP, for reading
        "figure3": {"-".join((r["variant"].replace("/", "_"), r["measure"], r["method"],
                              str(r["left_out"]))): {k: r[k] for k in ("r", "ci", "p_bootstrap")}
                    for r in dec["figures_every_variant"]["rows"]},
        "figure4": {f"{r['term']}_{r['group']}": r["share"] for r in dec["module_shares"]},
        "cpu_s": cpu, "cpu_s_total": sum(v for v in cpu.values() if v is not None)})
    print(f"[agnews-page] wrote {out / 'report_page.json'}", flush=True)


def readme(args) -> None:
    """Fill every ``README.template.md`` under docs/results (zoo excluded) from the JSON, after
    writing each run page's ``answer.json`` from its records (:func:`write_answer`; a page
    whose ``report_page.json`` holds its answer keeps that one)."""
    from infodiv.reports.markdown import fill_numbers

    root = Path(args.root)
    for report in sorted(root.glob("*/report.json")):   # each run page's answer, from its records
        if not (report.parent / "report_page.json").exists() or \
                "answer" not in json.loads((report.parent / "report_page.json").read_text()):
            write_answer(report.parent)
    for template in sorted(root.glob("**/README.template.md")):
        if "zoo" in template.relative_to(root).parts:
            continue
        target = template.with_name("README.md")
        target.write_text(fill_numbers(template.read_text(), template.parent))
        print(f"[readme] wrote {target}", flush=True)


def page_answer(out: Path) -> dict:
    """The answer paragraph, the verdict list and every conclusion of the run page ``out``
    (the zoo's folder, which holds ``across.json``: its answer lines counted over the models,
    :func:`infodiv.experiments.zoo_answer.answer_document`),
    generated from out/report.json (and out/decompositions/decompositions.json where the page
    has one) by :func:`infodiv.reports.answer.answer_document`; the model's readout from the
    page's stored labels and predictions where the report predates testability."""
    from infodiv.inference.testability import raw_readout_of
    from infodiv.reports.answer import answer_document

    if (out / "across.json").exists():   # the zoo: counted over its models' records
        from infodiv.experiments.zoo_answer import answer_document as zoo_answer

        return zoo_answer(json.loads((out / "summary.json").read_text()),
                          json.loads((out / "across.json").read_text()))
    dec_path, page_path = out / "decompositions" / "decompositions.json", out / "report_page.json"
    dec = json.loads(dec_path.read_text()) if dec_path.exists() else {}
    raw = None   # a report without testability: the model's readout from the page's arrays
    if page_path.exists():
        arrays = json.loads(page_path.read_text()).get("arrays")
        raw = arrays and raw_readout_of(arrays["labels"], arrays["predictions"])
    return answer_document(dec, json.loads((out / "report.json").read_text()), raw)


def write_answer(out: Path) -> None:
    """``out/answer.json`` (:func:`page_answer`): the page template quotes it, so its prose
    states no verdict the records do not hold."""
    from infodiv.reports.serialize import write_json

    write_json(out / "answer.json", page_answer(out))
    print(f"[answer] wrote {out / 'answer.json'}", flush=True)


def answer(args) -> None:
    """The ``answer`` command: :func:`write_answer` of the page ``args.out``."""
    write_answer(Path(args.out))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    c = sub.add_parser("curves", help="curves report per objective, merged")
    c.add_argument("run_dir")
    c.add_argument("out")
    c.add_argument("--objectives", nargs="+", required=True)
    c.add_argument("--power", nargs="*", default=[], help="OBJECTIVE=N surrogates per kind")
    c.add_argument("--claims", nargs="+", default=None,
                   help="registered claims judged on each objective (default: the curves "
                        "report's; any other set: claim parts only, merged by a default call)")
    c.add_argument("--resamples", type=int, default=200, help="example resamples B (0: none)")
    c.add_argument("--n-permutations", type=int, default=0,
                   help="label permutations K (0: = B)")
    c.add_argument("--n-curve-orders", type=int, default=200,
                   help="random member orders of the drawn curves")
    c.add_argument("--n-triples", type=int, default=200)
    c.add_argument("--stability", type=int, default=10)
    c.add_argument("--no-graph", action="store_true")
    c.add_argument("--no-selection-verdicts", action="store_true",
                   help="no selection verdicts on the first part (else at B, K)")
    c.add_argument("--n-jobs", type=int, default=1, help="joblib workers of each part")
    c.add_argument("--parts-only", action="store_true",
                   help="compute the parts (none as the first: no stability/graph), no merge")
    c.add_argument("--with-first", action="store_true",
                   help="with --parts-only: the first objective's part is the merge's first "
                        "(selection, greedy stability, layer graph)")
    d = sub.add_parser("decompositions", help="per-task reports and the cross-task Figure 3")
    d.add_argument("run_dirs", nargs="+")
    d.add_argument("--out", default="docs/results/decompositions")
    d.add_argument("--model", default="smollm2-135m")
    d.add_argument("--resamples", type=int, default=200)
    d.add_argument("--leave-last", type=int, nargs="+", default=[1, 5])
    d.add_argument("--info-methods", nargs="+", default=["usable"],
                   help="estimators of the per-task information terms (infodiv decompose's)")
    d.add_argument("--reuse-only", action="store_true",
                   help="per-task reports only from finished parts (no new computation)")
    d.add_argument("--correlations-only", action="store_true",
                   help="only the Figure-3 correlations (no per-task decomposition report)")
    i = sub.add_parser("information", help="information terms with nulls + subsampling")
    i.add_argument("run_dir")
    i.add_argument("out")
    i.add_argument("--resamples", type=int, default=200)
    i.add_argument("--subsampling-resamples", type=int, default=200)
    a = sub.add_parser("agnews-select", help="prompt settings compared on held-out rows")
    a.add_argument("run_dirs", nargs="+")
    a.add_argument("--out", required=True)
    e = sub.add_parser("agnews-decompose", help="one run's decompositions, one resumable part")
    e.add_argument("run_dir")
    e.add_argument("out")
    e.add_argument("--resamples", type=int, default=20)
    e.add_argument("--info-null", type=int, default=0)
    e.add_argument("--info-methods", nargs="+", default=["usable"])
    g = sub.add_parser("agnews-page", help="the page's own JSON (run, accuracy, selection, "
                                           "prefix readout, CPU seconds)")
    g.add_argument("run_dir")
    g.add_argument("out")
    g.add_argument("--selection", required=True)
    g.add_argument("--steps", nargs="*", default=[],
                   help="runs/.regen step names whose .cpu markers are listed")
    w = sub.add_parser("answer", help="a run page's answer paragraph and verdict list "
                                      "(OUT/answer.json) from its records")
    w.add_argument("out")
    r = sub.add_parser("readme", help="fill README.template.md files from the JSON")
    r.add_argument("--root", default="docs/results")
    args = ap.parse_args(argv)
    {"curves": curve_parts, "decompositions": decompositions, "information": information,
     "agnews-select": agnews_select, "agnews-decompose": agnews_decompose,
     "agnews-page": agnews_page, "answer": answer, "readme": readme}[args.what](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
