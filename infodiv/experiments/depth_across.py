"""Across the models of the depth grid: one record per trained model, and depth, sharing and
truncation compared with intervals over seeds and examples (DESIGN.md 2.9).

Input: the per-model analyses of :mod:`infodiv.experiments.depth_analysis`, each with point figures
and replicates on the example resamples shared by every model of its root (same held-out prompts,
same resamples). Models of different difficulty (``hops``) are never paired with each other;
only their saturation depths are compared (:mod:`infodiv.experiments.depth_saturation`).

- :func:`model_record`: task, hops, depth, shared, seed, params, members, held-out accuracy
  (Wilson 95%), where the training loss ended (on the chance plateau or not), usable
  information I(U;Y) with its interval and bracket (bits), and every
  verdict (estimate, interval, p, power, shuffled-label rate, finding);
- :func:`by_depth`: per (shared, depth) the seed mean of every resampled figure with the
  two-level interval of :func:`infodiv.experiments.across.seed_example_interval` (seeds resampled
  with replacement inside every shared example resample);
- :func:`table1`: shared twins (L blocks executed twice) minus the unshared model of the same
  seed at equal parameters (L) and at equal executions (2L), paired replicate by replicate
  (:func:`infodiv.experiments.summary.twin_pairs`), and
  :func:`infodiv.experiments.across.gap_regression` (does the diversity gap explain the accuracy
  gap?) where there are at least 3 pairs;
- the truncated model after b blocks against the trained depth-b model of the same seed
  (:func:`infodiv.experiments.across.truncated_vs_depth`);
- :func:`growth`: linear, logarithmic, saturating-power and step laws of each figure across depth
  (:func:`infodiv.growth.fit_growth_laws`) on the seed means, per seed, and on every
  seed-and-example replicate (the share of replicates each law wins by AICc and the interval of
  the power law's asymptote);
- the saturation depth per difficulty and its shift between difficulties
  (:mod:`infodiv.experiments.depth_saturation`);
- :func:`verdict_counts`: per claim, how many models detect it, have it as a finding, the range
  of its power and the largest shuffled-label rate, and the models where it is no test.
"""

from __future__ import annotations

import numpy as np

from infodiv.growth import ALL_LAWS

from .across import (
    _pct,
    depth_groups,
    depth_rows,
    depth_sets,
    gap_regression,
    seed_example_interval,
    truncated_vs_depth,
)
from .depth_analysis import RESAMPLED
from .depth_saturation import saturation_depth, saturation_shift
from .depth_seeds import derive

__all__ = ["SCALARS", "model_record", "points_and_replicates", "by_depth", "table1", "growth",
           "verdict_counts", "summarise"]

#: scalar figures compared across models (name: description)
SCALARS = {"accuracy": "held-out accuracy",
           "usable_information": "usable information I(U;Y), bits",
           "cross_entropy": "cross-entropy of the model's option logits, nats",
           "sq_diversity": "squared-loss diversity, logit space, member scale mean (Eq. 8)",
           "ce_diversity": "cross-entropy diversity, member scale sum, bits"}
#: figures whose growth across depth is fitted
GROWTH_FIGURES = ("accuracy", "usable_information")
VERDICT_FIELDS = ("objective", "estimate", "interval", "p", "detected", "calibrated", "finding",
                  "power", "false_positive", "n_bootstrap", "n_permutations", "sentence", "text")


def model_record(a: dict) -> dict:
    """One ``summary.json`` record from the per-model analysis ``a``."""
    m, f, info = a["model"], a["figures"], a["information"]
    rec = {k: m[k] for k in ("task", "hops", "model", "depth", "shared", "seed", "params",
                             "executions", "n_members", "width", "steps")}
    rec.update(n_examples=a["n_examples"], accuracy=f["accuracy"],
               accuracy_interval=f["accuracy_wilson95"], cross_entropy=f["cross_entropy"],
               max_exactness_error=a["max_exactness_error"])
    if a.get("majority") is not None:    # the held-out majority-class rate (analyse_root)
        rec["majority"] = a["majority"]
        rec["at_chance"] = bool(f["accuracy_wilson95"][0] <= a["majority"])
    if a.get("training") is not None:   # where the training loss ended (analyse_root)
        rec["training"] = a["training"]
    rec["usable_information"] = {
        "estimate": info["joint"], "interval": info["joint_interval"],
        "bracket": [info["joint_lower"], info["joint_upper"]],
        "upper_kind": info["joint_upper_kind"], "h_y": info["h_y"],
        "relevancy": info["relevancy"], "diversity": info["diversity"], "units": "bits",
        "interval_method": "normal interval of the cross-fitted per-example terms"}
    rec["verdicts"] = {}
    for name, v in a["verdicts"].items():
        cell = {k: v.get(k) for k in VERDICT_FIELDS}
        cell["no_test"] = bool(not v["detected"] and v.get("power") is not None
                               and v["power"]["ci"][1] < 0.5)
        if (v.get("extra") or {}).get("report_only"):
            cell["report"] = {k: v["extra"][k] for k in (
                "error_lower_bound", "error_upper_bound", "best_readout_error", "consistent",
                "mi", "mi_lower", "mi_upper") if k in v["extra"]}
        rec["verdicts"][name] = cell
    if a.get("mixed") is not None:      # the mixed held-out set (1..K hops)
        rec["mixed"] = a["mixed"]
    rec["truncated"] = {"k": f["k"], "names": f["junction_names"],
                        "accuracy": f["truncated_accuracy"],
                        "subsets_accuracy": f["subsets_accuracy"]}
    rec["cpu_s"] = a["cpu_s"]
    return rec


def points_and_replicates(analyses) -> tuple[dict, dict]:
    """``points[model]`` (scalars, ``k``, ``truncated_accuracy``) and ``reps[model]`` (arrays
    [B] or [B, J]) from the analyses."""
    points, reps = {}, {}
    for a in analyses:
        name, f = a["model"]["model"], a["figures"]
        points[name] = {k: f[k] for k in SCALARS if k in f}
        points[name]["usable_information"] = a["information"]["joint"]
        points[name]["k"] = f["k"]
        points[name]["truncated_accuracy"] = f["truncated_accuracy"]
        reps[name] = {k: np.asarray(a["resamples"][k], np.float64) for k in RESAMPLED}
    return points, reps


def by_depth(records, points, reps) -> list[dict]:
    """Per (shared, depth): members, parameters, seeds, and every :data:`SCALARS` figure's seed
    mean with its seed-and-example interval."""
    return depth_rows(depth_groups(records), SCALARS, points, reps)


def table1(records, points, reps) -> dict:
    """Shared minus unshared at equal parameters and equal executions (module docstring), and
    the gap regressions on both diversities when there are at least 3 pairs: over every pair,
    and over the pairs whose two models both solve the task (``gap_regression_solving``: a
    model at chance differs from its partner in accuracy and diversity because it learned
    nothing, which can make the gaps correlate without saying anything about sharing)."""
    from .summary import twin_pairs

    pairs = twin_pairs(records)
    rows = []
    for key in sorted({p[:3] for p in pairs}):
        ps = [p for p in pairs if p[:3] == key]
        row = {"shared_depth": key[0], "compare": key[1], "unshared_depth": key[2],
               "seeds": [int(p[3]) for p in ps]}
        for name in SCALARS:
            diffs = [points[a["model"]][name] - points[b["model"]][name] for *_, a, b in ps]
            drep = [reps[a["model"]][name] - reps[b["model"]][name] for *_, a, b in ps]
            row[name] = {**seed_example_interval(diffs, drep),
                         "per_seed": [{"seed": int(p[3]), "difference": float(d),
                                       "ci95_examples": _pct(r)}
                                      for p, d, r in zip(ps, diffs, drep)]}
        rows.append(row)
    solving = [r for r in records if not r.get("at_chance")]
    return {"rows": rows, "n_pairs": len(pairs),
            "gap_regression": _gap_regressions(records, points, reps),
            "gap_regression_solving": _gap_regressions(solving, points, reps)}


def _gap_regressions(records, points, reps) -> dict:
    """:func:`infodiv.experiments.across.gap_regression` on both diversities over the
    shared/unshared pairs among ``records`` (empty below 3 pairs)."""
    from .summary import twin_pairs

    if len(twin_pairs(records)) < 3:
        return {}
    return {d: gap_regression(records, points, reps, diversity=d)
            for d in ("sq_diversity", "ce_diversity")}


def _fit(x, y) -> dict:
    from infodiv.growth import ALL_LAWS, fit_growth_laws

    return fit_growth_laws(np.asarray(y, np.float64), k=np.asarray(x, np.float64),
                           laws=ALL_LAWS)


def growth(records, points, reps, *, min_depths: int = 5, random_state: int = 0) -> list[dict]:
    """Growth laws of :data:`GROWTH_FIGURES` across the unshared depths that every seed has
    (at least ``min_depths``: the power law's AICc needs 5 points; a depth still missing a seed
    is left out, or, when that leaves too few depths, every depth is fitted on the seeds they
    all have), against depth, members and parameters: on the seed means, per seed, and on
    every seed-and-example replicate (seeds resampled with replacement per shared resample, as
    :func:`by_depth`)."""
    every = depth_groups(records)
    groups = {d: rs for (s, d), rs in every.items() if not s}
    if not groups:
        return []
    have = {d: {int(r["seed"]) for r in rs} for d, rs in groups.items()}
    depths = depth_sets(every, False)[0]       # the depths that have every seed
    seeds = set().union(*have.values())
    if len(depths) < min_depths:               # too few: the seeds that every depth has
        seeds = set.intersection(*have.values())
        depths = list(groups)
    if len(depths) < min_depths or not seeds:
        return []
    seeds = sorted(seeds)
    rng = np.random.default_rng(random_state)
    rows = []
    for fig in GROWTH_FIGURES:
        pts = np.asarray([[points[next(r["model"] for r in groups[d] if r["seed"] == s)][fig]
                           for d in depths] for s in seeds])                  # [S, D]
        rep = np.stack([np.stack([reps[next(r["model"] for r in groups[d] if r["seed"] == s)]
                                  [fig] for d in depths], axis=1) for s in seeds])  # [S, B, D]
        n_b = rep.shape[1]
        pick = rng.integers(0, len(seeds), size=(n_b, len(seeds)))
        draws = np.stack([rep[pick[b], b].mean(axis=0) for b in range(n_b)])        # [B, D]
        for xname in ("depth", "n_members", "params"):
            x = [groups[d][0][xname] for d in depths]
            fits = [_fit(x, row) for row in draws]
            winners = [f["best_aicc"] for f in fits]
            asym = [f["power"]["params"][0] for f in fits if "params" in f["power"]]
            rows.append({"figure": fig, "x": xname, "depths": depths, "x_values": x,
                         "seeds": seeds, "seed_mean": _fit(x, pts.mean(axis=0)),
                         "per_seed": {int(s): _fit(x, pts[i]) for i, s in enumerate(seeds)},
                         "replicates": {"n": n_b, "aicc_winner_share": {
                             law: winners.count(law) / n_b for law in ALL_LAWS},
                             "power_asymptote_ci95": _pct(asym)}})
    return rows


def verdict_counts(records) -> dict:
    """Per claim: models, detections, findings, power range, largest shuffled-label rate, the
    models where a "not detected" is no test and those whose finding comes with power below
    1/2 on the matched case (Wilson upper bound; counts, not readings). A model at chance
    (``at_chance``: its accuracy's Wilson interval reaches the majority rate) does not solve
    the task, so its findings are counted apart (``findings_at_chance``), not as findings."""
    out = {}
    for r in records:
        for name, v in r["verdicts"].items():
            cell = out.setdefault(name, {"n_models": 0, "n_detected": 0, "n_finding": 0,
                                         "findings": [], "no_test": [], "not_calibrated": [],
                                         "findings_without_power": [],
                                         "findings_at_chance": [], "_pw": [], "_fp": []})
            cell["n_models"] += 1
            cell["n_detected"] += bool(v["detected"])
            if v["finding"] and r.get("at_chance"):
                cell["findings_at_chance"].append(r["model"])
            elif v["finding"]:
                cell["n_finding"] += 1
                cell["findings"].append(r["model"])
                if v.get("power") and v["power"]["ci"][1] < 0.5:   # matched case ~never seen
                    cell["findings_without_power"].append(r["model"])
            if v["no_test"]:
                cell["no_test"].append(r["model"])
            if not v["calibrated"]:
                cell["not_calibrated"].append(r["model"])
            if v.get("power"):
                cell["_pw"].append(v["power"]["rate"])
            if v.get("false_positive"):
                cell["_fp"].append(v["false_positive"]["rate"])
    for cell in out.values():
        pw, fp = cell.pop("_pw"), cell.pop("_fp")
        cell.update(power_min=min(pw, default=None), power_max=max(pw, default=None),
                    false_positive_max=max(fp, default=None))
    return out


def summarise(analyses) -> dict:
    """``{"records": [...], "by_hops": {K: {...}}}``: the model records and, per difficulty,
    :func:`by_depth`, :func:`table1`, the truncated-vs-trained rows, :func:`growth` and
    :func:`verdict_counts`, the saturation depth
    (:func:`infodiv.experiments.depth_saturation.saturation_depth`); across difficulties, whether
    the saturation depth moves (:func:`infodiv.experiments.depth_saturation.saturation_shift`)."""
    records = sorted((model_record(a) for a in analyses),
                     key=lambda r: (-r["hops"], r["shared"], r["depth"], r["seed"]))
    by_hops = {}
    for hops in sorted({r["hops"] for r in records}, reverse=True):
        rs = [r for r in records if r["hops"] == hops]
        # per difficulty: its models carry the same names as the other difficulty's
        points, reps = points_and_replicates([a for a in analyses
                                              if a["model"]["hops"] == hops])
        by_hops[str(hops)] = {
            "models": [r["model"] for r in rs],
            "by_depth": by_depth(rs, points, reps),
            "table1": table1(rs, points, reps),
            "truncated_vs_depth": [t for t in truncated_vs_depth(rs, points, reps)
                                   if t["depth_model"] != t["model"]],
            "growth": growth(rs, points, reps),
            "saturation": saturation_depth(rs, points, reps),
            "verdicts": verdict_counts(rs)}
        by_hops[str(hops)]["seeds"] = derive(rs, by_hops[str(hops)])
    shift = saturation_shift({k: v["saturation"] for k, v in by_hops.items()})
    return {"records": records, "by_hops": by_hops, "saturation_shift": shift}
