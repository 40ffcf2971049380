"""The depth grid's page: ``README.md`` and its figures, generated from ``summary.json``
(:func:`infodiv.experiments.depth_report.report_depth`).

Everything on the page is read from the summary: which models are finished, training or not
started; the setup a reader needs to rerun it; each claim's verdict per model with its power and
shuffled-label rate; the comparisons across depth, sharing and truncation with their intervals;
and a reading that states, claim by claim, only what those numbers support (a comparison
that needs models that are not finished says so instead of guessing:
:mod:`infodiv.experiments.depth_reading`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from infodiv.claims import CLAIMS
from infodiv.reports.markdown import fmt, md_table

from .configs import planned_names
from .depth_answer import answer
from .depth_reading import CLAIM_ORDER, _cell, _family, _iv, reading

__all__ = ["write_page", "page_markdown", "plot_depth", "plot_truncated"]


def _rate(cell) -> str:
    if not cell:
        return "not run"
    return f"{cell['rate']:.2f} {_iv(cell['ci'], '.2f')} (n = {cell['n']})"


def plot_depth(summary, path=None):
    """Held-out accuracy and usable information against depth, per difficulty: seed means with
    their seed-and-example intervals (unshared: line; shared twins: squares at their number of
    distinct blocks), each seed's model as a dot."""
    from infodiv.reports.canvas import new_figure, save_figure

    fig = new_figure(9, 3.6)
    axes = fig.subplots(1, 2)
    colors = ("#d62728", "#1f77b4", "#2ca02c")
    for ax, (fig_name, label) in zip(axes, (("accuracy", "held-out accuracy"),
                                            ("usable_information", "usable I(U;Y), bits"))):
        for c, hops in zip(colors, summary["by_hops"]):
            for shared, marker, ls in ((False, "o", "-"), (True, "s", "none")):
                rows = _family(summary, hops, shared)
                if not rows:
                    continue
                x = np.array([r["depth"] for r in rows], float) + (0.12 if shared else 0)
                m = np.array([r[fig_name]["mean"] for r in rows])
                lo = np.array([r[fig_name]["ci95"][0] for r in rows], float)
                hi = np.array([r[fig_name]["ci95"][1] for r in rows], float)
                err = np.vstack([m - np.nan_to_num(lo, nan=m), np.nan_to_num(hi, nan=m) - m])
                ax.errorbar(x, m, yerr=np.clip(err, 0, None), color=c, marker=marker, ls=ls,
                            capsize=3, mfc="white" if shared else c,
                            label=f"K = {hops}" + (", shared twins" if shared else ""))
            for r in summary["records"]:
                if str(r["hops"]) == hops:
                    y = (r["accuracy"] if fig_name == "accuracy"
                         else r["usable_information"]["estimate"])
                    ax.plot(r["depth"] + (0.12 if r["shared"] else 0), y, ".", color=c,
                            alpha=0.5)
        if fig_name == "accuracy":
            ax.axhline(0.25, color="0.6", lw=0.8, ls=":")
            ax.text(ax.get_xlim()[0], 0.255, " chance", color="0.5", fontsize=8)
        ax.set_xlabel("depth (distinct blocks)")
        ax.set_ylabel(label)
        ax.legend(fontsize=7)
    fig.suptitle("depth grid: seed means with seed-and-example 95% intervals")
    if path is not None:
        save_figure(fig, path)
    return fig


def plot_truncated(summary, path=None):
    """Every finished unshared model's truncated-model accuracy after b blocks (logit lens at
    junction 1 + 2b) against the trained depth-b models' accuracy, per difficulty."""
    from infodiv.reports.canvas import new_figure, save_figure

    hops_list = list(summary["by_hops"])
    fig = new_figure(4.5 * len(hops_list), 3.6)
    axes = np.atleast_1d(fig.subplots(1, len(hops_list)))
    for ax, hops in zip(axes, hops_list):
        for r in summary["records"]:
            if str(r["hops"]) != hops or r["shared"]:
                continue
            k = np.asarray(r["truncated"]["k"])
            acc = np.asarray(r["truncated"]["accuracy"])
            keep = (k - 1) % 2 == 0
            ax.plot((k[keep] - 1) // 2, acc[keep], "-", alpha=0.7,
                    label=f"{r['model']} truncated")
        rows = _family(summary, hops, False)
        if rows:
            m = np.array([r["accuracy"]["mean"] for r in rows])
            lo = np.array([r["accuracy"]["ci95"][0] for r in rows], float)
            hi = np.array([r["accuracy"]["ci95"][1] for r in rows], float)
            ax.errorbar([r["depth"] for r in rows], m,
                        yerr=np.clip(np.vstack([m - np.nan_to_num(lo, nan=m),
                                                np.nan_to_num(hi, nan=m) - m]), 0, None),
                        fmt="ko", capsize=3, label="trained depth-b models (seed mean)")
        ax.axhline(0.25, color="0.6", lw=0.8, ls=":")
        ax.set_xlabel("blocks b")
        ax.set_ylabel("held-out accuracy")
        ax.set_title(f"K = {hops}: truncated after b blocks vs trained with b")
        ax.legend(fontsize=7)
    if path is not None:
        save_figure(fig, path)
    return fig


def _status_counts(summary) -> list[str]:
    """One line per difficulty: finished, training, not started."""
    lines = []
    for hops, rows in summary["status"].items():
        counts = {s: sum(r["status"] == s for r in rows)
                  for s in ("finished", "training", "not started")}
        lines.append(f"- **K = {hops}** ({summary['setup'][hops]['root']}): "
                     f"{counts['finished']} finished, {counts['training']} training, "
                     f"{counts['not started']} not started.")
    n_planned = len(planned_names(**summary["planned"]))
    for hops in summary.get("pending_hops", []):
        lines.append(f"- **K = {hops}**: no root yet; its {n_planned} planned models are not "
                     "started.")
    return lines


def _status_lines(summary) -> list[str]:
    """Every planned model of every difficulty with its status and training step."""
    lines = []
    for hops, rows in summary["status"].items():
        lines += [f"**K = {hops}**:", ""]
        lines += md_table(["model", "status", "step"],
                          [[r["model"], r["status"],
                            "?" if r["step"] is None else f"{r['step']} / {r['steps']}"]
                           for r in rows])
        lines.append("")
    return lines


def _setup_lines(summary) -> list[str]:
    s, mc = summary["settings"], summary["model_config"]
    lines = []
    for hops, doc in summary["setup"].items():
        t, tr = doc["hops_task"], doc["train"]
        hop = "1 hop" if t["hops"] == 1 else f"{t['hops']} hops"
        mix = (f"chain length {t['hops']}" if t["min_hops"] == t["hops"] else
               f"chain lengths {t['min_hops']}..{t['hops']}")
        lines.append(
            f"- **K = {hops}**: each prompt lists {4 * t['hops']} pairs `a b` over a pool of "
            f"{t['symbols']} symbols (four chains of {hop} ending in the four "
            f"options red / green / blue / gold) and a start symbol; the answer is the option "
            f"reached after {hop}. Training sequences use {mix} with {t['queries']} "
            "supervised questions "
            f"(a share {t['next_frac']} of the earlier ones one-hop lookups); "
            f"{t['n_heldout']} held-out examples (seed {t['heldout_seed']}) never drawn in "
            f"training, balanced over the 4 options (chance 0.25). Training: {tr['steps']} "
            f"steps of {tr['batch_size']} sequences, AdamW lr {tr['lr']} (linear warm-up over "
            f"{tr['warmup']} steps, cosine decay to {tr['final_lr_frac']} of it), weight decay "
            f"{tr['weight_decay']}, answer tokens only.")
    lines += [
        f"- Models: Llama blocks of width {mc['width']}, {mc['heads']} heads, SwiGLU MLP "
        f"{mc['mlp']}, context {mc['max_len']}, initialiser std {mc['init_std']}; depth L "
        "distinct blocks, shared twins execute every block twice in a row (parameters of L "
        "blocks, 2L executions); members M = 1 + 2 x executions (embedding, every attention "
        "and MLP write).",
        f"- Analysis per model: exact extraction on the held-out file; claims through the "
        f"inference engine with objective `{s['objective']}`, B = {s['n_bootstrap']} example "
        f"resamples (everything refitted), K = {s['n_permutations']} label permutations, "
        f"{s['n_power']} surrogates of each kind for the power and the shuffled-label rate, "
        f"{s['n_orders']} random orders per replicate, {s['n_triples']} nested chains; "
        f"Theorem 8's bounds at B = K = {s['report_resamples']}; {s['resamples']} example "
        "resamples shared by every model of a difficulty for the intervals across models "
        "(two-level: seeds resampled inside every example resample).",
        "",
        "Rerun (both resumable: finished work is skipped and each says so):",
        "",
        "```bash",
        "scripts/depth_experiment.sh      # train the grid (runs/depth/k<K>)",
        "scripts/depth_analysis.sh        # analyse every finished model, write this page",
        "```",
        "",
        "What the model records of `summary.json` alone determine (model states by the 0.90 "
        "threshold, t intervals over seeds, the step law, the gap regression's leave-one-out "
        "influence) is recomputed from the committed file, without the models, by "
        "`infodiv zoo depth-page --out docs/results/depth`.",
        "",
        "On a GPU, `DEVICE=cuda JOBS=15 scripts/depth_experiment.sh` trains every model as its "
        "own job, 15 at a time (start CUDA MPS first, `nvidia-cuda-mps-control -d`, so "
        "that the jobs share the GPU); a checkpoint written there "
        "resumes on the CPU and back. Each model's `zoo.json` records the device of its last "
        "leg and its seconds per step.",
    ]
    return lines


def _claim_lines(summary, hops, name) -> list[str]:
    rows = [r for r in summary["records"] if str(r["hops"]) == hops and name in r["verdicts"]]
    if not rows:
        return []
    v0 = rows[0]["verdicts"][name]
    if CLAIMS[name].group == "report":
        lines = md_table(["model", "best readout error", "Eq. 12 bounds on the Bayes error",
                          "consistent"],
                         [[r["model"], fmt(r["verdicts"][name]["report"]["best_readout_error"],
                                           ".3f"),
                           _iv([r["verdicts"][name]["report"]["error_lower_bound"],
                                r["verdicts"][name]["report"]["error_upper_bound"]]),
                           str(r["verdicts"][name]["report"]["consistent"])] for r in rows])
        return [f"`{name}` (objective-free report, no test):", "", *lines, ""]
    lines = md_table(["model", "estimate", "95% interval", "p", "verdict", "power",
                      "shuffled-label rate"],
                     [[r["model"], fmt(r["verdicts"][name]["estimate"], ".4g"),
                       _iv(r["verdicts"][name]["interval"], ".4g"),
                       fmt(r["verdicts"][name]["p"], ".3f"), _word(r["verdicts"][name]),
                       _rate(r["verdicts"][name]["power"]),
                       _rate(r["verdicts"][name]["false_positive"])] for r in rows])
    return [f"`{name}` (objective `{v0['objective']}`):", "", *lines, ""]


def _word(v) -> str:
    if v["finding"]:
        return "finding"
    if v["detected"]:
        return "detected, not calibrated"
    return "not detected, no test" if v["no_test"] else "not detected"


def _final_loss(t) -> str:
    """The training loss where it ended (nats), marked when it never left the chance plateau."""
    if not t:
        return "–"
    return f"{t['final_loss']:.3f}" + (" (chance plateau)" if t["on_plateau"] else "")


def _model_lines(summary, hops) -> list[str]:
    rows = [r for r in summary["records"] if str(r["hops"]) == hops]
    return md_table(["model", "depth", "shared", "seed", "params", "M", "final training loss",
                     "accuracy (Wilson 95%)", "I(U;Y) bits (95%)", "bracket"],
                    [[r["model"], r["depth"], "yes" if r["shared"] else "no", r["seed"],
                      r["params"], r["n_members"], _final_loss(r.get("training")),
                      f"{r['accuracy']:.3f} {_iv(r['accuracy_interval'])}",
                      f"{r['usable_information']['estimate']:.3f} "
                      f"{_iv(r['usable_information']['interval'])}",
                      _iv(r["usable_information"]["bracket"])] for r in rows])


def _across_lines(summary, hops) -> list[str]:
    d = summary["by_hops"][hops]
    lines = ["Seed means with seed-and-example 95% intervals (with one seed: the example "
             "interval):", ""]
    lines += md_table(["depth", "shared", "seeds", "M", "accuracy", "I(U;Y) bits",
                       "sq. diversity", "CE diversity bits"],
                      [[r["depth"], "yes" if r["shared"] else "no", len(r["seeds"]),
                        r["n_members"], _cell(r["accuracy"]), _cell(r["usable_information"]),
                        _cell(r["sq_diversity"], ".4g"), _cell(r["ce_diversity"], ".4g")]
                       for r in d["by_depth"]])
    lines.append("")
    t1 = d["table1"]["rows"]
    lines.append("Table 1 form (shared twin minus unshared, paired by seed and by example "
                 "resample):")
    lines.append("")
    if t1:
        lines += md_table(["shared L", "against", "seeds", "accuracy", "I(U;Y) bits",
                           "sq. diversity", "CE diversity bits"],
                          [[r["shared_depth"], f"unshared L = {r['unshared_depth']} "
                            f"({r['compare']})", len(r["seeds"]), _cell(r["accuracy"]),
                            _cell(r["usable_information"]), _cell(r["sq_diversity"], ".4g"),
                            _cell(r["ce_diversity"], ".4g")] for r in t1])
    else:
        lines.append("No shared twin is finished together with an unshared partner of the "
                     "same seed yet.")
    lines.append("")
    lines += _truncated_lines(summary, hops)
    tv = d["truncated_vs_depth"]
    lines.append("The truncated model after b blocks (logit lens) against the trained depth-b "
                 "model of the same seed:")
    lines.append("")
    if tv:
        lines += md_table(["model", "b", "truncated", "trained depth b", "difference"],
                          [[r["model"], r["after_block"],
                            f"{r['truncated_accuracy']:.3f} {_iv(r['truncated_ci95'])}",
                            f"{r['depth_model_accuracy']:.3f} {_iv(r['depth_model_ci95'])}",
                            f"{r['difference']:+.3f} {_iv(r['difference_ci95'])}"]
                           for r in tv])
    else:
        lines.append("Needs the deepest unshared model and a trained shallower model of the "
                     "same seed; not both finished yet.")
    lines.append("")
    return lines


def _truncated_lines(summary, hops) -> list[str]:
    """Held-out accuracy of every unshared model truncated after each block b (logit lens at
    junction 1 + 2b; b = 0: the embedding alone)."""
    rows = [r for r in summary["records"] if str(r["hops"]) == hops and not r["shared"]]
    if not rows:
        return []
    top = max(r["depth"] for r in rows)
    table = []
    for r in sorted(rows, key=lambda r: (-r["depth"], r["seed"])):
        acc = dict(zip(r["truncated"]["k"], r["truncated"]["accuracy"]))
        table.append([r["model"]] + [fmt(acc[1 + 2 * b], ".3f") if (1 + 2 * b) in acc else ""
                                     for b in range(top + 1)])
    return ["Each unshared model truncated after b blocks (logit lens; b = 0: the embedding "
            "alone):", "", *md_table(["model", *(f"b = {b}" for b in range(top + 1))], table),
            ""]

def _first_figure(figures) -> list[str]:
    name, file = next(iter(figures.items()))
    return [f"![{name}]({file})", ""]


def page_markdown(summary, figures) -> str:
    """The README text (figures: {name: file name})."""
    lines = ["# The depth grid: K-hop pointer chasing", "",
             "Llama models trained from scratch on a task whose answer needs several layers, "
             "identical except depth and layer sharing, analysed with the toolkit. This page "
             "and `summary.json` are generated by `infodiv zoo depth-report` from the finished "
             "models; models still training are listed as such and enter on the next run.", "",
             "## Answer", "", *answer(summary), "", *_first_figure(figures),
             "Models analysed so far:", "",
             *_status_counts(summary), "",
             "## Setup", "", *_setup_lines(summary), ""]
    for hops in summary["by_hops"]:
        lines += [f"## K = {hops}: reading", "", *reading(summary, hops), "",
                  f"## K = {hops}: models", "",
                  "Final training loss: the mean training loss (answer tokens, nats) over the "
                  "last 1% of the steps; \"chance plateau\" marks a model that never left "
                  "ln(#options), i.e. did not learn the task in training.", "",
                  *_model_lines(summary, hops), "",
                  f"## K = {hops}: across depth, sharing and truncation", "",
                  *_across_lines(summary, hops),
                  f"## K = {hops}: verdicts per claim", "",
                  "Estimate with its example-bootstrap 95% interval (everything refitted), "
                  "label-permutation p, the verdict (a finding is detected and calibrated), "
                  "the detection rate on the claim's matched case (power) and on shuffled "
                  "labels, with Wilson 95% intervals.", ""]
        for name in CLAIM_ORDER:
            lines += _claim_lines(summary, hops, name)
    lines += ["## Figures", ""]
    lines += [f"![{name}]({file})" for name, file in list(figures.items())[1:]]
    contrast = summary.get("contrast")
    if contrast:
        lines += ["", "## Contrast: a task one block solves (AG News zoo)", "",
                  "Seed-mean held-out accuracy of the AG News zoo (unshared models; "
                  "`docs/results/zoo/`):", ""]
        lines += md_table(["depth", "models", "accuracy"],
                          [[c["depth"], c["n"], f"{c['accuracy']:.3f}"] for c in contrast])
    lines += ["", "## Models: finished and still training", "", *_status_lines(summary)]
    return "\n".join(lines) + "\n"


def write_page(summary, out) -> Path:
    """Figures and ``README.md`` into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    figures = {"accuracy and usable information against depth": "depth.png",
               "truncated models against trained depth": "truncated.png"}
    plot_depth(summary, out / figures["accuracy and usable information against depth"])
    plot_truncated(summary, out / figures["truncated models against trained depth"])
    path = out / "README.md"
    path.write_text(page_markdown(summary, figures))
    return path
