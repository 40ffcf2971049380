"""``mi_readout``: Ĥ(Y) − held-out cross-entropy of the calibrated summed readout, recomputed
here from the folds and scipy's fit of softmax(a·z + c) (independent of the batched Newton)."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import log_softmax

from infodiv.setfunctions import make_set_function
from infodiv.setfunctions.readout_information import ReadoutInformationSetFunction


class Run:
    def __init__(self, u, bias, labels):
        self.u, self.bias, self.labels = u, bias, labels
        self.members = [f"m{i}" for i in range(u.shape[1])]


def members(n=400, m=5, c=3, signal=0.8, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    u = rng.normal(size=(n, m, c)) + signal * (np.arange(c) == y[:, None])[:, None, :]
    return Run(u, rng.normal(size=c), y)


def held_out_ce_bits(z, y, folds):
    """Mean held-out −log2 q(y|z) with (a, c) fitted by scipy on the other fold."""
    total = np.empty(len(y))
    for fit, ev in ((folds[0], folds[1]), (folds[1], folds[0])):
        c = z.shape[1]

        def loss(th, idx=fit):
            lg = log_softmax(th[0] * z[idx] + np.r_[0.0, th[1:]], axis=1)
            return -lg[np.arange(len(idx)), y[idx]].mean()

        th = minimize(loss, np.r_[1.0, np.zeros(c - 1)], method="BFGS",
                      options={"gtol": 1e-10}).x
        lg = log_softmax(th[0] * z[ev] + np.r_[0.0, th[1:]], axis=1)
        total[ev] = -lg[np.arange(len(ev)), y[ev]] / np.log(2)
    return total.mean()


@pytest.mark.parametrize("c", [2, 4])
def test_value_is_label_entropy_minus_held_out_cross_entropy(c):
    run = members(c=c)
    f = make_set_function(run, "mi_readout")
    assert isinstance(f, ReadoutInformationSetFunction) and f.units == "bits"
    p = np.bincount(run.labels) / len(run.labels)
    h = -(p * np.log2(p)).sum()
    for s in ([0], [1, 3], [0, 1, 2, 3, 4]):
        z = run.u[:, s, :].sum(axis=1) + run.bias
        expect = h - held_out_ce_bits(z, run.labels, f.folds)
        assert f.value(s) == pytest.approx(expect, abs=1e-6)
        assert f.value(s) <= h
    assert abs(f.value([])) < 1e-3          # the calibrated bias predicts the (other half's) prior
    # nats: the same number times ln 2
    g = make_set_function(run, "mi_readout", base="e")
    assert g.value([0, 1]) == pytest.approx(f.value([0, 1]) * np.log(2), rel=1e-12)


def test_signal_gives_information_and_none_without_it():
    f = make_set_function(members(signal=1.0), "mi_readout")
    assert f.value(range(5)) > 0.5
    null = make_set_function(members(signal=0.0, seed=3), "mi_readout")
    assert null.value(range(5)) < 0.02      # held-out: about 0, slightly negative


def test_incremental_paths_and_restrict_agree_with_direct_values():
    run = members()
    f = make_set_function(run, "mi_readout")
    order = np.array([3, 0, 4, 1, 2])
    vals = f.order_values(order)
    assert np.allclose(vals, [f.value(order[:k]) for k in range(6)], atol=1e-9)
    state = f.add(f.start([3]), 0)
    assert np.allclose(f.added_values(state, [1, 2]),
                       [f.value([3, 0, 1]), f.value([3, 0, 2])], atol=1e-9)
    sub = f.restrict(np.arange(200))
    assert isinstance(sub, ReadoutInformationSetFunction) and sub.name == "mi_readout"
    assert sub.value([0, 1]) <= -(np.bincount(run.labels[:200]) / 200 * np.log2(
        np.bincount(run.labels[:200]) / 200)).sum()
