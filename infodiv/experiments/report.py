"""``infodiv zoo report``: extraction and analyses of every finished zoo checkpoint.

For each finished model (``<root>/models/*/model`` and ``<root>/finetune/*/model``):

1. exact extraction on the 2000 held-out rows with :func:`extraction.extract` into
   ``<out>/contributions/<model>`` (a Contributions run directory, committed; resumable;
   not ``runs/``, which .gitignore ignores at every level);
2. headline figures (:func:`headline`): accuracy and cross-entropy of the model's own option
   logits, every bias-diversity variant of :func:`estimators.bias_diversity` (squared loss in
   logit and probability space, cross-entropy; member scale ``mean`` = paper, ``sum`` = the
   model), the paper's Eq. 14 with its gap (:func:`estimators.paper_eq14`) and the information
   decomposition I(U;Y) = relevancy + diversity of the whole member vectors by the valid
   estimators (:func:`infodiv.information.valid_terms`: usable I(U;Y) with its bracket, never
   above H(Y); Gaussian only by name, flagged above H(Y)) and the logit-lens accuracy of every
   prefix (:func:`infodiv.junctions.junction_curves`: the truncated model after each write);
3. the valid information terms with their intervals, label-permutation nulls and D's
   null-corrected value (:func:`information_inference`, from
   :mod:`infodiv.inference.information_terms`);
4. the figures of :mod:`infodiv.experiments.intervals` (probe lower bound on I(U;Y) with its
   label-permutation null, truncated-model curves) on the full run and on stratified example
   resamples shared by every model (``<out>/<model>/zoo_figures.json``, ``replicates.npz``);
   the probe bound and the information terms are centred on their full-sample values
   (:data:`infodiv.experiments.intervals.CENTRED`; the probe's raw resample mean and interval are in
   the record's ``probe_interval``);
5. the toolkit's per-run reports into ``<out>/<model>/``, when ``analyses`` asks for them:
   ``infodiv decompose`` (every variant, Eq. 14) and the curves report
   (:func:`infodiv.reports.curves.curves_report`) with the claims of
   :data:`infodiv.experiments.analyses.ZOO_CLAIMS` through the inference engine
   (:func:`infodiv.experiments.analyses.curves_settings`: accuracy at B = K = 200 example resamples
   / label permutations with 20 power surrogates of each kind, usable information of the
   calibrated summed readout (``mi_readout``) at B = K = 50 with 10 of each kind, Theorem 8's
   report on the first objective at B = K = 20, by default; the selection verdicts with their
   power: :func:`infodiv.experiments.analyses.run_analyses`).
   ``summary.json`` rows carry the held-out accuracy's Wilson interval (``accuracy_wilson95``)
   and the verdict records of the curves reports of the current settings (others are listed in
   ``across.json`` ``curves_stale``), ``across.json`` the verdict counts
   (:func:`infodiv.experiments.analyses.verdict_overview`).

The models come from the checkpoints under ``root`` or, without them, from the committed
contributions and the records of ``<out>/summary.json`` (``from_contributions``;
:mod:`infodiv.experiments.sources`).

:mod:`infodiv.experiments.summary` and :mod:`infodiv.experiments.across` then aggregate the records
across depth and seeds (seed-and-example intervals, growth laws, Table 1, truncated vs trained
depth).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from infodiv.inference.power import wilson_interval

from .analyses import (
    current_curves,
    curve_summary,
    curves_settings,
    reduce_curves,
    run_analyses,
    verdict_overview,
)
from .sources import checkpoints, extract_heldout, from_checkpoints
from .sources import from_contributions as from_contributions_sources

__all__ = ["checkpoints", "extract_heldout", "headline", "information_inference",
           "curves_settings", "run_analyses", "curve_summary", "zoo_figures", "report_zoo"]


def _cross_entropy(logits, labels) -> float:
    z = np.asarray(logits, np.float64)
    z = z - z.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    return float(-logp[np.arange(len(labels)), labels].mean())


def headline(contrib, *, info_method: str = "usable", random_state: int = 0) -> dict:
    """Accuracy, cross-entropy (nats), bias-diversity variants (their ``units``: cross-entropy
    variants in bits), Eq. 14, information terms (bits): ``"usable"`` (default) the valid
    I(U;Y) with its interval and bracket, relevancy and D; a model-based method by name
    (``"gaussian"``, ...) with the flag I(U;Y) > H(Y)."""
    from estimators import bias_diversity, information_decomposition, paper_eq14
    from infodiv.information import member_variables
    from infodiv.junctions import junction_curves

    u, y, b = contrib.u, contrib.labels, contrib.bias
    out = {"n_examples": int(len(y)),
           "accuracy": float((contrib.logits.argmax(1) == y).mean()),
           "cross_entropy": _cross_entropy(contrib.logits, y),
           "max_exactness_error": float(contrib.meta.get("max_exactness_error", np.nan)),
           "exactness_ok": bool(contrib.meta.get("exactness_ok", False))}
    for loss, space, scale in (("squared", "logit", "mean"), ("squared", "logit", "sum"),
                               ("squared", "probability", "mean"),
                               ("squared", "probability", "sum"),
                               ("cross_entropy", "logit", "mean"),
                               ("cross_entropy", "logit", "sum")):
        res = bias_diversity(u, y, loss=loss, space=space, scale=scale, bias=b)
        key = f"{loss}_{space}_{scale}" if loss == "squared" else f"{loss}_{scale}"
        out[key] = {"loss": float(res.loss), "bias": float(res.bias),
                    "diversity": float(res.diversity), "units": res.units}
    lens = junction_curves(contrib, readout="logit_lens", scale="sum", cross_entropy=False)
    out["logit_lens"] = {"k": [int(k) for k in lens.k], "names": list(lens.names),
                         "accuracy": [float(a) for a in lens.accuracy]}
    eq = paper_eq14(u, y, bias=b)
    out["paper_eq14"] = {k: float(getattr(eq, k))
                         for k in ("mse", "bias", "diversity", "ambiguity", "gap")}
    p_y = np.bincount(y) / len(y)
    h_y = float(-(p_y[p_y > 0] * np.log2(p_y[p_y > 0])).sum())
    if info_method == "usable":
        from infodiv.inference.information_terms import member_bias
        from infodiv.information import valid_terms

        t = valid_terms(u, y, bias=member_bias(contrib), random_state=random_state)
        out["information"] = {"method": "usable", "label_entropy": h_y, **{
            k: _plain(t[k]) for k in ("joint", "joint_interval", "joint_lower", "joint_upper",
                                      "joint_upper_kind", "relevancy", "diversity",
                                      "diversity_interval", "error_lower_bound",
                                      "error_upper_bound")}}
        out["information"]["flag_mi_exceeds_label_entropy"] = bool(t["joint"] > h_y)
    elif info_method:
        var = member_variables(u)
        info = information_decomposition(var, y, method=info_method, random_state=random_state)
        out["information"] = {"method": info_method, "model_based": True, **{
            k: float(getattr(info, k)) for k in ("joint", "relevancy", "redundancy",
                                                 "conditional_redundancy", "diversity",
                                                 "residual")}}
        # DESIGN 2.8 flag: an estimate above H(Y) is an estimator failure, not information
        out["information"].update(label_entropy=h_y, flag_mi_exceeds_label_entropy=bool(
            out["information"]["joint"] > h_y))
    return out


def _plain(x):
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, np.ndarray)):
        return [_plain(v) for v in x]
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    return x


def information_inference(contrib, *, n_bootstrap: int = 200, n_permutations: int = 19,
                          random_state: int = 0) -> dict:
    """The valid information terms of all members with their inference
    (:func:`infodiv.inference.information_terms.valid_inference`): ``{term: summary}`` for
    ``joint`` (usable I(U;Y): value, interval, bracket, label-null p), ``relevancy`` and
    ``diversity`` (paired bootstrap interval, label null, ``corrected``), the Eq. 12 bounds
    and ``h_y``. ``n_permutations`` label permutations, each rerunning the whole cross-fitted
    procedure; ``n_bootstrap`` paired resamples of the per-example terms (at least 200)."""
    from infodiv.inference.information_terms import valid_inference

    doc = valid_inference(contrib, n_null=n_permutations, n_boot=max(200, n_bootstrap),
                          seed=random_state)
    doc.pop("terms")
    return _plain(doc)


def _cached_json(path: Path, key: dict, compute):
    """``compute()`` reused from ``path`` when it was written with the same ``key``."""
    if path.is_file():
        cached = json.loads(path.read_text())
        if cached.get("key") == key:
            return cached["value"] if "value" in cached else cached["figures"]
    value = _plain(compute())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"key": key, "value": value}, indent=1))
    return value


def _cached_figures(contrib, path: Path, info_method, n_bootstrap, n_permutations) -> dict:
    """:func:`headline` (+ :func:`information_inference`) of a run, reused from ``path`` when
    it was computed from the same run (fingerprint) with the same settings."""
    key = {"fingerprint": contrib.meta.get("fingerprint"), "info_method": info_method,
           "n_bootstrap": int(n_bootstrap), "n_permutations": int(n_permutations)}

    def compute():
        figures = headline(contrib, info_method=info_method)
        if n_bootstrap or n_permutations:
            figures["information_inference"] = information_inference(
                contrib, n_bootstrap=n_bootstrap, n_permutations=n_permutations)
        return figures

    return _cached_json(path, key, compute)


def zoo_figures(contrib, path: Path, indices, *, probe_null: int = 50, info_null: int = 5):
    """Point figures of :func:`infodiv.experiments.intervals.model_figures`, the probe bound's
    label-permutation null (``probe_null`` permutations, 0 skips) and the replicates on the
    shared resamples ``indices`` (None skips), with the valid information replicates
    (:func:`infodiv.experiments.intervals.information_replicates`; ``info_null`` 0 skips them), each
    cached under ``path``."""
    from .intervals import cached_replicates, information_replicates, model_figures
    from .intervals import probe_null as null_of_probe

    key = {"fingerprint": contrib.meta.get("fingerprint"), "probe_null": int(probe_null)}

    def compute():
        pts = model_figures(contrib)
        if probe_null:
            pts["probe_null"] = null_of_probe(contrib, n_permutations=probe_null)
        return pts

    points = _cached_json(path / "zoo_figures.json", key, compute)
    if indices is None:
        return points, None
    reps = dict(cached_replicates(contrib, path / "replicates.npz", indices))
    if info_null:
        reps.update(cached_replicates(
            contrib, path / "usable_information_replicates.npz", indices,
            key_extra={"information": "usable"},
            compute=lambda run, idx: information_replicates(run, idx)))
    return points, reps


def report_zoo(root, out, *, data_dir=None, heldout=None, analyses=("decompose", "curves"),
               curves=None, info_method: str = "usable", n_bootstrap: int = 200,
               n_permutations: int = 19, n_resamples: int = 100, probe_null: int = 50,
               info_null: int = 5, only=None, skip=(), reduced=(), reduced_size: int = 20,
               reduced_curves=None, from_contributions: bool = False, progress: bool = True,
               log=print) -> list[dict]:
    """Extract, analyse and summarise every finished checkpoint of ``root`` into ``out``.

    Writes ``out/summary.json`` (one record per model: model, depth, shared, seed, params,
    n_members, accuracy, cross_entropy and the headline figures of :func:`headline`, plus the
    probe bound and its null) and the cross-depth tables and figures of
    :func:`infodiv.experiments.summary.write_summary` with the seed-and-example intervals of
    :mod:`infodiv.experiments.across`. ``heldout`` replaces the 2000 held-out rows (tests);
    ``n_bootstrap`` / ``n_permutations`` size :func:`information_inference` (both 0:
    skipped); ``n_resamples`` shared example resamples for every model (0 skips the
    intervals over examples); ``probe_null`` label permutations of the probe bound;
    ``info_null``: 0 skips the information replicates across depth (any other value computes
    them: :func:`infodiv.experiments.intervals.information_replicates`);
    ``curves``: :func:`curves_settings`. ``skip``: model-name substrings of finished
    checkpoints left out of this report (listed in ``across.json`` and ``summary.md``).
    ``only``: model-name substrings; the other models are skipped and no summary is written
    (parallel partial runs; a full run then reuses them).
    ``reduced``: model-name substrings whose inference runs at ``reduced_size`` resamples /
    permutations (information terms, probe null, curve inference, decompose) — the
    CPU budget for the M = 61 model; recorded in its row as ``reduced_inference``;
    ``reduced_curves``: the curve objectives so reduced (None: all).
    ``from_contributions``: no checkpoints (``root`` unused): the models are the records of
    ``out/summary.json`` and their committed contributions ``out/contributions/<model>``
    (:func:`infodiv.experiments.sources.from_contributions`, validated before any work); the
    held-out rows are the contributions' own. A model's curves entry that is not of the requested
    settings (``analyses`` without ``curves``) is left out of its row and listed under
    ``curves_stale`` in ``across.json``.
    """
    from .across import (
        by_depth,
        gap_regression,
        growth_across_depth,
        prefix_curve,
        table1,
        truncated_vs_depth,
    )
    from .data import zoo_tasks
    from .intervals import (
        CENTRED,
        centre_replicates,
        information_points,
        resample_interval,
        shared_indices,
    )
    from .summary import write_summary

    out = Path(out)
    curves = curves or curves_settings()
    if from_contributions:
        sources, labels = from_contributions_sources(out), None
    else:
        held = zoo_tasks(data_dir)[1] if heldout is None else heldout
        sources, labels = from_checkpoints(root, out, held, progress=progress), held.labels
    records, points, reps, skipped, indices = [], {}, {}, [], None
    for i, src in enumerate(sources):
        name = src.name
        if only and not any(part in name for part in only):
            continue
        if any(part in name for part in skip):
            skipped.append(name)
            log(f"[{i + 1}/{len(sources)}] {name}: skipped (--skip)")
            continue
        log(f"[{i + 1}/{len(sources)}] {name}")
        contrib = src.load()
        if labels is None:   # every model is scored on the same rows: one set of resamples
            labels = contrib.labels
        elif not np.array_equal(labels, contrib.labels):
            raise ValueError(f"{name}: its held-out labels differ from the first model's "
                             f"({contrib.n_examples} vs {len(labels)} rows)")
        if indices is None and n_resamples:
            indices = shared_indices(labels, n_resamples)
        row = dict(src.fields)
        small = any(part in name for part in reduced)
        b_info = reduced_size if small else n_bootstrap
        k_info = reduced_size if small else n_permutations
        row["reduced_inference"] = int(reduced_size) if small else None
        row.update(_cached_figures(contrib, out / name / "figures.json", info_method,
                                   b_info, max(19, k_info) if k_info else 0))
        correct = int((contrib.logits.argmax(1) == contrib.labels).sum())   # Wilson 95%
        row["accuracy_wilson95"] = [float(v) for v in wilson_interval(correct,
                                                                      contrib.n_examples)]
        if contrib.u.shape[1] != row["n_members"]:
            raise ValueError(f"{name}: extraction gave M={contrib.u.shape[1]} members, the "
                             f"record says {row['n_members']}")
        points[name], reps[name] = zoo_figures(
            contrib, out / name, indices,
            probe_null=max(19, reduced_size) if small and probe_null else probe_null,
            info_null=info_null)
        points[name].update(information_points(row.get("information_inference")))
        row["probe_bound"] = points[name]["probe_bound"]
        if reps[name] is not None:
            row["probe_interval"] = resample_interval(row["probe_bound"],
                                                      reps[name]["probe_bound"])
            reps[name] = centre_replicates(points[name], reps[name], names=CENTRED)
        row["probe_null"] = points[name].get("probe_null")
        wanted = reduce_curves(curves, reduced_size, reduced_curves) if small else curves
        row["analyses"] = run_analyses(out / "contributions" / name, out / name, analyses,
                                       curves=wanted,
                                       decompose_inference=reduced_size if small else None,
                                       log=log)
        row["curves"] = current_curves(out / name / "curves", wanted)
        records.append(row)
    if only:
        return records
    across = None
    if indices is not None:
        unshared = [r for r in records if r.get("width") and not r["shared"]]
        top = max((r["depth"] for r in unshared), default=None)
        deepest = [r["model"] for r in unshared if r["depth"] == top] + [
            r["model"] for r in records if r.get("width") is None]     # + fine-tuned models
        across = {"n_resamples": int(n_resamples), "information_null": int(info_null),
                  "skipped_checkpoints": skipped,
                  "by_depth": by_depth(records, points, reps),
                  "growth": growth_across_depth(records, points),
                  "table1": table1(records, points, reps),
                  "gap_regression": {d: gap_regression(records, points, reps, diversity=d)
                                     for d in ("sq_diversity", "ce_diversity")},
                  "truncated_vs_depth": truncated_vs_depth(records, points, reps),
                  "prefix_curves": [prefix_curve(points, reps, m) for m in deepest],
                  "verdicts": verdict_overview(records),
                  "curves_settings": curves,
                  "curves_stale": [r["model"] for r in records if not r["curves"]]}
    (out / "summary.json").write_text(json.dumps(records, indent=1))
    write_summary(records, out, across=across)
    return records
