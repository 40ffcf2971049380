"""Batched Newton calibration fit of the calibrated readouts, against scipy."""

import numpy as np
import pytest
from _synthetic_runs import synthetic
from scipy.optimize import minimize

from infodiv.curves import greedy_backward, greedy_forward, order_values
from infodiv.setfunctions import fit_calibration, make_set_function, readout, readout_scores


def scipy_fit(z, y):
    """Reference: trust-region Newton (scipy) on an independent [n, C] implementation."""
    x, n, c = z.T, len(y), z.shape[0]  # x [n, C]
    onehot = np.eye(c)[y]

    def parts(th):
        lg = th[0] * x + np.r_[0.0, th[1:]]
        lg = lg - lg.max(1, keepdims=True)
        q = np.exp(lg)
        q /= q.sum(1, keepdims=True)
        return lg, q

    def loss(th):
        lg, _ = parts(th)
        return -(lg[np.arange(n), y] - np.log(np.exp(lg).sum(1))).mean()

    def feats():  # φ_ij = (x_ij, e_j[1:]) : [n, C, C]
        f = np.zeros((n, c, c))
        f[:, :, 0] = x
        f[:, np.arange(1, c), np.arange(1, c)] = 1.0
        return f

    phi = feats()

    def grad(th):
        _, q = parts(th)
        return np.einsum("nj,njp->p", q - onehot, phi) / n

    def hess(th):
        _, q = parts(th)
        m = np.einsum("nj,njp->np", q, phi)
        return (np.einsum("nj,njp,njr->pr", q, phi, phi) - m.T @ m) / n

    res = minimize(loss, np.r_[1.0, np.zeros(c - 1)], jac=grad, hess=hess, method="trust-exact",
                   options={"gtol": 1e-13, "maxiter": 500})
    th = res.x
    for _ in range(3):  # polish: trust-exact stops on the unscaled gradient
        th = th - np.linalg.solve(hess(th), grad(th))
    assert loss(th) <= loss(res.x) + 1e-15
    return th, loss


def problems():
    rng = np.random.default_rng(7)
    out = []
    for c, scale, n in ((2, 1.0, 300), (4, 1.0, 400), (4, 3.0, 400), (2, 300.0, 300),
                        (4, 300.0, 400), (3, 0.05, 300)):
        y = rng.integers(0, c, n)
        z = rng.normal(size=(3, c, n)) * scale + 1.5 * scale * (np.arange(c)[:, None] == y)
        z[1] *= -1.0  # anti-informative readout: a < 0
        z[2] += rng.normal(size=(c, 1)) * 5 * scale  # large per-option offsets
        out.append((c, scale, z, y))
    return out


@pytest.mark.parametrize("c, scale, z, y", problems(),
                         ids=[f"C{p[0]}-scale{p[1]}" for p in problems()])
def test_batched_fit_matches_scipy(c, scale, z, y):
    a, off, info = fit_calibration(z, y, return_info=True)
    assert info["converged"].all() and np.all(info["grad_norm"] <= 1e-10)
    assert np.all(off[:, 0] == 0)
    for k in range(z.shape[0]):
        ref, loss = scipy_fit(z[k], y)
        ours = np.r_[a[k], off[k, 1:]]
        assert np.allclose(ours, ref, rtol=0, atol=1e-6 * max(1.0, np.abs(ref).max()))
        assert loss(ours) == pytest.approx(loss(ref), abs=1e-10)
        # held-out scores of the fitted readout agree to 1e-8
        zc = [t[0] * z[k] + np.r_[0.0, t[1:]][:, None] for t in (ours, ref)]
        for metric in ("cross_entropy", "brier", "accuracy"):
            s0, s1 = (readout_scores(v[None], y, metric)[0] for v in zc)
            assert np.abs(s0 - s1).max() < 1e-8


def test_batched_fit_equals_single_fits_and_warm_starts():
    for _, _, z, y in problems():
        a, off = fit_calibration(z, y)
        for k in range(z.shape[0]):
            a1, o1 = fit_calibration(z[k:k + 1], y)
            assert abs(a1[0] - a[k]) <= 1e-9 * max(1.0, abs(a[k]))
            assert np.abs(o1[0] - off[k]).max() <= 1e-9 * max(1.0, np.abs(off[k]).max())
        # warm starts, near and far, in any chunking
        for init in ((a[::-1] + 0.1, off[::-1]), (a + 1e-3, off - 1e-3), (-3 * a, off + 5)):
            a2, o2, info = fit_calibration(z, y, init=init, chunk_elements=1, return_info=True)
            assert info["converged"].all()
            assert np.allclose(a2, a, atol=1e-9 * max(1.0, np.abs(a).max()))
            assert np.allclose(o2, off, atol=1e-9 * max(1.0, np.abs(off).max()))


def test_non_convergence_is_reported(monkeypatch):
    _, _, z, y = problems()[1]
    a, off, info = fit_calibration(z, y, max_iter=1, return_info=True)
    assert not info["converged"].any() and np.all(info["grad_norm"] > 1e-10)
    f = make_set_function(synthetic(), "cross_entropy_calibrated")
    orig = readout.fit_calibration
    monkeypatch.setattr(readout, "fit_calibration",
                        lambda *args, **kw: orig(*args, **{**kw, "max_iter": 0}))
    with pytest.warns(RuntimeWarning, match="did not converge"):
        f.value([0, 1, 2])


@pytest.mark.parametrize("c", [2, 4])
@pytest.mark.parametrize("metric", ["cross_entropy", "brier", "accuracy"])
def test_greedy_with_warm_starts_equals_independent_fits(c, metric):
    """Greedy values (warm-started batched fits) = cold per-set fits = scipy per-set fits."""
    contrib = synthetic(n=300, m=7, c=c, signal=0.8, seed=c)
    f = make_set_function(contrib, metric + "_calibrated")
    for order, values, _ in (greedy_forward(f), greedy_backward(f)):
        cold = [f.value(order[:k]) for k in range(len(order) + 1)]
        assert np.abs(values - cold).max() < 1e-8
        assert np.abs(order_values(f, order) - cold).max() < 1e-8
    # scipy reference for a few sets: fit on one half, score the other, both ways
    y = contrib.labels
    for s in ([3], [0, 4, 5], list(range(7))):
        z = contrib.readout(s).T  # [C, N]
        ref = np.empty(len(y))
        for fit, ev in (f.folds, f.folds[::-1]):
            th, _ = scipy_fit(z[:, fit], y[fit])
            zc = th[0] * z[:, ev] + np.r_[0.0, th[1:]][:, None]
            ref[ev] = readout_scores(zc[None], y[ev], metric)[0]
        assert f.value(s) == pytest.approx(ref.mean(), abs=1e-8)


def test_cold_start_is_one_newton_step_from_the_label_prior():
    """The cold start equals θ₀ − H⁻¹∇ at θ₀ = (0, log π_j/π_0), with ∇ and H computed by
    brute force on the [n, C] layout (independent of the batched closed form)."""
    from infodiv.setfunctions.calibration import _prior_step

    for c, _, z, y in problems():
        n = len(y)
        counts = np.bincount(y, minlength=c).astype(float)
        pi = counts / n
        zs = z - z.max(axis=1, keepdims=True)
        szy = zs[:, y, np.arange(n)].sum(axis=1)
        a, off = _prior_step(zs, szy, counts, np.ones(3), np.zeros((3, c)))
        for k in range(3):
            x = z[k].T                                   # [n, C]
            phi = np.zeros((n, c, c))
            phi[:, :, 0] = x
            phi[:, np.arange(1, c), np.arange(1, c)] = 1.0
            q = np.broadcast_to(pi, (n, c))
            g = np.einsum("nj,njp->p", q - np.eye(c)[y], phi)
            m = np.einsum("nj,njp->np", q, phi)
            h = np.einsum("nj,njp,njr->pr", q, phi, phi) - m.T @ m
            th = np.r_[0.0, np.log(pi[1:] / pi[0])] - np.linalg.solve(h, g)
            assert np.allclose(np.r_[a[k], off[k, 1:]], th, rtol=1e-9, atol=1e-9)


def test_cold_start_keeps_the_default_where_a_class_is_empty():
    from infodiv.setfunctions.calibration import _prior_step

    _, _, z, y = problems()[1]
    y = np.where(y == 3, 0, y)                           # option 3 never the label
    counts = np.bincount(y, minlength=4).astype(float)
    zs = z - z.max(axis=1, keepdims=True)
    a, off = _prior_step(zs, zs[:, y, np.arange(len(y))].sum(axis=1), counts, np.ones(3),
                         np.zeros((3, 4)))
    assert np.all(a == 1.0) and np.all(off == 0.0)
    assert fit_calibration(z, y, return_info=True)[2]["converged"].all()


@pytest.mark.parametrize("calibrated", [False, True])
def test_orders_scores_equal_one_order_at_a_time(calibrated):
    rng = np.random.default_rng(3)
    u, y = rng.normal(size=(150, 7, 3)), rng.integers(0, 3, 150)
    f = readout.ReadoutSetFunction(u, np.zeros(3), y, "accuracy", calibrated=calibrated)
    orders = np.stack([rng.permutation(7) for _ in range(5)])
    batched = f.orders_scores(orders, max_elements=2000)   # several blocks
    assert batched.shape == (5, 8, 150)
    for o, b in zip(orders, batched):
        assert np.array_equal(b, np.stack([f.scores(o[:k]) for k in range(8)]))
