"""The answer figure: layer-addition curves of the real members against their conditionally
independent control, each with its 95% example-bootstrap band, drawn from the record that
:func:`infodiv.study.answer_curves.answer_curves` computes (DESIGN.md 2.7, section 3)."""

from __future__ import annotations

import textwrap

import numpy as np

from .figures import _titled, new_figure, save_figure

__all__ = ["plot_answer_curves"]

REAL_COLOUR, CONTROL_COLOUR = "#1f77b4", "#d62728"


def plot_answer_curves(data: dict, path=None, *, title=None):
    """Draw :func:`infodiv.study.answer_curves.answer_curves` ``data``: both mean curves with
    their shaded bands, the reference level dotted, a legend, axis labels with units;
    ``title`` (e.g.
    :func:`~infodiv.reports.figures.run_label`) heads it. Saved as PNG when ``path`` is given
    (titles wrapped to fit)."""
    k = np.asarray(data["k"])
    fig = new_figure(4.6, 4.2)   # shown in a third of a 1400 px screen: few inches, big type
    ax = fig.subplots()
    pct = f"{data['confidence']:.0%}"
    handles, labels = [], []
    for key, colour, label in (
            ("real", REAL_COLOUR, f"real members (mean of {data['n_orders']} random orders)"),
            ("control", CONTROL_COLOUR, f"conditionally independent control "
                                        f"({data['n_controls']} draws)")):
        cur = data[key]
        band = ax.fill_between(k, cur["ci_low"], cur["ci_high"], color=colour, alpha=0.2, lw=0)
        (line,) = ax.plot(k, cur["mean"], color=colour, lw=1.6)
        handles.append((band, line))
        labels.append(f"{label}, {pct} band" + (
            f" (extended to its mean by up to {cur['widened']:.2g})" if cur["widened"] else ""))
    ref = data["reference"]
    handles.append(ax.axhline(ref["value"], color="0.35", ls=":", lw=1.0))
    labels.append(f"{ref['label']} ({ref['value']:.3g})")
    labels = [textwrap.fill(lab, 52) for lab in labels]
    units = data.get("units") or ""
    ax.set_xlabel("number of members k (added in random order)")
    ax.set_ylabel(f"{data['objective']} [{units}]" if units else data["objective"])
    ax.set_xlim(k[0], k[-1])
    ax.set_xlabel(ax.get_xlabel(), fontsize=10)
    ax.set_ylabel(ax.get_ylabel(), fontsize=10)
    fig.legend(handles, labels, loc="outside lower center", ncols=1, fontsize=9,
               frameon=False)
    what = (f"{data['objective']} as members are added: real against conditionally "
            "independent control" + ("" if title else f" (N = {data['n_examples']})"))
    _titled(ax, title, what)
    return save_figure(fig, path)
