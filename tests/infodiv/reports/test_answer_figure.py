"""The answer figure: random-order curves of the real members against their conditionally
independent control, with example-bootstrap bands (infodiv.reports.answer_figure)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import norm

from infodiv.reports.answer_figure import plot_answer_curves
from infodiv.study.answer_curves import answer_curves, reference_level

M, A, SHARED_SD, OWN_SD = 12, 0.5, 1.0, 0.2


@pytest.fixture(scope="module")
def redundant():
    """Members that share one noise draw per example: u_m = a·onehot(y) + ε + 0.2·η_m.

    Summing members does not average ε away, so the real curve saturates near
    Φ(a / √2); permuted within class, every member's noise is its own and the sum of k members
    reaches Φ(√k·a / √(2·(1 + 0.2²))).
    """
    from infodiv.controls import conditionally_independent_ensemble
    from infodiv.inference.surrogates import with_arrays

    base = conditionally_independent_ensemble(600, M, mu=0.0, random_state=1)
    rng = np.random.default_rng(7)
    n, c = base.labels.size, 2
    shared = SHARED_SD * rng.standard_normal((n, 1, c))
    own = OWN_SD * rng.standard_normal((n, M, c))
    u = A * np.eye(c)[base.labels][:, None, :] + shared + own
    return with_arrays(base, u=u)


@pytest.fixture(scope="module")
def curves(redundant):
    return answer_curves(redundant, "accuracy", n_orders=30, n_controls=5, n_bootstrap=300,
                         random_state=0)


def test_json_ready_and_sized(curves):
    doc = json.loads(json.dumps(curves))
    assert doc["k"] == list(range(M + 1))
    for key in ("real", "control"):
        assert all(len(doc[key][f]) == M + 1 for f in ("mean", "ci_low", "ci_high"))
    assert doc["units"] == "fraction" and doc["n_examples"] == 600


def test_bands_contain_their_means_and_are_ordered(curves):
    for key in ("real", "control"):
        cur = {f: np.asarray(curves[key][f]) for f in ("mean", "ci_low", "ci_high")}
        assert (cur["ci_low"] <= cur["mean"]).all() and (cur["mean"] <= cur["ci_high"]).all()
        assert (cur["ci_low"] <= cur["ci_high"]).all()
        assert curves[key]["widened"] == 0.0          # the percentile band held it unaided


def test_endpoints_computed_independently(redundant, curves):
    u, y = redundant.u.astype(np.float64), redundant.labels
    full = float((u.sum(axis=1).argmax(axis=1) == y).mean())
    assert curves["real"]["mean"][-1] == pytest.approx(full, abs=1e-12)
    # f(∅): zero bias, every option tied, accuracy 1/C for both
    assert curves["real"]["mean"][0] == curves["control"]["mean"][0] == pytest.approx(0.5)
    # one member: within-class permutation keeps each member's (value, label) pairs, and
    # both curves use the same orders, so k = 1 agrees exactly
    assert curves["control"]["mean"][1] == pytest.approx(curves["real"]["mean"][1], abs=1e-12)
    # the control at k = M: independent noise of variance 1 + 0.2² per option
    expected = norm.cdf(np.sqrt(M) * A / np.sqrt(2 * (SHARED_SD**2 + OWN_SD**2)))
    assert curves["control"]["mean"][-1] == pytest.approx(expected, abs=0.04)


def test_redundant_members_saturate_below_their_control(curves):
    real, ctrl = curves["real"], curves["control"]
    assert real["ci_high"][-1] < ctrl["ci_low"][-1]
    half = M // 2
    assert real["mean"][-1] - real["mean"][half] < ctrl["mean"][-1] - ctrl["mean"][half] - 0.03


def test_band_width_matches_the_binomial_error(redundant, curves):
    """At k = M every example's score is a fixed 0/1: the stratified bootstrap's sd of the
    mean is √(Σ_c n_c p_c (1 − p_c)) / n."""
    u, y = redundant.u.astype(np.float64), redundant.labels
    hit = (u.sum(axis=1).argmax(axis=1) == y).astype(float)
    var = sum(hit[y == c].size * hit[y == c].var() for c in np.unique(y))
    half_width = norm.ppf(0.975) * np.sqrt(var) / y.size
    width = curves["real"]["ci_high"][-1] - curves["real"]["ci_low"][-1]
    assert width == pytest.approx(2 * half_width, rel=0.25)


def test_reference_levels():
    y = np.array([0, 0, 0, 1])
    assert reference_level(y, "accuracy_calibrated")["value"] == 0.75
    h = -(0.75 * np.log2(0.75) + 0.25 * np.log2(0.25))
    assert reference_level(y, "cross_entropy")["value"] == pytest.approx(h)
    assert reference_level(y, "brier")["value"] == pytest.approx(1 - 0.75**2 - 0.25**2)
    assert reference_level(y, "mi_usable") == {"value": 0.0, "units": "bits",
                                               "label": "no information about the label"}
    with pytest.raises(ValueError, match="no reference level"):
        reference_level(y, "bogus")


def test_bad_sizes():
    from infodiv.controls import conditionally_independent_ensemble

    run = conditionally_independent_ensemble(40, 3, random_state=0)
    with pytest.raises(ValueError, match="n_bootstrap must be an integer >= 20, got 5"):
        answer_curves(run, n_bootstrap=5)
    with pytest.raises(ValueError, match="n_orders"):
        answer_curves(run, n_orders=0)


def test_no_per_example_scores_is_refused():
    """mi_knn has no per-example scores; resampled rows would bias it upwards."""
    from infodiv.controls import conditionally_independent_ensemble

    run = conditionally_independent_ensemble(40, 3, random_state=0)
    with pytest.raises(ValueError, match="'mi_knn' has no per-example scores"):
        answer_curves(run, "mi_knn")


def test_plot_has_legend_units_reference_and_a_fitting_title(curves, tmp_path):
    title = "a model with a rather long name on a task with a long name too (N = 600)"
    fig = plot_answer_curves(curves, tmp_path / "answer.png", title=title)
    assert (tmp_path / "answer.png").stat().st_size > 0
    ax = fig.axes[0]
    assert ax.get_ylabel() == "accuracy [fraction]" and "members k" in ax.get_xlabel()
    (legend,) = fig.legends
    texts = [t.get_text() for t in legend.get_texts()]
    assert len(texts) == 3 and texts[2] == f"majority class ({curves['reference']['value']:.3g})"
    assert any(np.allclose(ln.get_ydata(), curves["reference"]["value"]) for ln in ax.lines)
    renderer = fig.canvas.get_renderer()
    box = ax.title.get_window_extent(renderer)
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width
    assert ax.title.get_text().startswith(title.split(" (")[0].split()[0])


def test_a_widened_band_says_so(curves):
    data = json.loads(json.dumps(curves))
    data["control"]["widened"] = 0.012
    (legend,) = plot_answer_curves(data).legends
    texts = [t.get_text() for t in legend.get_texts()]
    assert "extended" not in texts[0] and texts[1].endswith("(extended to its mean by up to 0.012)")
