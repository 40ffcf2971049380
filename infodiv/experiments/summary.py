"""Across-depth summary of the zoo records: seed means with t intervals, the Table 1 form.

Each figure of a model is a seed replicate; a configuration (shared, depth) is summarised by
the seed mean and a 95% Student-t interval over seeds (none with one seed). The paper's
Table 1 comparison pairs each shared model (L blocks, 2L executions) with the unshared model of
equal parameters (L) and of equal executions (2L) of the SAME seed; the paired differences get
t intervals over seeds. These intervals are over seeds only (training randomness); intervals over
examples and the label-permutation nulls of the inference issue are not part of this table.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from infodiv.reports.serialize import write_json

__all__ = ["FIGURES", "seed_summary", "twin_pairs", "table1", "prefix_vs_depth", "write_summary"]

#: where a record quotes Theorem 8's report (the curves' verdict record on the first objective)
_THEOREM8 = ("curves", "accuracy", "verdict_details", "theorem8", "report")
# (label, path in a record) of the headline figures
FIGURES = (
    ("accuracy", ("accuracy",)),
    ("cross_entropy (nats)", ("cross_entropy",)),
    ("sq_bias (paper Eq. 8, mean)", ("squared_logit_mean", "bias")),
    ("sq_diversity (paper Eq. 8, mean)", ("squared_logit_mean", "diversity")),
    ("ce_bias (sum, bits)", ("cross_entropy_sum", "bias")),
    ("ce_diversity (sum, bits)", ("cross_entropy_sum", "diversity")),
    ("eq14_diversity", ("paper_eq14", "diversity")),
    ("eq14_gap", ("paper_eq14", "gap")),
    ("I(U;Y) usable (<= H(Y))", _THEOREM8 + ("mi",)),
    ("I(U;Y) lower end", _THEOREM8 + ("mi_lower",)),
    ("P_e* lower (Eq. 12)", _THEOREM8 + ("error_lower_bound",)),
    ("P_e* upper (Eq. 12)", _THEOREM8 + ("error_upper_bound",)),
    ("best readout error", _THEOREM8 + ("best_readout_error",)),
)


# a difference of p-values means nothing: Table 1 pairs every figure but those
_DIFFERENCES = tuple((label, path) for label, path in FIGURES if path[-1] != "p")

#: why a prefix has no trained model to compare with
NO_DEPTH_MODEL = "no model of this depth was trained (n_depth_models = 0)"


def _get(rec, path):
    for key in path:
        if not isinstance(rec, dict) or key not in rec:
            return np.nan
        rec = rec[key]
    return np.nan if rec is None else float(rec)


def _t_interval(x) -> tuple[float, float, float, int]:
    from scipy import stats

    x = np.asarray([v for v in x if np.isfinite(v)], dtype=np.float64)
    n = len(x)
    if n == 0:
        return np.nan, np.nan, np.nan, 0
    m = float(x.mean())
    if n < 2:
        return m, np.nan, np.nan, 1
    half = float(stats.t.ppf(0.975, n - 1) * x.std(ddof=1) / np.sqrt(n))
    return m, m - half, m + half, n


def _zoo_records(records):
    return [r for r in records if r.get("width") is not None]


def seed_summary(records) -> list[dict]:
    """One row per (shared, depth): n seeds, params, members, seed mean and 95% t interval of
    every figure of :data:`FIGURES`."""
    groups = {}
    for r in _zoo_records(records):
        groups.setdefault((bool(r["shared"]), int(r["depth"])), []).append(r)
    rows = []
    for (shared, depth), rs in sorted(groups.items()):
        row = {"shared": shared, "depth": depth, "n_seeds": len(rs),
               "params": int(rs[0]["params"]), "n_members": int(rs[0]["n_members"]),
               "executions": int(rs[0]["executions"])}
        for label, path in FIGURES:
            m, lo, hi, n = _t_interval([_get(r, path) for r in rs])
            row[label] = {"mean": m, "ci95": [lo, hi], "n": n}
        rows.append(row)
    return rows


def twin_pairs(records) -> list[tuple]:
    """``(L, compare, unshared depth, seed, shared record, unshared record)`` for every shared
    model and its unshared partner of the same seed at equal parameters (L) and equal
    executions (2L)."""
    by = {(bool(r["shared"]), int(r["depth"]), int(r["seed"])): r for r in _zoo_records(records)}
    out = []
    for (shared, depth, seed), r in sorted(by.items()):
        if not shared:
            continue
        for compare, d in (("equal parameters", depth), ("equal executions", 2 * depth)):
            other = by.get((False, d, seed))
            if other is not None:
                out.append((depth, compare, d, seed, r, other))
    return out


def table1(records) -> list[dict]:
    """Shared (L) minus unshared at equal parameters (L) and equal executions (2L), paired by
    seed, for accuracy and the diversity figures."""
    out = [{"depth": depth, "seed": seed, "compare": compare, "unshared_depth": d,
            **{label: _get(r, path) - _get(other, path) for label, path in _DIFFERENCES}}
           for depth, compare, d, seed, r, other in twin_pairs(records)]
    rows = []
    for key in sorted({(t["depth"], t["compare"], t["unshared_depth"]) for t in out}):
        ts = [t for t in out if (t["depth"], t["compare"], t["unshared_depth"]) == key]
        row = {"shared_depth": key[0], "compare": key[1], "unshared_depth": key[2],
               "n_seeds": len(ts)}
        for label, _ in _DIFFERENCES:
            m, lo, hi, n = _t_interval([t[label] for t in ts])
            row[label] = {"mean": m, "ci95": [lo, hi], "n": n}
        rows.append(row)
    return rows


def prefix_vs_depth(records) -> list[dict]:
    """For the deepest unshared model of each seed: logit-lens accuracy of the truncated model
    after block b (prefix ``1 + 2b``) next to the seed-mean accuracy of the depth-b models."""
    zoo = [r for r in _zoo_records(records) if not r["shared"] and "logit_lens" in r]
    across = {}
    for r in zoo:
        across.setdefault(int(r["depth"]), []).append(float(r["accuracy"]))
    rows = []
    for seed in sorted({int(r["seed"]) for r in zoo}):
        deepest = max((r for r in zoo if int(r["seed"]) == seed), key=lambda r: r["depth"])
        lens = dict(zip(deepest["logit_lens"]["k"], deepest["logit_lens"]["accuracy"]))
        for blk in range(1, int(deepest["depth"]) + 1):
            acc = across.get(blk)
            row = {"model": deepest["model"], "seed": seed, "after_block": blk,
                   "truncated_accuracy": lens.get(1 + 2 * blk),
                   "depth_model_accuracy": float(np.mean(acc)) if acc else None,
                   "n_depth_models": len(acc or [])}
            if not acc:
                row["depth_model_accuracy_reason"] = NO_DEPTH_MODEL
            rows.append(row)
    return rows


def _number(x) -> str:
    """A table cell: three decimals, or "-" where the number does not exist."""
    return "-" if x is None else f"{x:.3f}"


def _fmt(cell, n_seeds: int | None = None) -> str:
    """Mean [t interval]; ``(k of n seeds)`` when only k of the row's ``n_seeds`` have it."""
    m, (lo, hi) = cell["mean"], cell["ci95"]
    if not np.isfinite(m):
        return "-"
    text = f"{m:.3f}" if not np.isfinite(lo) else f"{m:.3f} [{lo:.3f}, {hi:.3f}]"
    k = cell.get("n")
    return text if n_seeds is None or k is None or k >= n_seeds else (
        f"{text} ({k} of {n_seeds} seeds)")


def _cell(label: str) -> str:
    """A label inside a markdown table cell ('|' escaped: TC|Y)."""
    return label.replace("|", "\\|")


def _markdown(rows, t1, records) -> str:
    cols = ["accuracy", "cross_entropy (nats)", "sq_diversity (paper Eq. 8, mean)",
            "ce_diversity (sum, bits)", "eq14_diversity", "I(U;Y) usable (<= H(Y))",
            "I(U;Y) lower end", "P_e* lower (Eq. 12)", "P_e* upper (Eq. 12)",
            "best readout error"]
    lines = ["# Zoo summary (held-out AG News rows 0-1999)", "",
             "Seed mean and 95% t interval over seeds (no interval with one seed; '-' where "
             "no model of the row has the figure). Information (bits) of the whole member "
             "vectors, from each model's Theorem 8 record (curves report, first objective): "
             "I(U;Y) is cross-fitted usable information (never above H(Y) = 2 bits) and the "
             "lower end of its bracket; Eq. 12 bounds P_e*, the Bayes error of the best "
             "classifier of all members (not the model's own argmax error), beside the "
             "held-out error of the best usable-information readout.", "",
             "| shared | L | executions | M | params | seeds | " + " | ".join(map(_cell, cols))
             + " |",
             "|" + "---|" * (6 + len(cols))]
    for r in rows:
        lines.append(f"| {'yes' if r['shared'] else 'no'} | {r['depth']} | {r['executions']} | "
                     f"{r['n_members']} | {r['params']:,} | {r['n_seeds']} | "
                     + " | ".join(_fmt(r[c], r["n_seeds"]) for c in cols) + " |")
    cols_t1 = [c for c in cols if c in dict(_DIFFERENCES)]
    lines += ["", "## Table 1 form: shared minus unshared, paired by seed", "",
              "| shared L | vs | unshared L | seeds | " + " | ".join(map(_cell, cols_t1))
              + " |",
              "|" + "---|" * (4 + len(cols_t1))]
    for r in t1:
        lines.append(f"| {r['shared_depth']} | {r['compare']} | {r['unshared_depth']} | "
                     f"{r['n_seeds']} | " + " | ".join(_fmt(r[c], r["n_seeds"]) for c in cols_t1)
                     + " |")
    pv = prefix_vs_depth(records)
    if pv:
        lines += ["", "## Truncated deepest model (logit lens) vs trained depth-b models", "",
                  "| model | after block b | truncated accuracy | depth-b models' accuracy "
                  "(mean) | depth-b models |", "|---|---|---|---|---|"]
        lines += [f"| {r['model']} | {r['after_block']} | {_number(r['truncated_accuracy'])} | "
                  f"{_number(r['depth_model_accuracy'])} | {r['n_depth_models']} |" for r in pv]
    other = [r for r in records if r.get("width") is None]
    if other:
        lines += ["", "## Fine-tuned models", "", "| model | M | accuracy | cross_entropy |",
                  "|---|---|---|---|"]
        lines += [f"| {r['model']} | {r['n_members']} | {r['accuracy']:.3f} | "
                  f"{r['cross_entropy']:.3f} |" for r in other]
    return "\n".join(lines) + "\n"


def _figure(rows, path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 3.4))
    panels = [("accuracy", "held-out accuracy"),
              ("ce_diversity (sum, bits)", "CE diversity (bits)"),
              ("I(U;Y) usable (<= H(Y))", "usable I(U;Y), Theorem 8 record (bits)")]
    for k, (label, title) in enumerate(panels):
        ax = fig.add_subplot(1, 3, k + 1)
        for shared, style in ((False, "o-"), (True, "s--")):
            rs = [r for r in rows if r["shared"] == shared]
            if not rs:
                continue
            x = [r["n_members"] for r in rs]
            m = np.array([r[label]["mean"] for r in rs])
            lo = np.array([r[label]["ci95"][0] for r in rs])
            hi = np.array([r[label]["ci95"][1] for r in rs])
            ax.plot(x, m, style, label="shared (x2)" if shared else "unshared")
            ok = np.isfinite(lo)
            if ok.any():
                ax.fill_between(np.array(x)[ok], lo[ok], hi[ok], alpha=0.2)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("members M")
        ax.set_title(title)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def write_summary(records, out, across=None, template=None) -> dict:
    """Write ``by_depth.json``, ``summary.md`` and ``depth.png`` into ``out``; with
    ``across`` (the :mod:`infodiv.experiments.across` document) also ``across.json``, its markdown
    sections (:func:`infodiv.experiments.across_md.across_markdown`), ``depth_params.png`` and the
    answer the page quotes (``answer.json``, :mod:`infodiv.experiments.zoo_answer`); and
    ``README.md`` from ``template`` (default ``out/README.template.md``) when it exists, every
    double-brace placeholder filled from the JSON
    (:func:`infodiv.reports.markdown.fill_numbers`)."""
    out = Path(out)
    rows, t1 = seed_summary(records), table1(records)
    doc = {"by_depth": rows, "table1": t1, "prefix_vs_depth": prefix_vs_depth(records),
           "intervals": "95% Student-t over seeds; examples not resampled; no nulls "
                        "(seed-and-example intervals: across.json)"}
    write_json(out / "by_depth.json", doc)
    text = _markdown(rows, t1, records)
    if across is not None:
        from .across_md import across_figure, across_markdown
        from .zoo_answer import answer_document

        write_json(out / "across.json", across)
        write_json(out / "answer.json", answer_document(records, across))
        text += "\n" + across_markdown(across, records)
        across_figure(across, out / "depth_params.png")
    (out / "summary.md").write_text(text)
    if rows:
        _figure(rows, out / "depth.png")
    template = Path(template) if template is not None else out / "README.template.md"
    if template.is_file():   # the reading's numbers filled from the JSON just written
        from infodiv.reports.markdown import fill_numbers

        fresh = {p.name: p for p in out.glob("*.json")}    # the JSON just written in out
        (out / "README.md").write_text(fill_numbers(template.read_text(), template.parent,
                                                    fresh))
    return doc
