"""Figure appearance: titles with model, task and N; readable, uncut labels; the
layer graph labelled, with a legend, in depth order; constant curves not z-scored into noise."""

from __future__ import annotations

import numpy as np
import pytest

from infodiv.reports.figures import (
    plot_junction_curves,
    plot_layer_curves,
    plot_layer_graph,
    plot_module_shares,
    plot_shapley,
    run_label,
)


@pytest.fixture(scope="module")
def run():
    from infodiv.controls import conditionally_independent_ensemble

    c = conditionally_independent_ensemble(240, 11, mu=0.4, random_state=0)
    c.meta.update(model={"model_id": "/very/long/path/to/models/SomeModel-135M/hf"},
                  task="sst2")
    return c


def _inside(fig):
    """Everything ``fig`` draws lies inside its canvas (nothing is cut off when saved)."""
    fig.canvas.draw()
    tight = fig.get_tightbbox(fig.canvas.get_renderer())
    w, h = fig.get_size_inches()
    assert tight.x0 >= -0.02 and tight.y0 >= -0.02, tight
    assert tight.x1 <= w + 0.02 and tight.y1 <= h + 0.02, (tight, w, h)


def _texts(fig):
    return [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))]


def test_run_label_short_model_name(run):
    assert run_label(run) == "SomeModel-135M on sst2 (N = 240)"


def test_junction_curves_titles_units_bands_and_constant_curve(run):
    from infodiv.junctions import junction_curves

    curves = [junction_curves(run, readout=r) for r in ("fixed", "logit_lens")]
    fig = plot_junction_curves(curves)
    axes = np.array(fig.axes).reshape(2, 2)              # rows: accuracy, squared loss
    assert [a.get_title() for a in axes[0]] == ["fixed-scale readout", "logit-lens readout"]
    assert [a.get_ylabel() for a in axes[:, 0]] == ["accuracy [fraction]",
                                                    "squared loss [logit²]"]
    assert fig.get_suptitle().startswith("SomeModel-135M on sst2 (N = 240): junction curves")
    acc = next(ln for ln in axes[0, 0].get_lines() if ln.get_label() == "accuracy")
    np.testing.assert_allclose(acc.get_ydata(), curves[0].accuracy)    # absolute values
    assert len(axes[1, 0].collections) == 3                           # mse, bias, diversity
    (legend,) = fig.legends
    assert "200 resamples of the 240 examples" in legend.get_title().get_text()
    assert {"accuracy", "mse", "bias", "diversity", "majority class", "95% band"} == {
        t.get_text() for t in legend.get_texts()}
    assert all(a.get_legend() is None for a in fig.axes)   # one figure legend, off the plots
    _inside(fig)
    curves[0].accuracy[:] = 0.5            # z-scored, a constant measure is drawn flat at 0
    fig = plot_junction_curves(curves, standardized=True)
    flat = next(ln for ln in fig.axes[0].get_lines() if ln.get_label() == "accuracy")
    assert np.all(flat.get_ydata() == 0) and fig.axes[0].get_ylabel() == \
        "accuracy [z-score over k]"
    _inside(fig)


def test_module_shares_readable(run):
    from infodiv.tables import module_shares

    fig = plot_module_shares(module_shares([run]), title=run_label(run) + ": module shares")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["SomeModel-135M"]
    assert ax.get_legend() is None and fig.legends          # legend beside, not over a bar
    widths = {round(p.get_width(), 3) for p in ax.patches}
    assert widths == {0.6}
    assert "SomeModel-135M on sst2 (N = 240)" in fig.get_suptitle()
    _inside(fig)


def test_curves_shapley_graph_titled_and_labelled(run):
    from infodiv.curves import layer_curves
    from infodiv.layergraph import layer_graph

    label = run_label(run)
    lc = layer_curves(run, objective="accuracy", n_permutations=20, random_state=0)
    fig = plot_layer_curves(lc, title=label)
    assert label in fig.axes[0].get_title()
    _inside(fig)
    fig = plot_shapley(lc, run.names, title=label)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == run.names
    assert min(t.get_fontsize() for t in ax.get_yticklabels()) >= 7
    assert label in ax.get_title() and fig.legends
    _inside(fig)
    g = layer_graph(run, random_state=0)
    fig = plot_layer_graph(g, title=label)
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks == ["emb"] + [str(i) for i in range(len(run.names) - 1)]   # depth columns
    assert fig.legends and label in fig.axes[0].get_title()
    _inside(fig)


def test_reports_title_every_figure_with_the_run(run, tmp_path, monkeypatch):
    """The curves and decomposition reports pass model, task and N to every figure."""
    import infodiv.study.curves as curves_mod
    from infodiv.study import StudySettings
    from infodiv.study.curves import curves_stage

    titles = {}
    for name in ("plot_layer_curves", "plot_gains", "plot_shapley", "plot_layer_graph"):
        real = getattr(curves_mod, name)

        def spy(*a, _real=real, _name=name, **k):
            titles[_name] = k.get("title")
            return _real(*a, **k)

        monkeypatch.setattr(curves_mod, name, spy)
    settings = StudySettings().with_settings(objectives=("accuracy",), n_curve_orders=10,
                                             n_triples=5, n_bootstrap=100, stability=0,
                                             verdicts=False)
    curves_stage(run, tmp_path / "curves", settings)
    assert titles == dict.fromkeys(titles, run_label(run)) and len(titles) == 4


def test_one_task_is_not_averaged(run):
    """Figure 3 and Figure 4 of a one-task run: no "Avg." column, no "mean over tasks"."""
    from infodiv.controls import conditionally_independent_ensemble
    from infodiv.junctions import junction_curves
    from infodiv.reports.figures import plot_correlations
    from infodiv.tables import correlation_table, module_shares

    fig = plot_correlations(correlation_table([junction_curves(run, n_bootstrap=0)]))
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["sst2"]
    assert "Avg." not in fig.get_suptitle()
    assert plot_module_shares(module_shares([run])).get_suptitle() == \
        "Module shares of bias and diversity (task sst2)"
    other = conditionally_independent_ensemble(240, 11, mu=0.4, random_state=1)
    other.meta.update(run.meta, task="rte")
    fig = plot_correlations(correlation_table([junction_curves(r, n_bootstrap=0)
                                               for r in (run, other)]))
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["sst2", "rte", "Avg."]
    assert "Avg. = Fisher-z mean over the tasks" in fig.get_suptitle()
    assert plot_module_shares(module_shares([run, other])).get_suptitle().endswith(
        "(mean over 2 tasks)")
