"""Markdown tables of docs/estimators.md from benchmarks/results/{bmi,bmi_lnc,knn}.json.

Run after ``bench_bmi.py`` and ``bench_knn.py``: ``python benchmarks/estimator_tables.py``
prints the tables (numbers rounded for reading; the JSON files keep them in full).
"""

from __future__ import annotations

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def bmi_table(res: dict) -> str:
    methods = list(dict.fromkeys(r["method"] for r in res["rows"]))
    tasks = list(dict.fromkeys(r["task"] for r in res["rows"]))
    cell = {(r["task"], r["method"]): r for r in res["rows"]}
    short = [m.replace(" (npeet-plus (PyPI fork of NPEET))", "") for m in methods]
    lines = ["| task (truth, nats) | " + " | ".join(short) + " |",
             "|---" * (len(methods) + 1) + "|"]
    for t in tasks:
        truth = next(r["truth_nats"] for r in res["rows"] if r["task"] == t)
        vals = []
        for m in methods:
            r = cell[(t, m)]
            vals.append("skipped" if "rmse" not in r else f"{r['rmse']:.3f}")
        lines.append(f"| {t} ({truth:.3f}) | " + " | ".join(vals) + " |")
    return "\n".join(lines)


def bmi_time_table(res: dict) -> str:
    methods = list(dict.fromkeys(r["method"] for r in res["rows"]))
    tasks = list(dict.fromkeys(r["task"] for r in res["rows"]))
    cell = {(r["task"], r["method"]): r for r in res["rows"]}
    short = [m.replace(" (npeet-plus (PyPI fork of NPEET))", "") for m in methods]
    lines = ["| task | " + " | ".join(short) + " |", "|---" * (len(methods) + 1) + "|"]
    for t in tasks:
        vals = ["–" if "seconds" not in cell[(t, m)] else f"{cell[(t, m)]['seconds']:.2f}"
                for m in methods]
        lines.append(f"| {t} | " + " | ".join(vals) + " |")
    return "\n".join(lines)


def ennemi_table(res: dict) -> str:
    lines = ["| preprocess | passed | failed |", "|---|---|---|"]
    for p, r in res["ennemi_cases"].items():
        lines.append(f"| {p} | {r['passed']} / {r['total']} | {'; '.join(r['failed'])} |")
    return "\n".join(lines)


def lnc_table(res: dict) -> str:
    """Strong-dependence pairs: mean estimate (nats) per method and n."""
    rows = res["strong_dependence"]
    methods = [m for m in rows[0] if isinstance(rows[0][m], dict)]
    lines = ["| case | n | truth | " + " | ".join(methods) + " |",
             "|---" * (len(methods) + 3) + "|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['n']} | {r['truth_nats']:.3f} | " + " | ".join(
            f"{r[m]['mean']:.3f} ± {r[m]['sd']:.3f}" for m in methods) + " |")
    return "\n".join(lines)


def lnc_groundtruth_table(res: dict) -> str:
    """Ground-truth suite: RMSE (bits) of the quantities LNC covers."""
    lines = ["| case | quantity | truth (bits) | knn k=3 (default) | KSG standardize k=2D | "
             "lnc k=max(5,D) | lnc k=2D |", "|---|---|---|---|---|---|---|"]
    for r in res["groundtruth"]:
        cells = [v for v in r["methods"].values()]
        if any("not_covered" in v for v in cells):
            continue
        lines.append(f"| {r['case']} | {r['quantity']} | {r['true_bits']:.3f} | "
                     + " | ".join(f"{v['rmse']:.4f}" for v in cells) + " |")
    return "\n".join(lines)


def alpha_rules_table(res: dict) -> str:
    """LNC with the bias-calibrated alpha vs a fixed 0.5% quantile (nats, mean ± sd)."""
    rules = ("bias-calibrated", "0.5% quantile")
    lines = ["| rho | k | truth | KSG | " + " | ".join(f"lnc, {r} α" for r in rules) + " |",
             "|---|---|---|---|---|---|"]
    for r in res["alpha_rules"]:
        lines.append(f"| {r['rho']} | {r['k']} | {r['truth_nats']:.3f} | "
                     f"{r['ksg']['mean']:.3f} ± {r['ksg']['sd']:.3f} | " + " | ".join(
                         f"{r[q]['mean']:.3f} ± {r[q]['sd']:.3f} (α = {r[q]['alpha']:.3f})"
                         for q in rules) + " |")
    return "\n".join(lines)


def npeet_lnc_table(res: dict) -> str:
    lines = ["| task | NPEET alpha | NPEET RMSE (nats) |", "|---|---|---|"]
    for r in res["npeet"].get("rows", []):
        lines.append(f"| {r['task']} | {r['alpha']} | {r['rmse']:.3f} |")
    return "\n".join(lines)


def small_n_table(res: dict) -> str:
    out = []
    for case, c in res["small_n_cmi_bias"].items():
        lines = [f"{case} (exact {c['exact_bits']:.3f} bits; mean bias in bits, +- s.e.)", "",
                 "| n | seeds | standardize | rank | none | NPEET cmi |",
                 "|---|---|---|---|---|---|"]
        for row in c["rows"]:
            vals = [f"{row[p]['bias_bits']:+.3f} +- {row[p]['se_bits']:.3f}" if p in row else "–"
                    for p in ("standardize", "rank", "none", "npeet")]
            lines.append(f"| {row['n']} | {row['seeds']} | " + " | ".join(vals) + " |")
        out.append("\n".join(lines))
    return "\n\n".join(out)


def _median_ratio(ratios: dict, name: str) -> str:
    return f"{ratios[name]['median']:.2f}x" if name in ratios else "–"


def _middle(values) -> float:
    return sorted(values)[len(values) // 2]


def speed_table(res: dict) -> str:
    lines = ["| cores | n | NPEET / ours (2+2) | ennemi / ours (2+2) | sklearn / ours (1+1) | "
             "ours 2+2 (s) | NPEET 2+2 (s) |", "|---|---|---|---|---|---|---|"]
    for key in ("ksg_mi_speed_all_cores", "ksg_mi_speed_one_core"):
        block = res[key]
        for b in block["by_n"]:
            r, t = b["speed_ratios"], b["seconds"]
            lines.append(f"| {block['cores']} | {b['n']} | "
                         f"{_median_ratio(r, 'npeet_2d_2d_over_ours_2d_2d')} | "
                         f"{_median_ratio(r, 'ennemi_2d_2d_over_ours_2d_2d')} | "
                         f"{_median_ratio(r, 'sklearn_1d_1d_over_ours_1d_1d')} | "
                         f"{_middle(t['ours_2d_2d']):.4f} | "
                         f"{_middle(t.get('npeet_2d_2d', [float('nan')])):.4f} |")
    return "\n".join(lines)


def tc_dim_table(res: dict) -> str:
    lines = ["| m scalars | exact TC (bits) | standardize | rank |", "|---|---|---|---|"]
    for row in res["equicorrelated_tc_by_dimension"]["rows"]:
        lines.append(f"| {row['m']} | {row['exact_tc_bits']:.2f} | "
                     f"{row['standardize']['relative_error']:+.1%} | "
                     f"{row['rank']['relative_error']:+.1%} |")
    return "\n".join(lines)


def main():
    for name, fns in [("bmi.json", (bmi_table, bmi_time_table, ennemi_table)),
                      ("bmi_lnc.json", (alpha_rules_table, lnc_table, lnc_groundtruth_table,
                                        npeet_lnc_table)),
                      ("knn.json", (speed_table, small_n_table, tc_dim_table))]:
        path = RESULTS / name
        if not path.exists():
            print(f"({name} missing)")
            continue
        res = json.loads(path.read_text())
        for fn in fns:
            try:
                print(fn(res), end="\n\n")
            except KeyError as exc:
                print(f"({name}: {fn.__name__} needs {exc})\n")


if __name__ == "__main__":
    main()
