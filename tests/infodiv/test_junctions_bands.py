"""Junction curves carry example-bootstrap bands: each contains its mean, has the width of
the sampling error computed independently, and travels into JSON beside its measure."""

from __future__ import annotations

import numpy as np
import pytest
from _report_walk import walk_report
from scipy.stats import norm

from infodiv.junctions import junction_curves


@pytest.fixture(scope="module")
def run():
    from infodiv.controls import conditionally_independent_ensemble

    return conditionally_independent_ensemble(500, 7, n_options=3, mu=0.35, random_state=3)


@pytest.fixture(scope="module")
def curves(run):
    return junction_curves(run, n_bootstrap=400, random_state=1)


def test_bands_contain_their_means(curves):
    assert set(curves.ci) == {"accuracy", "mse", "bias", "diversity", "cross_entropy",
                              "ce_bias", "ce_diversity"}
    for measure, band in curves.ci.items():
        y = getattr(curves, measure)
        assert band.shape == (y.size, 2)
        assert (band[:, 0] <= y).all() and (y <= band[:, 1]).all(), measure
        assert (band[1:, 0] < band[1:, 1]).all(), measure   # (k = 1 has no diversity)


def test_accuracy_band_is_the_binomial_error(run, curves):
    """Accuracy of prefix k, computed here from the members, and its 95% half-width
    1.96·√(p(1 − p)/n)."""
    u, y = run.u.astype(np.float64), run.labels
    for i, k in enumerate(curves.k):
        p = float((u[:, :k].sum(axis=1).argmax(axis=1) == y).mean())
        assert curves.accuracy[i] == pytest.approx(p, abs=1e-12)
        half = norm.ppf(0.975) * np.sqrt(p * (1 - p) / y.size)
        width = curves.ci["accuracy"][i, 1] - curves.ci["accuracy"][i, 0]
        assert width == pytest.approx(2 * half, rel=0.25), k


def test_mse_band_is_the_standard_error_of_the_per_example_loss(run, curves):
    """MSE(onehot(y), Σ_{m≤k} u_m / k) per example, here; its mean's normal 95% width."""
    u, y = run.u.astype(np.float64), run.labels
    t = np.eye(u.shape[2])[y]
    for i, k in enumerate(curves.k):
        per_example = ((t - u[:, :k].mean(axis=1)) ** 2).mean(axis=1)
        assert curves.mse[i] == pytest.approx(per_example.mean(), rel=1e-10)
        half = norm.ppf(0.975) * per_example.std() / np.sqrt(y.size)
        width = curves.ci["mse"][i, 1] - curves.ci["mse"][i, 0]
        assert width == pytest.approx(2 * half, rel=0.2), k


def test_json_carries_each_band_beside_its_measure(curves):
    doc = curves.to_dict()
    assert doc["accuracy_ci"] == curves.ci["accuracy"].tolist()
    assert doc["ci_method"].startswith("example bootstrap") and doc["n_bootstrap"] == 400
    result = walk_report({"junction_curves": {"fixed": doc}})
    assert result.ok and result.checked == 7 * curves.k.size


def test_without_resampling_and_bad_sizes(run):
    plain = junction_curves(run, n_bootstrap=0, cross_entropy=False)
    assert plain.ci is None and "accuracy_ci" not in plain.to_dict()
    with pytest.raises(ValueError, match="n_bootstrap must be 0 or an integer >= 20, got 5"):
        junction_curves(run, n_bootstrap=5)
