"""The first screen of the depth grid's page: the answer to each question the grid was built
for, in a few lines read from ``summary.json`` (:mod:`infodiv.experiments.depth_page` puts it on
top; the per-difficulty readings below it give every number behind it).

The questions: which models learned the task in training at all (a model whose training loss
never left the chance plateau is an optimisation failure, not evidence about its depth), does
accuracy grow with depth and stop growing inside the grid (the saturation
depth, :mod:`infodiv.experiments.depth_saturation`), does that depth move with the difficulty, do
the gains across depth diminish, is Theorem 7's premise met, is the diminishing explained by
redundancy (against the conditionally independent control), does layer sharing change accuracy
at equal parameters or executions, and do the truncated models follow the trained ones.
"""

from __future__ import annotations

from .depth_reading import _cell, _family, _iv

__all__ = ["answer"]


def _counts(cell, n_solving) -> str:
    """"n of m models that solve the task" with the power range and the largest shuffled-label
    rate (findings of models at chance are not counted: :func:`verdict_counts`)."""
    pw = ("" if cell["power_max"] is None else
          f"; power {cell['power_min']:.2f}–{cell['power_max']:.2f}, shuffled labels at most "
          f"{cell['false_positive_max']:.2f}")
    return f"{cell['n_finding']} of the {n_solving} models that solve the task{pw}"


def _saturation(sat, hops) -> str:
    rep = sat["replicates"]
    acc = dict(zip(sat["depths"], sat["accuracy"]))
    curve = ", ".join(f"{d}: {a:.3f}" for d, a in acc.items())
    if sat["depth"] is None:
        where = (f"no trained depth reaches {sat['threshold']:.2f} (deepest trained: "
                 f"{sat['deepest']}; beyond it in {rep['share']['beyond']:.2f} of the "
                 f"{rep['n']} seed-and-example replicates)")
    else:
        where = (f"saturation depth **{sat['depth']}** (the smallest depth whose seed-median "
                 f"accuracy reaches {sat['threshold']:.2f}; the same depth in "
                 f"{rep['share'][str(sat['depth'])]:.2f} of the {rep['n']} seed-and-example "
                 "replicates)")
    return f"- **K = {hops}**: seed-median accuracy by depth {curve}; {where}."


def _shift(shift) -> str:
    h, e = shift["harder"], shift["easier"]
    hd, ed = shift["harder_depth"], shift["easier_depth"]
    name = {None: "beyond the grid"}
    depth = {k: float("inf") if k is None else k for k in (hd, ed)}
    moved = ("saturates deeper than" if depth[hd] > depth[ed] else
             "saturates at the same depth as" if hd == ed else "saturates earlier than")
    return (f"- **Does the saturation depth move with the difficulty?** K = {h} "
            f"{moved} K = {e} ({name.get(hd, hd)} against {name.get(ed, ed)}): deeper in "
            f"{shift['deeper']:.2f} of {shift['n_pairs']} replicate pairs, the same in "
            f"{shift['same']:.2f}, earlier in {shift['earlier']:.2f}"
            + (f" (K = {e} trained up to depth {shift['easier_deepest']})"
               if shift["easier_deepest"] != shift["harder_deepest"] else "") + ".")


def _where(rows) -> str:
    """"depth 1 (seeds 0, 1, 2), shared L = 2 (seed 0)": the models of ``rows`` by family."""
    groups = {}
    for r in sorted(rows, key=lambda r: (r["shared"], r["depth"], r["seed"])):
        label = f"shared L = {r['depth']}" if r["shared"] else f"depth {r['depth']}"
        groups.setdefault(label, []).append(str(r["seed"]))
    return ", ".join(f"{k} (seed{'s' if len(v) > 1 else ''} {', '.join(v)})"
                     for k, v in groups.items())


def _training(summary, hops) -> str | None:
    """Which models never left the chance plateau in training, and which left it but are at
    chance on the held-out rows (:func:`infodiv.experiments.depth_report.training_outcome`)."""
    rows = [r for r in summary["records"] if str(r["hops"]) == hops and r.get("training")]
    if not rows:
        return None
    stuck = [r for r in rows if r["training"]["on_plateau"]]
    apart = [r for r in rows if not r["training"]["on_plateau"] and r.get("at_chance")]
    if not stuck and not apart:
        return (f"- **Training (K = {hops})**: every one of the {len(rows)} models left the "
                "chance plateau in training and none is at chance on the held-out rows.")
    t = rows[0]["training"]
    parts = []
    if stuck:
        held = sum(bool(r.get("at_chance")) for r in stuck)
        parts.append(
            f"{len(stuck)} of {len(rows)} models ended training on the chance plateau (mean "
            f"loss of the last {t['window']} steps ≥ {t['plateau_share']:g} ln "
            f"{t['n_options']} = {t['plateau_share'] * t['chance_loss']:.3f} nats): "
            f"{_where(stuck)}; "
            + ("all" if held == len(stuck) else f"{held} of them") + " at chance on the "
            "held-out rows.")
    if apart:
        parts.append(f"{len(apart)} {'more ' if stuck else ''}left the plateau in training "
                     f"but {'is' if len(apart) == 1 else 'are'} at chance on the held-out "
                     f"rows: {_where(apart)}.")
    if stuck:
        parts.append("For a model that never left the plateau, held-out accuracy says that this "
                     "recipe's optimiser found no solution, not that its depth has none.")
    return f"- **Training (K = {hops})**: " + " ".join(parts)


def _growth(d, hops) -> str | None:
    g = [r for r in d["growth"] if r["figure"] == "accuracy" and r["x"] == "depth"]
    if not g:
        return None
    share = g[0]["replicates"]["aicc_winner_share"]
    best = max(share, key=share.get)
    return (f"- **Diminishing gains across depth (K = {hops})**: the {best} law wins "
            f"{share[best]:.2f} of the seed-and-example replicates (AICc; linear "
            f"{share['linear']:.2f}).")


def _mechanism(summary, d, hops) -> list[str]:
    v = d["verdicts"]
    rows = [r for r in summary["records"] if str(r["hops"]) == hops]
    n_solving = sum(not r.get("at_chance") for r in rows)
    if not v:
        return []
    if not n_solving:
        return [f"- **Claims (K = {hops})**: all {len(rows)} analysed models are at chance; "
                "their verdicts say nothing about how the task is solved."]
    out = []
    if "premise" in v:
        out.append(f"- **Theorem 7's premise (K = {hops})**: the members are dependent given "
                   f"the label (the premise fails) in {_counts(v['premise'], n_solving)}.")
    parts = [f"{label} a finding in {_counts(v[name], n_solving)}"
             for name, label in (("redundancy_cost", "the redundancy cost is"),
                                 ("gains_vs_control", "faster diminishing than the "
                                  "conditionally independent control is"))
             if name in v]
    if parts:
        out.append(f"- **Is the diminishing explained by redundancy? (K = {hops})**: "
                   + "; ".join(parts) + ". A claim with power below 1/2 is no test either way.")
    return out


def _sharing(d, hops) -> str | None:
    rows = d["table1"]["rows"]
    if not rows:
        return None
    cells = [f"L = {r['shared_depth']} shared vs {r['unshared_depth']} unshared "
             f"({r['compare']}) {_cell(r['accuracy'])}" for r in rows]
    line = f"- **Layer sharing (K = {hops}), accuracy difference**: " + "; ".join(cells) + "."
    regs = [(label, d["table1"].get("gap_regression_solving", {}).get(div) or {})
            for div, label in (("sq_diversity", "squared-loss"), ("ce_diversity", "CE"))]
    regs = [(label, g) for label, g in regs if "r" in g]
    if regs:
        line += (f" Does the diversity gap explain it? Over the {regs[0][1]['n_pairs']} pairs "
                 "whose two models both solve the task, r = " + "; ".join(
                     f"{g['r']:.2f} {_iv(g['r_ci95'], '.2f')} ({label}, permutation p = "
                     f"{g['p_permutation']:.3f})" for label, g in regs) + ".")
    return line


def _truncated(d, hops) -> str | None:
    tv = [r for r in d["truncated_vs_depth"] if None not in r["difference_ci95"]]
    if not tv:
        return None
    apart = sum(not (r["difference_ci95"][0] <= 0 <= r["difference_ci95"][1]) for r in tv)
    return (f"- **Truncated vs trained (K = {hops})**: the deepest model cut after b blocks "
            f"differs from the trained depth-b model beyond the paired interval in {apart} of "
            f"{len(tv)} comparisons.")


def answer(summary) -> list[str]:
    """The answer lines (markdown bullets), hardest difficulty first (module docstring)."""
    lines = []
    for hops, d in summary["by_hops"].items():
        if d.get("saturation"):
            lines.append(_saturation(d["saturation"], hops))
        elif not _family(summary, hops, False):
            lines.append(f"- **K = {hops}**: no unshared model finished yet.")
    if summary.get("saturation_shift"):
        lines.append(_shift(summary["saturation_shift"]))
    for hops, d in summary["by_hops"].items():
        lines += [x for x in (_training(summary, hops), _growth(d, hops),
                              *_mechanism(summary, d, hops), _sharing(d, hops),
                              _truncated(d, hops)) if x]
    return lines
