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
star marks a bootstrap p < 0.05. Without example resamples (``--inference 0``) the rows hold r
only: no star is drawn and the markdown prints "no interval (inference 0)" and "—".
"""

from __future__ import annotations

import math
from pathlib import Path

from ..inference.correlations import VARIANTS

__all__ = ["draw_variant_figures", "variant_file", "figure3_lines", "DEFAULT_VARIANT"]

#: the variant of ``junction_curves.png`` (the defaults of ``junction_curves``)
DEFAULT_VARIANT = {"space": "logit", "scale": "mean"}
#: what a cell without a number reads (no resample, or a flat series without r)
NO_NUMBER = "—"
#: the interval cell of a row computed without example resamples
NO_INTERVAL = "no interval (inference 0)"


def _cell(x, spec: str) -> str:
    """``x`` formatted by ``spec``; :data:`NO_NUMBER` for None or a non-finite number."""
    return f"{x:{spec}}" if x is not None and math.isfinite(x) else NO_NUMBER


def _ci_cell(ci) -> str:
    return f"[{_cell(ci[0], '.3f')}, {_cell(ci[1], '.3f')}]" if ci else NO_INTERVAL


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
    nan = float("nan")   # no p (no resample): no star
    rows = [(r["variant"], "all points" if not r["left_out"] else f"without last {r['left_out']}",
             r["measure"], r["method"], nan if r["r"] is None else r["r"],
             nan if r.get("p_bootstrap") is None else r["p_bootstrap"], r["n_points"])
            for r in fig["rows"]]
    title = ("Figure 3 in every variant (bootstrap p-values, series recomputed)"
             if fig.get("n_bootstrap") else
             f"Figure 3 in every variant (no p-values: {fig.get('no_interval', 'no resample')})")
    table = Table(("model", "task", "measure", "method", "r", "p", "n"), tuple(rows), title)
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
        rows.append([r["variant"], r["measure"], str(r["left_out"]), _cell(r["r"], ".3f"),
                     _ci_cell(r.get("ci")), _cell(r.get("p_bootstrap"), ".3g"),
                     _cell(r.get("p_independent_points"), ".3g")])
    sampled = (f"B = {fig['n_bootstrap']} example resamples with the series recomputed"
               if fig.get("n_bootstrap") else
               f"B = 0: {fig.get('no_interval', 'no example resamples')}, so r without "
               "interval or bootstrap p")
    return (["## Figure 3 in every variant (accuracy vs measure over junction points)", "",
             f"K = {fig['n_points']} junction points; {sampled} (the points are cumulative "
             "prefixes, not independent: the naive p treats them as independent and is shown "
             "only to be contrasted). Figures: " + ", ".join(f"`{f}`" for f in fig["files"])
             + ".", ""]
            + md_table(["variant", "measure", "last points left out", "Pearson r", "95% CI",
                        "p (bootstrap)", "p (naive)"], rows) + [""])
