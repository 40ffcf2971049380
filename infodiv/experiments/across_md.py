"""Markdown and figure of the :mod:`infodiv.experiments.across` document (numbers rounded for
reading; the full values are in ``across.json``)."""

from __future__ import annotations

import numpy as np

from infodiv.claims import CLAIMS, claim_names

from .intervals import INFORMATION, SCALARS

__all__ = ["across_markdown", "across_figure"]

_SHORT = {"accuracy": "accuracy", "cross_entropy": "CE (nats)", "sq_bias": "sq bias",
          "sq_diversity": "sq diversity", "ce_bias": "CE bias (bits)",
          "ce_diversity": "CE diversity (bits)", "probe_bound": "probe I(U;Y) >= (bits)",
          "usable_joint": "I(U;Y) usable", "usable_relevancy": "sum I(U_m;Y)",
          "usable_d": "D = I - sum", "usable_d_corrected": "D corr."}


def _present(rows, names) -> list[str]:
    return [n for n in names if rows and all(n in r for r in rows)]


def _ci(cell, spec=".3f") -> str:
    m, (lo, hi) = cell["mean"], cell["ci95"]
    if not np.isfinite(m):
        return "-"
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return format(m, spec)
    return f"{m:{spec}} [{lo:{spec}}, {hi:{spec}}]"


def _bounds(ci, spec=".3f") -> str:
    return f"[{ci[0]:{spec}}, {ci[1]:{spec}}]"


def _pair(v, ci, spec=".3f") -> str:
    if v is None or not np.isfinite(v):
        return "-"
    lo, hi = ci
    return f"{v:{spec}} [{lo:{spec}}, {hi:{spec}}]" if np.isfinite(lo) else format(v, spec)


def _depth_table(rows, names) -> list[str]:
    lines = ["| shared | L | M | params | seeds | " + " | ".join(_SHORT[n] for n in names)
             + " |", "|" + "---|" * (5 + len(names))]
    for r in rows:
        lines.append(f"| {'yes' if r['shared'] else 'no'} | {r['depth']} | {r['n_members']} | "
                     f"{r['params']:,} | {len(r['seeds'])} | "
                     + " | ".join(_ci(r[n]) for n in names) + " |")
    return lines


def _by_depth(doc) -> list[str]:
    rows = doc["by_depth"]
    lines = ["## Across depth: seed mean, 95% interval over seeds and examples", "",
             f"Two-level bootstrap: {doc['n_resamples']} stratified resamples of the held-out "
             "prompts shared by every model, seeds resampled inside each (one seed: examples "
             "only).", "", *_depth_table(rows, _present(rows, SCALARS))]
    info = _present(rows, INFORMATION)
    if info:
        lines += ["", "Information terms (bits) of the whole member vectors, same two-level "
                  "intervals: usable I(U;Y) (cross-fitted, never above H(Y) = 2 bits), the "
                  "sum of the members' own I(U_m;Y) and D = I(U;Y) minus that sum; each "
                  "model's per-example held-out terms averaged over the shared resamples, "
                  "centred on its full-sample value; 'D corr.' = D minus its label-null mean.",
                  "", *_depth_table(rows, info)]
    return lines


def _growth(doc) -> list[str]:
    lines = ["", "## Growth laws across depth (AICc winner per seed; seed-mean fit)", "",
             "AICc needs n > p + 1 points: with 4 depths the power law (p = 3) has no AICc, "
             "with 3 depths no law has one; 'replicated' = at least 2 seeds, all with the same "
             "winner.", "",
             "| family | depths | x | figure | seeds' winners | replicated | seed-mean winner | "
             "seed-mean AICc lin / log / power |", "|---|---|---|---|---|---|---|---|"]
    for g in doc["growth"]:
        sm = g["seed_mean"]
        aic = " / ".join("-" if sm[k].get("aicc") is None or not np.isfinite(sm[k]["aicc"])
                         else f"{sm[k]['aicc']:.1f}"
                         for k in ("linear", "log", "power"))
        lines.append(f"| {'shared' if g['shared'] else 'unshared'} | "
                     f"{','.join(str(d) for d in g['depths'])} | {g['x']} | {g['figure']} "
                     f"| {', '.join(str(w) for w in g['winners'])} | "
                     f"{'yes' if g['replicates'] else 'no'} | {sm['best_aicc']} | {aic} |")
    return lines


def _table1(doc) -> list[str]:
    names = _present(doc["table1"], (*SCALARS, "usable_d_corrected"))
    lines = ["", "## Table 1 form: shared minus unshared, paired by seed and resample", "",
             "| shared L | vs | unshared L | seeds | " + " | ".join(_SHORT[n] for n in names)
             + " |", "|" + "---|" * (4 + len(names))]
    for r in doc["table1"]:
        lines.append(f"| {r['shared_depth']} | {r['compare']} | {r['unshared_depth']} | "
                     f"{len(r['seeds'])} | " + " | ".join(_ci(r[n]) for n in names) + " |")
    lines += ["", "Does the diversity gap explain the accuracy gap? Correlation and slope of "
              "the accuracy gap on the diversity gap over every pair (interval: shared "
              "resamples; p: gaps permuted across pairs, two-sided):", "",
              "| diversity | pairs | r | slope (accuracy per unit diversity) | p |",
              "|---|---|---|---|---|"]
    for name, g in doc["gap_regression"].items():
        if "r" not in g:
            lines.append(f"| {name} | {g['n_pairs']} | - | - | - |")
            continue
        lines.append(f"| {name} | {g['n_pairs']} | {_pair(g['r'], g['r_ci95'])} | "
                     f"{_pair(g['slope'], g['slope_ci95'], '.4f')} | "
                     f"{g['p_permutation']:.3f} |")
    return lines


def _truncated(doc) -> list[str]:
    lines = ["", "## Truncated deepest model (logit lens) vs the trained depth-b model "
             "(same seed)", "", "| model | after block b | truncated | depth-b model | "
             "difference (paired) |", "|---|---|---|---|---|"]
    for r in doc["truncated_vs_depth"]:
        lines.append(f"| {r['model']} | {r['after_block']} | "
                     f"{_pair(r['truncated_accuracy'], r['truncated_ci95'])} | "
                     f"{_pair(r['depth_model_accuracy'], r['depth_model_ci95'])} | "
                     f"{_pair(r['difference'], r['difference_ci95'], '+.4f')} |")
    for pc in doc["prefix_curves"]:
        acc, ci = pc["truncated_accuracy"], pc["truncated_accuracy_ci95"]
        marks = sorted({1, 2, 3, len(acc) // 4, len(acc) // 2, len(acc) - 1}
                       & set(range(1, len(acc))))
        gl = pc["growth_laws"]
        lines += ["", f"Truncated-model accuracy of {pc['model']} after k members "
                  f"(k = 1: the embedding alone): "
                  + ", ".join(f"k={pc['k'][j]}: {_pair(acc[j], ci[j])}" for j in marks)
                  + f". Growth laws of this prefix curve: AICc winner {gl['best_aicc']}, "
                  f"extrapolation winner {gl['best_extrapolation']}."]
    return lines


def _yes(v) -> str:
    return "-" if v is None else ("yes" if v else "no")


def _power(detail, key) -> str:
    cell = (detail or {}).get(key)
    if not cell or cell.get("rate") is None:
        return "-"
    return f"{cell['rate']:.2f} ({cell['n_detected']}/{cell['n']})"


def _verdicts(records) -> list[str]:
    rows = [r for r in records if r.get("curves")]
    if not rows:
        return []
    lines = ["", "## Curve inference per model (infodiv curves report, refitted example "
             "bootstrap + label-permutation null, power surrogates)", "",
             "g(k) slope: OLS slope of the random-order gain profile on k. DR = the "
             "diminishing-returns verdict (g(k) slope: CI and null-corrected CI below 0, null "
             "p < 0.05), viol. = some DR triple violated beyond its null; 'finding' = detected "
             "and calibrated (its shuffled-label surrogates do not fire beyond 0.05). power = "
             "detection rate on the matched case (DR: members permuted independently within "
             "each class; viol.: planted synergy the objective can read), FP = rate on shuffled "
             "labels; '-' = no power run (a 'no' beside '-' or beside power 0.00 is no test).",
             "",
             "| model | objective | B | g(k) slope [95%] | null-corrected [95%] | "
             "p | DR | DR power | DR FP | viol. | viol. power | viol. FP |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        for obj, c in r["curves"].items():
            g = c["gain_slope"]
            if g.get("slope") is None:
                continue
            ci, cc = g.get("ci") or [np.nan, np.nan], g.get("corrected_ci") or [np.nan, np.nan]
            cor = np.nan if g.get("corrected") is None else g["corrected"]
            p = "-" if g.get("p") is None else f"{g['p']:.3f}"
            det = c.get("verdict_details") or {}
            dr, vi = det.get("diminishing_returns"), det.get("violations")
            lines.append(f"| {r['model']} | {obj} | {c.get('n_resamples') or '-'} | "
                         f"{_pair(g['slope'], ci, '.4g')} | {_pair(cor, cc, '.4g')} | {p} | "
                         f"{_yes(c['verdicts'].get('diminishing_returns'))} | "
                         f"{_power(dr, 'power')} | {_power(dr, 'false_positive')} | "
                         f"{_yes(c['verdicts'].get('violations'))} | {_power(vi, 'power')} | "
                         f"{_power(vi, 'false_positive')} |")
    return lines


def _columns(names) -> tuple:
    """``(claim, column title)`` of registered claims: the title is the claim's ``short``."""
    return tuple((n, CLAIMS[n].short) for n in names)


#: verdicts of the second table: the diversity effect and the selection claims
ADDED = _columns(("diversity_effect", *claim_names("selection")))


def _claim_table(records, claims, title: str, text: str, columns: str, cell) -> list[str]:
    """One row per model and objective whose curves quote any of ``claims`` ((key, column
    title) pairs): ``cell(detail)`` renders a claim's ``len(columns)`` cells ('-' where the
    claim is absent); ``columns`` the titles after each claim's own."""
    rows = [(r, obj, c) for r in records for obj, c in (r.get("curves") or {}).items()
            if any(k in (c.get("verdict_details") or {}) for k, _ in claims)]
    if not rows:
        return []
    width = len(columns) + 1
    head = " | ".join(" | ".join((t, *columns)) for _, t in claims)
    lines = ["", title, "", text, "", f"| model | objective | {head} |",
             "|---|---|" + "---|" * (width * len(claims))]
    for r, obj, c in rows:
        det = c.get("verdict_details") or {}
        cells = [cell(det[k]) if k in det else " | ".join(["-"] * width) for k, _ in claims]
        lines.append(f"| {r['model']} | {obj} | " + " | ".join(cells) + " |")
    return lines


def _rates(d) -> str:
    return f"{_power(d, 'power')} | {_power(d, 'false_positive')}"


def _added_verdicts(records) -> list[str]:
    """Diversity-effect and selection verdicts per model and objective, each with its power
    and shuffled-label rate ('-' = not computed: a 'no' there is no test)."""
    return _claim_table(
        records, ADDED, "## Diversity-effect and selection verdicts per model",
        "div. effect = the diversity regression's beta > 0 (three-part rule on its partial "
        "r; matched case: planted redundancy, the strongest members copied with noise onto "
        "others); greedy > best random / prefix = held-out greedy selection beats the best "
        "of 50 random orders / the depth prefix, averaged over budgets k = 1..M-1 "
        "(B = K = 50; matched case: information concentrated in the last members; computed "
        "on the first objective only). Cells: finding (yes/no), power = rate on the "
        "matched case (detected / surrogates), FP = rate on shuffled labels; '-' = no "
        "power run, and power 0.00 = the matched case is never detected: a 'no' beside "
        "either is no test, not evidence of absence.", ("power", "FP"),
        lambda d: f"{_yes(d.get('finding'))} | {_rates(d)}")


#: the claims that tell redundancy from a ceiling (the registry's control claims)
CONTROL = _columns(claim_names("control"))


def _estimate(d) -> str:
    est = np.nan if d.get("estimate") is None else d["estimate"]
    return _pair(est, d.get("interval") or [np.nan, np.nan], ".3g")


def _control_verdicts(records) -> list[str]:
    """Per model and objective, the claims judged against the members' conditionally
    independent control: estimate with its interval, finding, power and shuffled-label rate."""
    return _claim_table(
        records, CONTROL, "## Redundancy against the conditionally independent control per "
        "model",
        "premise = within-class dependence of the members (Theorem 7's premise, "
        "permutation test); redundancy cost = f(all) of the members made conditionally "
        "independent (each permuted within its class) minus f(all) of the real ones; "
        "gains vs control = g(k) slope of the real members minus the control's (same "
        "orders); marginal gain vs redundancy = partial r of a member's gain and its "
        "redundancy with the set. Each claim: estimate [refitted example-bootstrap 95%], "
        "finding = detected and calibrated, power = rate on the matched case, FP = rate on "
        "shuffled labels ('-': no power run; a 'no' beside '-' or power 0.00 is no test).",
        ("finding", "power", "FP"),
        lambda d: f"{_estimate(d)} | {_yes(d.get('finding'))} | {_rates(d)}")


def _theorem8(records) -> list[str]:
    """Per model, Theorem 8's report: the Eq. 12 bounds on the Bayes error given all members
    from the usable-information bracket of I(U;Y), beside the best readout's held-out error."""
    rows = [(r, d["report"]) for r in records for c in (r.get("curves") or {}).values()
            for k, d in (c.get("verdict_details") or {}).items()
            if k == "theorem8" and d.get("report")]
    if not rows:
        return []
    lines = ["", "## Theorem 8 (Eq. 12) per model: a report, not a test", "",
             "I(U;Y) = cross-fitted usable information of all members' vectors (bits) with "
             "its bracket [lower, upper]; P_e* = the Bayes error of the best classifier of "
             "all members (not the model's own argmax error), bounded by Eq. 12 from the "
             "bracket; beside it the held-out error of the best usable-information readout "
             "(consistent = not below the lower bound).", "",
             "| model | I(U;Y) | bracket | H(Y) | P_e* lower | P_e* upper | best readout "
             "error | consistent |", "|---|---|---|---|---|---|---|---|"]
    for r, t in rows:
        lines.append(f"| {r['model']} | {t['mi']:.3f} | {_bounds([t['mi_lower'], t['mi_upper']])}"
                     f" | {t['h_y']:.3f} | {t['error_lower_bound']:.3f} | "
                     f"{t['error_upper_bound']:.3f} | {t['best_readout_error']:.3f} | "
                     f"{_yes(t['consistent'])} |")
    return lines


def across_markdown(doc, records) -> str:
    """The across-depth sections of ``summary.md``."""
    lines = (_by_depth(doc) + _growth(doc) + _table1(doc) + _truncated(doc)
             + _verdicts(records) + _added_verdicts(records) + _control_verdicts(records)
             + _theorem8(records))
    if doc.get("curves_stale"):
        lines += ["", "Models whose curves report is not of the current settings (no verdict "
                  "quoted from it): " + ", ".join(doc["curves_stale"]) + "."]
    if doc.get("skipped_checkpoints"):
        lines += ["", "Finished checkpoints left out of this report (not yet analysed): "
                  + ", ".join(doc["skipped_checkpoints"]) + "."]
    probe = [r for r in records if r.get("probe_null")]
    if probe:
        lines += ["", "## Probe lower bound on I(U;Y) with its label-permutation null", "",
                  "95% = example interval (replicates centred on the point); resample mean and "
                  "raw 95% = the refitted probe on the resamples before centring.", "",
                  "| model | probe bound (bits) | 95% | resample mean | raw 95% | null mean | "
                  "null 95% | p | corrected |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in probe:
            n, iv = r["probe_null"], r.get("probe_interval")
            ex = ("| - | - | - |" if not iv else
                  f"| {_bounds(iv['ci95'])} | {iv['resample_mean']:.3f} | "
                  f"{_bounds(iv['resample_ci95'])} |")
            lines.append(f"| {r['model']} | {n['observed']:.3f} {ex} {n['null_mean']:.3f} | "
                         f"{_bounds(n['null_interval'])} | {n['p']:.3f} | {n['corrected']:.3f} |")
    return "\n".join(lines) + "\n"


def across_figure(doc, path) -> None:
    """Accuracy, CE diversity, the probe bound and the null-corrected D against
    members and against parameters, with the seed-and-example intervals."""
    from matplotlib.figure import Figure

    panels = _present(doc["by_depth"], ("accuracy", "ce_diversity", "probe_bound",
                                        "usable_d_corrected"))
    fig = Figure(figsize=(3.7 * len(panels), 6.4))
    for row, x in enumerate(("n_members", "params")):
        for col, name in enumerate(panels):
            ax = fig.add_subplot(2, len(panels), len(panels) * row + col + 1)
            for shared, style in ((False, "o-"), (True, "s--")):
                rs = [r for r in doc["by_depth"] if r["shared"] == shared]
                if not rs:
                    continue
                xs = np.asarray([r[x] for r in rs], float)
                m = np.asarray([r[name]["mean"] for r in rs])
                lo = np.asarray([r[name]["ci95"][0] for r in rs])
                hi = np.asarray([r[name]["ci95"][1] for r in rs])
                # the interval as a segment: a point estimate may lie outside its
                # resampling interval (a biased estimator), which errorbar cannot draw
                line, = ax.plot(xs, m, style, label="shared (x2)" if shared else "unshared")
                ax.vlines(xs, lo, hi, colors=line.get_color(), linewidth=1.2)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("members M" if x == "n_members" else "parameters")
            ax.set_title(_SHORT[name].replace("\\|", "|"), fontsize=9)
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
