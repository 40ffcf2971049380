"""Exactness and input checks of the ensemble decompositions (estimators.ensemble, .bvc).

Identities are checked per example against independent, naive reference computations (scipy's
log-sum-exp, explicit loops over members and pairs). "To 1e-10" is relative to the size of the
terms: ``|a − b| ≤ 1e-10 · (1 + |scale|)`` — with ±1e4 logits and M·u members the squared terms
reach 1e9–1e10, where float64 rounding alone is ~1e-6 in absolute terms.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.special import logsumexp as sp_lse
from scipy.special import softmax as sp_softmax

from estimators.bvc import bias_variance_covariance
from estimators.ensemble import bias_diversity, paper_eq14
from extraction.contributions import Contributions, Member

TOL = 1e-10
VARIANTS = [("squared", "logit"), ("squared", "probability"), ("cross_entropy", "logit")]
SCALES = ("mean", "sum")
SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

# logits: mostly moderate, with the extremes ±1e4 and tiny values well represented
VALUES = st.one_of(st.floats(-30, 30), st.sampled_from([-1e4, 1e4, 0.0, 1e-300]),
                   st.floats(-1e4, 1e4))


@st.composite
def ensembles(draw, min_m=1, max_m=6):
    n = draw(st.integers(1, 5))
    m = draw(st.integers(min_m, max_m))
    c = draw(st.integers(2, 5))
    u = draw(arrays(np.float64, (n, m, c), elements=VALUES))
    labels = np.array(draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n)))
    with_bias = draw(st.booleans())
    bias = draw(arrays(np.float64, (c,), elements=st.floats(-5, 5))) if with_bias else None
    groups = np.array(draw(st.lists(st.sampled_from(["embed", "attn", "mlp"]),
                                    min_size=m, max_size=m)))
    return u, labels, bias, groups


def close(a, b, scale):
    a, b, scale = np.asarray(a), np.asarray(b), np.abs(np.asarray(scale))
    assert np.all(np.abs(a - b) <= TOL * (1 + scale)), float(np.max(np.abs(a - b)))


def members(u, bias, scale):
    m = u.shape[1]
    b = np.zeros(u.shape[2]) if bias is None else bias
    v = u + b / m
    return m * v if scale == "sum" else v


def reference(u, labels, bias, scale, loss, space):
    """Naive per-example, per-member loops (nats for cross-entropy)."""
    v = members(u, bias, scale)
    n, m, c = v.shape
    out = np.zeros((3, n))
    for i in range(n):
        t = np.eye(c)[labels[i]]
        if loss == "cross_entropy":
            logq = [v[i, j] - sp_lse(v[i, j]) for j in range(m)]
            logqbar = v[i].mean(0) - sp_lse(v[i].mean(0))
            out[0, i] = -logqbar[labels[i]]
            out[1, i] = np.mean([-lq[labels[i]] for lq in logq])
            out[2, i] = np.mean([np.sum(np.exp(logqbar) * (logqbar - lq)) for lq in logq])
        else:
            mem = [sp_softmax(v[i, j]) if space == "probability" else v[i, j] for j in range(m)]
            ens = np.mean(mem, axis=0)
            out[0, i] = np.mean((t - ens) ** 2)
            out[1, i] = np.mean([np.mean((t - x) ** 2) for x in mem])
            out[2, i] = np.mean([np.mean((ens - x) ** 2) for x in mem])
    return out


# ---------------------------------------------------------------------------- Theorem 1
@SETTINGS
@given(ensembles())
def test_krogh_vedelsby_identity_every_variant(data):
    u, labels, bias, groups = data
    for (loss, space), scale in itertools.product(VARIANTS, SCALES):
        r = bias_diversity(u, labels, loss=loss, space=space, scale=scale, bias=bias,
                           base="e")
        size = np.abs(r.bias_examples) + np.abs(r.loss_examples)
        close(r.loss_examples, r.bias_examples - r.diversity_examples, size)   # the identity
        ref = reference(u, labels, bias, scale, loss, space)
        close(r.loss_examples, ref[0], size)                                  # right ensemble
        close(r.bias_examples, ref[1], size)
        close(r.diversity_examples, ref[2], size)
        if loss == "squared":       # a mean of squares: non-negative with no rounding caveat
            assert (r.diversity_examples >= 0).all()
        else:                       # mean KL, computed as Σ q̄ (log q̄ − log q_m)
            assert (r.diversity_examples >= -TOL * (1 + size)).all()


@SETTINGS
@given(ensembles())
def test_cross_entropy_sum_scale_is_the_model(data):
    u, labels, bias, _ = data
    b = np.zeros(u.shape[2]) if bias is None else bias
    z = u.sum(axis=1) + b
    model_ce = sp_lse(z, axis=1) - z[np.arange(len(labels)), labels]
    r = bias_diversity(u, labels, loss="cross_entropy", scale="sum", bias=bias, base="e")
    close(r.loss_examples, model_ce, np.abs(z).max(axis=1))
    bits = bias_diversity(u, labels, loss="cross_entropy", scale="sum", bias=bias)
    close(bits.loss_examples * np.log(2), r.loss_examples, r.loss_examples)
    assert r.units == "nats" and bits.units == "bits"


def test_cross_entropy_extreme_logits_do_not_overflow():
    u = np.array([[[1e4, -1e4, 0.0], [-1e4, 1e4, 5.0], [1e4, 1e4, -1e4]]])
    r = bias_diversity(u, [2], loss="cross_entropy", scale="sum", base="e")
    for x in (r.loss_examples, r.bias_examples, r.diversity_examples):
        assert np.isfinite(x).all()
    # z = (1e4, 1e4, -9995): CE of option 2 is 1e4 + 9995 + log 2
    close(r.loss_examples, [1e4 + 9995 + np.log(2)], 2e4)
    close(r.residual_examples, [0.0], r.bias_examples)


@SETTINGS
@given(ensembles())
def test_group_parts_add_up_to_totals(data):
    u, labels, bias, groups = data
    for (loss, space), scale in itertools.product(VARIANTS, SCALES):
        r = bias_diversity(u, labels, loss=loss, space=space, scale=scale, bias=bias,
                           groups=groups)
        assert sum(g.n_members for g in r.by_group.values()) == u.shape[1]
        close(sum(g.weight for g in r.by_group.values()), 1.0, 1.0)
        close(sum(g.bias_part for g in r.by_group.values()), r.bias, r.bias)
        close(sum(g.diversity_part for g in r.by_group.values()), r.diversity, r.bias)
        per_example = sum(g.weight * g.bias_examples for g in r.by_group.values())
        close(per_example, r.bias_examples, r.bias_examples)
        if scale == "mean" and bias is None:    # a group's bias is its members' mean loss
            for name, g in r.by_group.items():
                alone = bias_diversity(u[:, groups == name], labels, loss=loss, space=space)
                close(g.bias_examples, alone.bias_examples, alone.bias_examples)


@SETTINGS
@given(ensembles(min_m=1, max_m=1))
def test_single_member_has_zero_diversity(data):
    u, labels, bias, groups = data
    for (loss, space), scale in itertools.product(VARIANTS, SCALES):
        r = bias_diversity(u, labels, loss=loss, space=space, scale=scale, bias=bias)
        assert (r.diversity_examples == 0).all()
        close(r.loss_examples, r.bias_examples, r.bias_examples)


@SETTINGS
@given(ensembles(min_m=2), st.randoms(use_true_random=False))
def test_permuting_members_changes_nothing(data, rnd):
    u, labels, bias, groups = data
    perm = list(range(u.shape[1]))
    rnd.shuffle(perm)
    for (loss, space), scale in itertools.product(VARIANTS, SCALES):
        a = bias_diversity(u, labels, loss=loss, space=space, scale=scale, bias=bias,
                           groups=groups)
        b = bias_diversity(u[:, perm], labels, loss=loss, space=space, scale=scale, bias=bias,
                           groups=groups[perm])
        size = np.abs(a.bias_examples) + np.abs(a.loss_examples)
        for f in ("loss_examples", "bias_examples", "diversity_examples"):
            close(getattr(a, f), getattr(b, f), size)
        for name in a.by_group:
            close(a.by_group[name].bias, b.by_group[name].bias, a.bias)


def test_explicit_target_and_default_onehot():
    rng = np.random.default_rng(0)
    u = rng.standard_normal((7, 4, 3))
    y = rng.integers(0, 3, 7)
    default = bias_diversity(u, y)
    explicit = bias_diversity(u, target=np.eye(3)[y])
    np.testing.assert_array_equal(default.loss_examples, explicit.loss_examples)
    flat = bias_diversity(u, target=np.array([2.0, -1.0, 0.5]))
    close(flat.loss_examples, ((np.array([2.0, -1.0, 0.5]) - u.mean(1)) ** 2).mean(1), 10)
    soft = np.full(3, 1 / 3)
    ce = bias_diversity(u, loss="cross_entropy", target=soft, base="e")
    close(ce.loss_examples, sp_lse(u.mean(1), axis=1) - u.mean(1).mean(1), 10)


def test_a_run_is_adapted_by_infodiv_not_read_by_estimators():
    from infodiv.runs import ensemble_arrays

    rng = np.random.default_rng(1)
    n, c = 6, 2
    kinds = ["embed", "attn", "mlp", "attn", "mlp"]
    u = rng.standard_normal((n, len(kinds), c)).astype(np.float32)
    bias = np.array([0.5, -0.25], dtype=np.float32)
    y = rng.integers(0, c, n)
    contrib = Contributions(u, bias, y, u.sum(1) + bias, np.ones((n, len(kinds))),
                            [Member(f"m{i}", k) for i, k in enumerate(kinds)], ["no", "yes"])
    with pytest.raises(TypeError, match="estimators take arrays"):
        bias_diversity(contrib, loss="cross_entropy")  # no duck-typing of a Contributions
    r = bias_diversity(**ensemble_arrays(contrib), loss="cross_entropy", scale="sum", base="e")
    same = bias_diversity(u.astype(np.float64), y, loss="cross_entropy", scale="sum",
                          bias=bias, groups=np.array(kinds), base="e")
    np.testing.assert_allclose(r.loss_examples, same.loss_examples, rtol=0, atol=0)
    assert list(r.by_group) == ["embed", "attn", "mlp"]
    assert r.by_group["attn"].n_members == 2
    z = contrib.logits.astype(np.float64)                 # scale="sum" + bias: the model's CE
    close(r.loss_examples, sp_lse(z, axis=1) - z[np.arange(n), y], 1e-5 / TOL)


def test_results_are_frozen():
    r = bias_diversity(np.ones((2, 2, 2)), [0, 1])
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.loss = 0.0
    with pytest.raises(ValueError):
        r.bias_examples[0] = 1.0


# ---------------------------------------------------------------------------- Eq. 14
@SETTINGS
@given(ensembles())
def test_paper_eq14_reports_its_gap(data):
    u, labels, bias, _ = data
    for scale in SCALES:
        r = paper_eq14(u, labels, scale=scale, bias=bias)
        v = members(u, bias, scale)
        n, m, c = v.shape
        t = np.eye(c)[labels]
        cbar = sp_softmax(v.mean(1), axis=1)
        q = sp_softmax(v, axis=2)
        close(r.mse_examples, ((t - cbar) ** 2).mean(1), 1)
        close(r.bias_examples, ((t[:, None] - q) ** 2).mean(2).mean(1), 1)
        close(r.diversity_examples, r.bias_examples - r.mse_examples, 1)
        close(r.ambiguity_examples, ((cbar[:, None] - q) ** 2).mean(2).mean(1), 1)
        # gap = (2/C) <t − c, q̄ − c>: Eq. 14 is exact only when softmax(v̄) = mean_m softmax(v_m)
        close(r.gap_examples, 2 / c * ((t - cbar) * (q.mean(1) - cbar)).sum(1), 1)


def test_paper_eq14_is_not_an_identity_in_general():
    rng = np.random.default_rng(3)
    r = paper_eq14(rng.standard_normal((50, 5, 4)) * 3, rng.integers(0, 4, 50))
    assert np.abs(r.gap_examples).max() > 1e-3


# ---------------------------------------------------------------------------- Theorem 3
def naive_bvc_options(v, t):
    n, m, c = v.shape
    e = v - t[:, None]
    cov = np.zeros(n)
    for i in range(n):
        if m > 1:
            pairs = [np.mean((e[i, a] - e[i, a].mean()) * (e[i, b] - e[i, b].mean()))
                     for a in range(m) for b in range(m) if a != b]
            cov[i] = np.mean(pairs)
    return e.mean(2).mean(1), e.var(2).mean(1), cov


@SETTINGS
@given(ensembles())
def test_bias_variance_covariance_is_exact(data):
    u, labels, bias, _ = data
    for scale in SCALES:
        r = bias_variance_covariance(u, labels, scale=scale, bias=bias)
        bd = bias_diversity(u, labels, scale=scale, bias=bias)
        size = np.abs(bd.bias_examples) + np.abs(bd.loss_examples)
        close(r.mse_examples, bd.loss_examples, size)                    # the ensemble MSE
        close(r.options.total, r.mse_examples, size)                     # sums to it
        v = members(u, bias, scale)
        t = np.eye(u.shape[2])[labels]
        avg, var, cov = naive_bvc_options(v, t)
        close(r.options.average_bias, avg, np.sqrt(size))
        close(r.options.variance, var, size)
        close(r.options.covariance, cov, size)
        close(r.examples.total.mean(), r.mse, size.max())                # Ueda–Nakano form
        e = v - t[:, None]
        close(r.examples.variance, e.var(0).mean(0), size.max())


@SETTINGS
@given(ensembles())
def test_eq11_as_printed_and_its_dropped_term(data):
    u, labels, bias, _ = data
    for scale in SCALES:
        r = bias_variance_covariance(u, labels, scale=scale, bias=bias).eq11
        bd = bias_diversity(u, labels, scale=scale, bias=bias)
        size = np.abs(bd.bias_examples) + np.abs(bd.loss_examples)
        close(r.true_bias, bd.bias_examples, size)
        close(r.true_diversity, bd.diversity_examples, size)
        close(r.diversity, r.true_diversity, size)                   # Diversity line: exact
        close(r.true_bias - r.bias, r.dropped, size)                 # Bias line: drops this
        t = np.eye(u.shape[2])[labels]
        vbar = members(u, bias, scale).mean(1)
        tc, vc = t - t.mean(1, keepdims=True), vbar - vbar.mean(1, keepdims=True)
        close(r.dropped, (tc ** 2).mean(1) - 2 * (tc * vc).mean(1), size)


@SETTINGS
@given(ensembles(), st.floats(-10, 10))
def test_eq11_holds_for_a_target_constant_over_options(data, level):
    u, labels, bias, _ = data
    c = u.shape[2]
    r = bias_variance_covariance(u, np.full(c, level), bias=bias)
    size = np.abs(r.eq11.true_bias) + 1
    close(r.eq11.dropped, 0.0, size)
    close(r.eq11.bias, r.eq11.true_bias, size)
    close(r.eq11.bias - r.eq11.diversity, r.mse_examples, size)


def test_eq11_fails_for_a_onehot_target():
    rng = np.random.default_rng(4)
    u = rng.standard_normal((40, 6, 3))
    r = bias_variance_covariance(u, rng.integers(0, 3, 40))
    assert np.abs(r.eq11.dropped).max() > 1e-2
    close(r.eq11.bias + r.eq11.dropped - r.eq11.diversity, r.mse_examples, 10)


def test_bvc_single_member_has_no_covariance_term():
    r = bias_variance_covariance(np.arange(6.0).reshape(2, 1, 3), [0, 2])
    assert (r.options.covariance == 0).all()
    close(r.options.total, r.mse_examples, 10)


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("call", [bias_diversity, paper_eq14, bias_variance_covariance])
def test_bad_input_is_named(call):
    good = np.zeros((3, 2, 2))
    with pytest.raises(ValueError, match="u has 3 samples but labels has 2"):
        call(good, np.array([0, 1]))
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 2\).*\[0, 2\]"):
        call(good, np.array([0, 1, 2]))
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 2\).*\[-1, 0\]"):
        call(good, np.array([0, -1, 0]))
    bad = good.copy()
    bad[0, 0, 0] = np.nan
    bad[1, 1, 1] = np.inf
    with pytest.raises(ValueError, match="u contains 1 NaN and 1 infinite"):
        call(bad, np.array([0, 1, 0]))
    with pytest.raises(ValueError, match="M = 0 members"):
        call(np.zeros((3, 0, 2)), np.array([0, 1, 0]))
    with pytest.raises(ValueError, match="3-D array"):
        call(np.zeros((3, 2)), np.array([0, 1, 0]))


def test_bad_options_and_targets():
    u, y = np.zeros((3, 2, 2)), np.array([0, 1, 0])
    for kw, msg in [({"loss": "hinge"}, "loss must be one of"),
                    ({"space": "prob"}, "space must be one of"),
                    ({"scale": "max"}, "scale must be one of"),
                    ({"loss": "cross_entropy", "space": "probability"}, "squared loss only"),
                    ({"target": np.zeros(3)}, r"target must have shape \[C\]"),
                    ({"loss": "cross_entropy", "target": np.array([0.5, 0.6])},
                     "probability vector"),
                    ({"groups": ["a", "b", "c"]}, "one label per member"),
                    ({"bias": np.zeros(5)}, "bias must have shape")]:
        with pytest.raises(ValueError, match=msg):
            bias_diversity(u, y, **kw)
    with pytest.raises(ValueError, match="labels are required"):
        bias_diversity(u)
    with pytest.raises(TypeError, match="integer labels"):
        bias_diversity(u, np.array([0.0, 1.0, 0.0]))
