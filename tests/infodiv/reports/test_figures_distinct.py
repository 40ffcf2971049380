"""No figure of a run is a byte copy of another: each PNG the decomposition stage writes is
drawn once, and the variant that equals the default figure is listed under its name."""

from __future__ import annotations

import hashlib

import pytest


@pytest.mark.slow
def test_decomposition_figures_are_all_distinct(tmp_path):
    from infodiv.controls import conditionally_independent_ensemble
    from infodiv.study.decompose import decomposition_report

    run = conditionally_independent_ensemble(120, 4, mu=0.5, random_state=0)
    doc = decomposition_report(run, tmp_path, info_methods=(), inference=0)
    digests = {}
    for png in sorted(tmp_path.glob("*.png")):
        digests.setdefault(hashlib.sha256(png.read_bytes()).hexdigest(), []).append(png.name)
    copies = [names for names in digests.values() if len(names) > 1]
    assert copies == [], f"byte copies: {copies}"
    files = doc["figures_every_variant"]["files"]
    assert "junction_curves.png" in files and "junction_curves_logit_mean.png" not in files
    assert all((tmp_path / f).is_file() for f in files)


def test_a_long_title_is_wrapped_inside_the_figure(tmp_path):
    from infodiv.controls import conditionally_independent_ensemble
    from infodiv.reports.figures import plot_module_shares
    from infodiv.tables import module_shares

    run = conditionally_independent_ensemble(60, 4, mu=0.5, random_state=0)
    title = ("a model with a long name on a task with a long name (N = 60): module shares of "
             "bias and diversity (logit space, scale=mean)")
    fig = plot_module_shares(module_shares([run]), tmp_path / "shares.png", title=title)
    renderer = fig.canvas.get_renderer()
    box = fig._suptitle.get_window_extent(renderer)
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width, (box, fig.bbox.width)
    assert fig._suptitle.get_text().replace("\n", " ") == title
