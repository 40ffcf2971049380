"""The canvas every report figure is drawn on: one object-oriented matplotlib style.

Figures are built by :func:`new_figure` on :class:`matplotlib.figure.Figure` with the Agg
canvas, so nothing touches pyplot's global state (or the backend) or needs a display;
:func:`save_figure` writes PNG at :data:`DPI` with every title wrapped to fit
(:func:`fit_titles`; tests/infodiv/reports/test_figures_readable.py). :func:`run_label` and
:func:`_titled` give the titles their model, task and N.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DPI", "GROUP_COLORS", "new_figure", "fit_titles", "save_figure", "run_label"]

DPI = 120

#: colour of each member kind (embedding, attention, MLP)
GROUP_COLORS = {"embed": "#8c8c8c", "attn": "#1f77b4", "mlp": "#ff7f0e"}


def new_figure(width, height, *, layout="constrained"):
    """A Figure of ``width`` x ``height`` inches on its own Agg canvas (no pyplot)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height), layout=layout)
    FigureCanvasAgg(fig)
    return fig


def fit_titles(fig) -> None:
    """Wrap the figure's suptitle and every axes title that is wider than the space it has
    (the figure, or its axes) onto as many lines as it needs, so no title is clipped."""
    import textwrap

    renderer = fig.canvas.get_renderer()
    texts = [(fig._suptitle, fig.bbox.width)] if fig._suptitle is not None else []
    texts += [(ax.title, ax.bbox.width) for ax in fig.axes if ax.get_title()]
    for text, room in texts:
        content = text.get_text()
        width = text.get_window_extent(renderer).width
        if width <= room * 0.98 or not content:
            continue
        lines = content.split("\n")                  # explicit breaks are kept
        chars = max(12, int(max(map(len, lines)) * room * 0.95 / width))
        text.set_text("\n".join(textwrap.fill(line, chars) for line in lines))


def save_figure(fig, path, *, tight: bool = False):
    """Save ``fig`` as PNG at :data:`DPI` when ``path`` is given (folders created), its titles
    wrapped to fit (:func:`fit_titles`)."""
    if path is not None:
        fit_titles(fig)
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png", dpi=DPI, bbox_inches="tight" if tight else None)
    return fig


def run_label(contrib=None, *, model=None, task=None, n=None) -> str:
    """``"<model> on <task> (N = n)"`` for figure titles, from a run or from the parts."""
    if contrib is not None:
        from ..runs import run_names

        model, task = run_names(getattr(contrib, "meta", {}) or {})
        n = contrib.n_examples
    model = _short(model) if model else "model"
    return f"{model} on {task or 'task'}" + (f" (N = {n})" if n is not None else "")


def _short(name, width: int = 24) -> str:
    """A model label for a tick or title: the last path part(s), wrapped at ``width``."""
    import textwrap

    from ..runfiles import model_slug

    text = str(name)
    if "/" in text or "\\" in text:
        text = model_slug(text)
    return "\n".join(textwrap.wrap(text, width)) or text


def _titled(ax, title, what):
    """``title: what`` over the axes, on two lines when that is long."""
    text = what if not title else f"{title}: {what}" if len(title) + len(what) < 80 else \
        f"{title}\n{what}"
    ax.set_title(text, fontsize=9)

