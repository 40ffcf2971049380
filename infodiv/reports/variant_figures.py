"""Figures 3, 5 and 7 of one run in every variant of the decomposition, with valid p-values.

The paper draws Figure 3 (correlation of accuracy with MSE, bias and diversity over junction
points) and Figures 5/7 (those measures against depth) in one variant. Here every variant of
:data:`infodiv.inference.correlations.VARIANTS` — squared loss in logit space, in probability
space and the paper's Eq. 14, each with member scale ``mean`` (the paper) and ``sum`` (the
model) — gets its own junction-curve figure (fixed-scale and logit-lens readouts; the variant is
printed in the title) and its Figure-3 correlations, whose p-values come from the example
bootstrap with the series recomputed, with the last 1 and 5 junction points left out beside
them (:func:`~infodiv.inference.correlations.junction_correlations`, which computes them;
this module draws and prints them; :mod:`infodiv.study.decompose` computes the
curves). In the Figure-3 heat map
each panel is one variant, the columns are "all points" and the leave-last-k-out series, and a
star marks a bootstrap p < 0.05.
"""

from __future__ import annotations

from pathlib import Path

from ..inference.correlations import VARIANTS

__all__ = ["draw_variant_figures", "variant_file", "figure3_lines", "DEFAULT_VARIANT"]

#: the variant of ``junction_curves.png`` (the defaults of ``junction_curves``)
DEFAULT_VARIANT = {"space": "logit", "scale": "mean"}


def variant_file(name: str) -> str:
    """The file of one variant's junction-curve figure (the default variant's is
    ``junction_curves.png``, drawn with the decomposition report)."""
    if VARIANTS[name] == DEFAULT_VARIANT:
        return "junction_curves.png"
    return f"junction_curves_{name.replace('/', '_')}.png"


def draw_variant_figures(fig: dict, variant_curves: dict, out) -> None:
    """Draw ``junction_curves_<space>_<scale>.png`` of every non-default variant in
    ``variant_curves`` (variant -> junction curves by readout) and ``figure3_variants.png``
    from the correlation rows of ``fig`` (``doc["figures_every_variant"]``)."""
    from ..tables import Table
    from .figures import plot_correlations, plot_junction_curves

    out = Path(out)
    for name, curves in variant_curves.items():
        if VARIANTS[name] != DEFAULT_VARIANT:
            plot_junction_curves(list(curves), out / variant_file(name))
    rows = [(r["variant"], "all points" if not r["left_out"] else f"without last {r['left_out']}",
             r["measure"], r["method"], r["r"], r["p_bootstrap"], r["n_points"])
            for r in fig["rows"]]
    table = Table(("model", "task", "measure", "method", "r", "p", "n"), tuple(rows),
                  "Figure 3 in every variant (bootstrap p-values, series recomputed)")
    plot_correlations(table, out / "figure3_variants.png")


def figure3_lines(doc: dict) -> list[str]:
    """Markdown: Figure-3 correlations per variant (Pearson), bootstrap p beside the naive one."""
    from .markdown import md_table

    fig = doc.get("figures_every_variant")
    if not fig:
        return []
    rows = []
    for r in fig["rows"]:
        if r["method"] != "pearson":
            continue
        rows.append([r["variant"], r["measure"], str(r["left_out"]), f"{r['r']:.3f}",
                     f"[{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]", f"{r['p_bootstrap']:.3g}",
                     f"{r['p_independent_points']:.3g}"])
    return (["## Figure 3 in every variant (accuracy vs measure over junction points)", "",
             f"K = {fig['n_points']} junction points; B = {fig['n_bootstrap']} example "
             "resamples with the series recomputed (the points are cumulative prefixes, not "
             "independent: the naive p treats them as independent and is shown only to be "
             "contrasted). Figures: " + ", ".join(f"`{f}`" for f in fig["files"]) + ".", ""]
            + md_table(["variant", "measure", "last points left out", "Pearson r", "95% CI",
                        "p (bootstrap)", "p (naive)"], rows) + [""])
