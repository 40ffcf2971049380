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

from .depth_reading import _family, _iv

__all__ = ["answer"]


def _counts(cell, solving, threshold) -> str:
    """"n of m models that solve the task (held-out accuracy ≥ τ)" with the power range and
    the largest shuffled-label rate; findings of models that do not solve it are not counted."""
    pw = ("" if cell["power_max"] is None else
          f"; power {cell['power_min']:.2f}–{cell['power_max']:.2f}, shuffled labels at most "
          f"{cell['false_positive_max']:.2f}")
    n = sum(m in solving for m in cell["findings"])
    return (f"{n} of the {len(solving)} models that solve the task (held-out accuracy ≥ "
            f"{threshold:.2f}){pw}")


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


def _growth(d, hops, key: str = "growth") -> str | None:
    """The growth law across depth, the step beside the smooth laws: the seed means' AICc
    winner with every law's RSS, the winner per seed, and the replicate shares where the full
    analysis fitted the step too; ``key="growth_mixed"``: the same on the mixed held-out set
    (questions of 1..K hops)."""
    g = (d.get("seeds") or {}).get(key)
    if not g:
        return None
    fits, win = g["seed_mean"], g["winner"]
    rss = ", ".join(f"{law} {fits[law]['rss']:.3g}" for law in ("step", "log", "power", "linear")
                    if fits.get(law, {}).get("rss") is not None)
    per = list(g["winner_per_seed"].values())
    shape = (f"a step: accuracy jumps from {fits['step']['params'][0]:.2f} to "
             f"{fits['step']['params'][1]:.2f} between depth "
             f"{max(x for x in g['depths'] if x < fits['step']['params'][2])} and "
             f"{min(x for x in g['depths'] if x > fits['step']['params'][2])}, not gains that "
             "diminish gradually" if win == "step" else
             f"the {win} law, gradual gains")
    what = ("How accuracy grows with depth" if key == "growth" else
            "How accuracy on questions of 1..K hops grows with depth")
    line = (f"- **{what} (K = {hops})**: on the seed means the best "
            f"law by AICc is {shape} (RSS {rss}); per seed: "
            + ", ".join(f"{law} {per.count(law)} of {len(per)}" for law in dict.fromkeys(per))
            + ".")
    rep = [r for r in d["growth"] if r["figure"] == "accuracy" and r["x"] == "depth"]
    share = rep[0]["replicates"]["aicc_winner_share"] if rep and key == "growth" else {}
    if "step" in share:
        line = line[:-1] + (" ; seed-and-example replicates won: "
                            + ", ".join(f"{k} {v:.2f}" for k, v in share.items()) + ".")
    return line


def _collapse(d, hops) -> str | None:
    """Depths past saturation whose seed median falls below τ again, with their seeds' states."""
    seeds = d.get("seeds") or {}
    rows = seeds.get("collapses") or []
    if not rows:
        return None
    words = {"solves": "solving", "partial": "partial (above chance, below τ)",
             "chance": "at chance held-out", "plateau": "on the chance plateau in training"}
    parts = [f"depth {r['depth']} (seed median {r['median']:.3f}: "
             + ", ".join(f"{n} {words[k]}" for k, n in r["counts"].items()) + ")"
             for r in rows]
    return (f"- **Not monotone in depth (K = {hops})**: past the saturation depth "
            f"{rows[0]['saturated_at']} the seed median falls below {seeds['threshold']:.2f} "
            f"again at {'; '.join(parts)}. Deeper models of this recipe fail to train more "
            "often; the saturation depth is the first depth that reaches τ, and these failures "
            "say that the optimiser found no solution there, not that the depth has none.")


def _mechanism(summary, d, hops) -> list[str]:
    v = d["verdicts"]
    rows = [r for r in summary["records"] if str(r["hops"]) == hops]
    seeds = d.get("seeds") or {}
    tau = seeds.get("threshold", 0.9)
    solving = {m for m, st in (seeds.get("states") or {}).items() if st == "solves"}
    if not v:
        return []
    if not solving:
        return [f"- **Claims (K = {hops})**: none of the {len(rows)} analysed models solves "
                f"the task (held-out accuracy ≥ {tau:.2f}); their verdicts say nothing about "
                "how it is solved."]
    out = []
    if "premise" in v:
        out.append(f"- **Theorem 7's premise (K = {hops})**: the members are dependent given "
                   f"the label (the premise fails) in {_counts(v['premise'], solving, tau)}.")
    parts = [f"{label} a finding in {_counts(v[name], solving, tau)}"
             for name, label in (("redundancy_cost", "the redundancy cost is"),
                                 ("gains_vs_control", "faster diminishing than the "
                                  "conditionally independent control is"))
             if name in v]
    if parts:
        out.append(f"- **Is the diminishing explained by redundancy? (K = {hops})**: "
                   + "; ".join(parts) + ". A claim with power below 1/2 is no test either way.")
    return out


def _t(cell) -> str:
    """The t interval of an accuracy difference; one wider than [−1, 1], the range a difference
    of accuracies can take, is said to bound nothing."""
    if cell.get("ci95") is None:
        return "–"
    lo, hi = cell["ci95"]
    return _iv(cell["ci95"], ".3f") + (": wider than a difference can be, three seeds bound "
                                       "nothing here" if lo < -1 or hi > 1 else "")


def _sharing(d, hops) -> str | None:
    """Table 1 with the t interval over seeds beside the seed-and-example bootstrap (which
    cannot leave the range of the seeds' values), equal executions stated first, and the gap
    regression with its most influential pair."""
    pairs = (d.get("seeds") or {}).get("pairs") or []
    if not pairs:
        return None
    pairs = sorted(pairs, key=lambda p: (p["compare"] != "equal executions", p["shared_depth"]))
    cells = [f"shared L = {p['shared_depth']} vs unshared L = {p['unshared_depth']} "
             f"({p['compare']}) {p['t']['mean']:.3f}, t interval over {p['t']['n']} seeds "
             f"{_t(p['t'])} (seed-and-example bootstrap {_iv(p['bootstrap_ci95'], '.3f')}; "
             f"per seed {', '.join(f'{x:.3f}' for x in p['differences'])})" for p in pairs]
    line = (f"- **Layer sharing (K = {hops}), accuracy difference, shared minus unshared**: "
            + "; ".join(cells) + ". With 3 seeds the bootstrap over seeds cannot leave the "
            "range of the three values; the t interval can, and is the one to read.")
    infl = ((d.get("seeds") or {}).get("gap_influence") or {})
    for which, words in (("above_chance", "both above chance"),
                         ("solving", "both solving the task")):
        for div, g in (infl.get(which) or {}).items():
            if div != "ce_diversity" or g.get("r") is None:
                continue
            top = g["most_influential"]
            line += (f" Does the CE-diversity gap explain the accuracy gap? Over the "
                     f"{g['n_pairs']} pairs whose two models are {words}: r = {g['r']:.2f} "
                     f"(Spearman {g['spearman']:.2f}, {g['permutation']} permutation p = "
                     f"{g['p_permutation']:.3f})")
            if top is not None:
                line += (f"; without the pair shared L = {top['shared_depth']} vs "
                         f"{top['unshared_depth']} ({top['compare']}, seed {top['seed']}) "
                         f"r = {top['r_without']:.2f} (Spearman "
                         f"{g['spearman_without_most_influential']:.2f})")
                if abs(top["influence"]) >= 0.5 * abs(g["r"]) and abs(g["r"]) >= 0.3:
                    line += ": the correlation rests on that one pair"
            line += "."
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
        lines += [x for x in (_training(summary, hops), _collapse(d, hops), _growth(d, hops),
                              _growth(d, hops, "growth_mixed"),
                              *_mechanism(summary, d, hops), _sharing(d, hops),
                              _truncated(d, hops)) if x]
    return lines
