"""Cross-fitting splits keep a bootstrap resample's repeats in one half (no train/test leak)."""

import numpy as np

import infodiv.setfunctions.information as information
from estimators.resampling import bootstrap_indices
from infodiv.setfunctions import ProbeSetFunction, ReadoutSetFunction, split_halves
from infodiv.setfunctions.base import duplicate_groups


def _data(n=240, m=6, c=2, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(c), n // c)
    u = rng.normal(size=(n, m, c))
    u[:, 0, 1] += 0.8 * (y == 1)
    return u, y


def _straddling(folds, groups):
    a, b = folds
    return np.intersect1d(groups[a], groups[b]).size


def test_distinct_rows_keep_the_plain_split():
    u, y = _data()
    assert duplicate_groups(u) is None
    f = ReadoutSetFunction(u, np.zeros(2), y, "cross_entropy", calibrated=True, random_state=3)
    plain = split_halves(y, 3)
    for got, want in zip(f.folds, plain):
        np.testing.assert_array_equal(got, want)


def test_repeats_never_straddle_the_halves():
    u, y = _data()
    idx = bootstrap_indices(y.size, np.random.default_rng(1), strata=y)
    uu, yy = u[idx], y[idx]
    groups = duplicate_groups(uu)
    assert groups is not None and groups.max() + 1 == np.unique(idx).size
    np.testing.assert_array_equal(groups == groups[0], idx == idx[0])
    for f in (ReadoutSetFunction(uu, np.zeros(2), yy, "accuracy", calibrated=True),
              ProbeSetFunction(uu, yy)):
        assert _straddling(f.folds, groups) == 0
        a, b = f.folds
        assert abs(a.size - b.size) <= 0.2 * yy.size  # halves of the groups, near halves of rows
    assert _straddling(split_halves(yy, 0), groups) > 0  # the ungrouped split leaks


def test_resampled_probe_is_not_optimistic(monkeypatch):
    """Without the groups a resample's probe is scored on rows its fit has seen: its mean over
    resamples sits above the full-sample value (the zoo's 'interval above its point')."""
    u, y = _data()

    def score(uu, yy):
        return ProbeSetFunction(uu, yy).scores(np.arange(u.shape[1])).mean()

    full = score(u, y)
    idx = [bootstrap_indices(y.size, np.random.default_rng(s), strata=y) for s in range(12)]
    grouped = np.mean([score(u[i], y[i]) for i in idx]) - full
    monkeypatch.setattr(information, "duplicate_groups", lambda rows: None)
    leaky = np.mean([score(u[i], y[i]) for i in idx]) - full
    assert leaky > 0.02          # measured +0.047 bits
    assert grouped < 0.0         # measured -0.064 bits (fewer distinct rows to fit on)
    assert leaky - grouped > 0.05
