"""Figures 3, 4 and 5/7 of the paper for one real model over several tasks (CPU friendly).

    python scripts/paper_figures.py --model smollm2-135m --tasks sst2 rte wic boolq \
        --n 400 --out docs/results/decompositions

Extracts each task into ``runs/`` (resumable), writes per-task decomposition reports, the
correlation table of accuracy with MSE / bias / diversity over junction points with its Fisher-z
average (Figure 3), module shares (Figure 4), junction curves (Figures 5/7), and a summary.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def _no_test(record: dict) -> dict:
    """A correlation record; the "Avg." rows (a Fisher-z average over tasks) carry no test, as
    in the paper: their p is null beside the reason."""
    if record["task"] == "Avg.":
        return {**record, "p": None,
                "p_reason": "a Fisher-z average of the tasks' correlations carries no test"}
    return record


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--tasks", nargs="+", default=["sst2", "rte", "wic", "boolq"])
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--runs", type=Path, default=Path("runs"))
    parser.add_argument("--out", type=Path, default=Path("docs/results/decompositions"))
    parser.add_argument("--inference", type=int, default=100,
                        help="bootstrap/null replicates of the information terms (0 skips)")
    args = parser.parse_args(argv)

    import torch

    from extraction import extract, get_task, load_model
    from infodiv.junctions import junction_curves
    from infodiv.reports.figures import plot_correlations, plot_junction_curves, plot_module_shares
    from infodiv.reports.serialize import write_json
    from infodiv.study.decompose import decomposition_report
    from infodiv.tables import correlation_table, module_shares

    torch.set_num_threads(1)
    model, tok = load_model(args.model, device="cpu", dtype="float32")
    slug = Path(args.model).name
    runs = []
    for task_name in args.tasks:
        task = get_task(task_name, data_dir=args.data_dir, n=args.n)
        contrib = extract(model, tok, task, out=args.runs / f"{slug}-{task_name}-n{args.n}")
        contrib.meta["model"] = slug
        decomposition_report(contrib, args.out / task_name, info_methods=("gaussian",),
                             inference=args.inference)
        runs.append(contrib)
    args.out.mkdir(parents=True, exist_ok=True)
    corr = correlation_table(runs)
    plot_correlations(corr, args.out / "figure3_correlations.png")
    shares = module_shares(runs)
    plot_module_shares(shares, args.out / "figure4_module_shares.png")
    curves = [junction_curves(r) for r in runs]
    plot_junction_curves(curves, args.out / "figure5_junction_curves.png")
    summary = {"model": slug, "n": args.n, "tasks": args.tasks,
               "accuracy": {r.meta["task"]: r.accuracy() for r in runs},
               "max_exactness_error": {r.meta["task"]: float(r.exactness_error().max())
                                       for r in runs},
               "correlations": [_no_test(r) for r in corr.to_records()],
               "module_shares": shares.to_records()}
    write_json(args.out / "summary.json", summary)
    (args.out / "tables.md").write_text(
        f"# {slug}: decompositions over {', '.join(args.tasks)} (n ≤ {args.n} each)\n\n"
        "## Figure 3: correlation of accuracy with MSE / bias / diversity over junctions\n\n"
        + corr.to_markdown() + "\n\n## Figure 4: module shares of bias and diversity\n\n"
        + shares.to_markdown() + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
