"""One run's decomposition document rendered: ``decompositions.json``, the markdown summary
and the figures (:func:`write_decomposition`); :mod:`infodiv.study.decompose` computes the
document (Theorems 1–4)."""

from __future__ import annotations

from pathlib import Path

from .information_md import depth_lines, information_lines
from .markdown import fmt_pairs, md_table
from .serialize import write_json
from .variant_figures import draw_variant_figures, figure3_lines

__all__ = ["decomposition_markdown", "write_decomposition"]


def decomposition_markdown(doc: dict) -> str:
    """The readable summary of a decomposition document (numbers rounded for reading)."""
    run = doc["run"]
    lines = [f"# Decompositions: {run['model']} on {run['task']}", "",
             f"N = {run['N']} examples, M = {run['M']} members, C = {run['C']} options; "
             f"model accuracy {run['accuracy']:.4f}; max exactness error "
             f"{run['max_exactness_error']:.2e}.", "",
             "## Bias–diversity (Theorem 1; loss = bias − diversity exactly)", ""]
    lines += md_table(["loss", "space", "scale", "units", "ensemble loss", "bias", "diversity",
                       "max residual"],
                      [[r["loss"], r["space"], r["scale"], r["units"],
                        f"{r['ensemble_loss']:.5g}", f"{r['bias']:.5g}",
                        f"{r['diversity']:.5g}", f"{r['max_abs_residual']:.1e}"]
                       for r in doc["ensemble"]["bias_diversity"]])
    e = doc["ensemble"]["paper_eq14"]
    lines += ["", "## Paper Eq. 14 (an approximation, not an identity)", "",
              f"MSE {e['mse']:.5g}, bias {e['bias']:.5g}, implied diversity "
              f"{e['diversity']:.5g}, Krogh–Vedelsby ambiguity {e['ambiguity']:.5g}, "
              f"gap {e['gap']:.3g}.", ""]
    b = doc["ensemble"]["bias_variance_covariance"]
    lines += ["## Bias–variance–covariance (Theorem 3)", "",
              f"Ensemble MSE {b['mse']:.5g}; over options: {fmt_pairs(b['options'])}; over "
              f"examples (Ueda–Nakano): {fmt_pairs(b['examples'])}; mean target term dropped "
              f"by Eq. 11 as printed: {b['eq11_dropped_term_mean']:.5g}.", ""]
    if doc["information"]:
        lines += ["## Information decomposition (Theorem 4, bits)", "",
                  *information_lines(doc)]
    lines += ["", *depth_lines(doc), *figure3_lines(doc)]
    lines += ["", "Figures: `junction_curves.png` (Figures 5/7, fixed-scale and logit-lens "
              "readouts), `module_shares.png` (Figure 4).", ""]
    return "\n".join(lines)


def write_decomposition(doc: dict, out, *, junction: dict, shares, variant_curves=None,
                        title: str = "") -> None:
    """Render a decomposition document into ``out``: ``decompositions.json`` (``doc``),
    ``decompositions.md``, ``junction_curves.png`` (the ``junction`` curves by readout),
    ``module_shares.png`` (the ``shares`` table) and, with ``variant_curves`` (variant ->
    curves by readout) and ``doc["figures_every_variant"]``, the every-variant figures."""
    from .figures import plot_junction_curves, plot_module_shares

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    plot_junction_curves(list(junction.values()), out / "junction_curves.png")
    plot_module_shares(shares, out / "module_shares.png", title=f"{title}: module shares of "
                       "bias and diversity (logit space, scale=mean)")
    if variant_curves is not None and "figures_every_variant" in doc:
        draw_variant_figures(doc["figures_every_variant"], variant_curves, out)
    write_json(out / "decompositions.json", doc)
    (out / "decompositions.md").write_text(decomposition_markdown(doc))
