"""Every number the reports print, against an independent naive computation.

A small synthetic run goes through the curves report and the decomposition report; each
figure is recomputed here from its definition with plain loops over ``f.value`` calls, numpy
and direct ``estimators`` calls, never through the code under test.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from scipy import stats

from estimators import mutual_information, total_correlation
from estimators.groundtruth import capacity
from extraction.contributions import Contributions, Member
from infodiv.claims import claim_names
from infodiv.curves import layer_curves
from infodiv.information import error_bounds, member_variables
from infodiv.selection import greedy_stability, subset_selection
from infodiv.setfunctions import make_set_function
from infodiv.study import StudySettings
from infodiv.study.curves import curves_stage
from infodiv.study.decompose import decomposition_report

M, N, C = 8, 360, 3


def synthetic_run(n=N, m=M, c=C, seed=0, bias=True, ties=False) -> Contributions:
    """Members with signal of varied strength on the label, a correlated pair, a bias."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    mu = np.linspace(1.0, 0.1, m)
    u = mu[None, :, None] * np.eye(c)[y][:, None, :] + rng.standard_normal((n, m, c))
    u[:, 3] += 0.7 * u[:, 1]  # a redundant pair
    if ties:
        u = np.round(u * 2) / 2
    b = rng.normal(size=c) * 0.3 if bias else np.zeros(c)
    members = [Member("embed", "embed", -1, junction=True)] + [
        Member(f"L{i}.{'attn' if i % 2 == 0 else 'mlp'}", "attn" if i % 2 == 0 else "mlp", i)
        for i in range(m - 1)]
    u = u.astype(np.float32)
    return Contributions(u, b.astype(np.float32), y, u.sum(axis=1) + b.astype(np.float32),
                         np.ones((n, m), dtype=np.float32), members,
                         [f"o{j}" for j in range(c)], None, {"model": "synthetic", "task": "t"})


@pytest.fixture(scope="module")
def run():
    return synthetic_run()


@pytest.fixture(scope="module")
def curves_doc(run, tmp_path_factory):
    out = tmp_path_factory.mktemp("curves")
    s = StudySettings().with_settings(objectives=("accuracy", "mi_gaussian"),
                                      claims=claim_names("curve"), n_curve_orders=40, n_triples=20,
                                      n_bootstrap=20, power_replicates=2, stability=3,
                                      graph=False, seed=0)
    doc = curves_stage(run, out, s)
    assert json.loads((out / "report.json").read_text()) == doc
    return doc, (out / "report.md").read_text()


@pytest.fixture(scope="module")
def decomposition_doc(run, tmp_path_factory):
    out = tmp_path_factory.mktemp("decomp")
    doc = decomposition_report(run, out, info_methods=("gaussian",))
    return doc, (out / "decompositions.md").read_text()


def naive_accuracy(run, members) -> float:
    """Accuracy of argmax(Σ_{m∈S} u_m + b), ties split evenly."""
    z = run.u[:, list(members)].astype(np.float64).sum(axis=1) + run.bias
    top = z >= z.max(axis=1, keepdims=True)
    return float(np.mean(top[np.arange(len(z)), run.labels] / top.sum(axis=1)))


def naive_label_entropy(labels) -> float:
    p = np.bincount(labels) / len(labels)
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


# ---------------------------------------------------------------------------- curves report
@pytest.mark.parametrize("objective", ["accuracy", "mi_gaussian"])
def test_curvature_equals_its_definition(run, curves_doc, objective):
    doc, _ = curves_doc
    res = doc["objectives"][objective]
    f = make_set_function(run, objective)
    full = list(range(M))
    singles = np.array([f.value([j]) - f.value([]) for j in range(M)])
    last = np.array([f.value(full) - f.value([i for i in full if i != j]) for j in range(M)])
    greedy = res["curves"]["curves"]["greedy"]
    order, values = greedy["order"], np.asarray(greedy["values_in_sample"])
    path = [1.0 - (values[t + 1] - values[t]) / singles[j] if singles[j] > 0 else None
            for t, j in enumerate(order)]
    got = res["point"]["curvature"]
    assert got["greedy_path"] == pytest.approx(path, abs=1e-9)
    ok = singles > 0
    assert got["total"] == pytest.approx(1.0 - np.min(last[ok] / singles[ok]), abs=1e-9)


@pytest.mark.parametrize("objective", ["accuracy", "mi_gaussian"])
def test_growth_law_extrapolation_errors_equal_naive_refits(curves_doc, objective):
    doc, _ = curves_doc
    res = doc["objectives"][objective]
    y = np.asarray(res["curves"]["curves"]["random"]["values"])[1:]
    k = np.arange(1, M + 1, dtype=float)
    h = M // 2
    for law, feature in (("linear", k), ("log", np.log(k))):
        coef = np.polyfit(feature[:h], y[:h], 1)
        rmse = np.sqrt(np.mean((np.polyval(coef, feature[h:]) - y[h:]) ** 2))
        assert rmse > 1e-6
        assert res["point"]["fits"][law]["extrapolation_rmse"] == pytest.approx(rmse, rel=1e-9)
        full = np.polyfit(feature, y, 1)
        rss = float(((np.polyval(full, feature) - y) ** 2).sum())
        aicc = M * np.log(rss / M) + 4 + 12 / (M - 3)
        assert res["point"]["fits"][law]["aicc"] == pytest.approx(aicc, rel=1e-9)


@pytest.mark.parametrize("objective", ["accuracy", "mi_gaussian"])
def test_gain_slopes_with_and_without_g1_equal_ols(run, objective):
    """:func:`infodiv.submodularity.gain_slope` (the diminishing-returns statistic) against
    np.polyfit of the random-order gain profile, with and without g(1)."""
    from infodiv.submodularity import gain_slope

    f = make_set_function(run, objective)
    lc = layer_curves(f, orders=("random",), n_permutations=40, random_state=0)
    g = np.asarray(lc["random"].extra["gain"])
    k = np.arange(1, M + 1, dtype=float)
    slope, slope2 = np.polyfit(k, g, 1)[0], np.polyfit(k[1:], g[1:], 1)[0]
    assert abs(slope - slope2) > 1e-6  # the two fits differ on this run
    sl = gain_slope(np.asarray(lc["random"].samples), f.sign(), n_bootstrap=50)
    assert sl["slope"] == pytest.approx(f.sign() * slope, rel=1e-9, abs=1e-12)
    assert sl["from_k2"]["slope"] == pytest.approx(f.sign() * slope2, rel=1e-9, abs=1e-12)


def test_theorem7_premise_ratio_and_terms_equal_estimators(run):
    from infodiv.information import order_terms

    x = member_variables(run.u)
    info = order_terms(x, run.labels, np.arange(M), [1, 2, 4, M], n_classes=C,
                       method="gaussian", random_state=0)
    for i, s in enumerate(info["sizes"]):
        if s < 2:
            continue
        tc = total_correlation(x[:, :s], method="gaussian", random_state=0)
        ctc = total_correlation(x[:, :s], given=run.labels, method="gaussian", random_state=0)
        assert info["redundancy"][i] == pytest.approx(tc, abs=1e-5)
        assert info["conditional_redundancy"][i] == pytest.approx(ctc, abs=1e-5)
        assert info["premise_tc_given_y_over_tc"][i] == pytest.approx(ctc / tc, rel=1e-4)
    # the members share Y, so TC(U) > TC(U|Y) here: the ratio is below 1
    assert 0 < info["premise_tc_given_y_over_tc"][-1] < 1


def test_eq12_error_attachment_is_the_error_of_the_summed_readout(run):
    lc = layer_curves(run, objective="mi_gaussian", orders=("prefix", "greedy"),
                      cross_fit=False)
    h_y = naive_label_entropy(run.labels)
    for name in ("prefix", "greedy"):
        cur = lc[name]
        errors = [1.0 - naive_accuracy(run, cur.order[:k]) for k in range(M + 1)]
        assert cur.extra["error_raw"] == pytest.approx(errors, abs=1e-12)
        assert cur.extra["bound_upper"] == pytest.approx((h_y - cur.values) / 2, abs=1e-12)
        assert cur.extra["bound_lower"] == pytest.approx((h_y - cur.values - 1) / np.log2(C),
                                                         abs=1e-12)


# ---------------------------------------------------------------------------- Eq. 12
def test_eq12_bounds_bracket_the_bayes_error_at_known_information():
    for a in (0.3, 1.0, 2.0):
        info_bits = capacity(a) / np.log(2)  # I(X; Y) for X = a(2Y - 1) + N(0, 1)
        bayes = stats.norm.cdf(-a)
        lower, upper = error_bounds(info_bits, 1.0, 2)
        assert lower == pytest.approx((1.0 - info_bits - 1.0) / 1.0)
        assert upper == pytest.approx((1.0 - info_bits) / 2.0)
        assert lower <= bayes <= upper
    # measured error of the best classifier (sign of x) on a sample, with the estimated I
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 4000)
    x = 1.0 * (2 * y - 1) + rng.standard_normal(4000)
    est = mutual_information(x, y, method="gaussian")
    lower, upper = error_bounds(est, naive_label_entropy(y), 2)
    assert lower <= np.mean((x > 0) != y) <= upper


def test_decomposition_report_bounds_and_terms_equal_naive(run, decomposition_doc):
    doc, md = decomposition_doc
    info = doc["information"]
    h_y = naive_label_entropy(run.labels)
    assert info["H(Y)_bits"] == pytest.approx(h_y, abs=1e-12)
    g = info["gaussian"]
    x = member_variables(run.u).reshape(N, -1)
    assert g["joint"] == pytest.approx(mutual_information(x, run.labels, method="gaussian"),
                                       abs=1e-5)
    lower, upper = (h_y - g["joint"] - 1) / np.log2(C), (h_y - g["joint"]) / 2
    assert g["error_lower_bound"] == pytest.approx(lower, abs=1e-12)
    assert g["error_upper_bound"] == pytest.approx(upper, abs=1e-12)
    assert g["error_lower_bound"] < g["error_upper_bound"]
    assert f"| gaussian | bound_lower | {lower:.3g} |" in md
    assert f"| gaussian | bound_upper | {upper:.3g} |" in md
    assert "not valid for a discrete label" in md   # a model-based number says so
    assert info["model_error"] == pytest.approx(1 - naive_accuracy(run, range(M)), abs=1e-12)


def test_decomposition_report_bvc_uses_the_constant_member(run, decomposition_doc):
    doc, _ = decomposition_doc
    z = run.u.astype(np.float64).sum(axis=1) + run.bias
    mse = float(np.mean((np.eye(C)[run.labels] - z / M) ** 2))  # v̄ = z / M (scale="mean")
    bvc = doc["ensemble"]["bias_variance_covariance"]
    assert bvc["mse"] == pytest.approx(mse, abs=1e-10)
    row = next(r for r in doc["ensemble"]["bias_diversity"]
               if (r["loss"], r["space"], r["scale"]) == ("squared", "logit", "mean"))
    assert row["ensemble_loss"] == pytest.approx(mse, abs=1e-10)


@pytest.mark.slow
def test_decompose_info_method_none_skips(run, tmp_path):
    from infodiv.cli import main

    run.save(tmp_path / "run")
    assert main(["decompose", str(tmp_path / "run"), "--info-method", "none",
                 "--out", str(tmp_path / "d")]) == 0
    doc = json.loads((tmp_path / "d" / "decompositions.json").read_text())
    assert doc["information"] == {}
    assert "Information decomposition" not in (tmp_path / "d" / "decompositions.md").read_text()


# ---------------------------------------------------------------------------- selection
def test_best_of_random_is_chosen_on_the_selection_half_only(run):
    from infodiv.curves import _cross_fit_split

    n_random, seed = 12, 3
    res = subset_selection(run, objective="accuracy", n_random=n_random, random_state=seed)
    f = make_set_function(run, "accuracy")
    rng = np.random.default_rng(seed)  # the documented seeding of subset_selection
    a, b = _cross_fit_split(f, rng.integers(2**32))
    perms = [rng.permutation(M) for _ in range(n_random)]

    def held_out(sel, ev, k, choose_on):
        f_sel, f_ev = f.restrict(sel), f.restrict(ev)
        judge = f_sel if choose_on == "selection" else f_ev
        best = max(perms, key=lambda p: judge.value(p[:k]))  # first best, as np.argmax
        return f_ev.value(best[:k])

    naive = [(held_out(a, b, k, "selection") + held_out(b, a, k, "selection")) / 2
             for k in range(M + 1)]
    optimistic = [(held_out(a, b, k, "scoring") + held_out(b, a, k, "scoring")) / 2
                  for k in range(M + 1)]
    assert res["best_random"] == pytest.approx(naive, abs=1e-12)
    # choosing on the scoring half would be optimistic (and differ) at some budget
    assert np.max(np.subtract(optimistic, naive)) > 0.01


def naive_kendall_tau(order_a, order_b) -> float:
    """Kendall's tau-a of the member ranks (position of each member) of two orders."""
    ra, rb = np.argsort(order_a), np.argsort(order_b)
    s = sum(np.sign(ra[i] - ra[j]) * np.sign(rb[i] - rb[j])
            for i, j in itertools.combinations(range(len(ra)), 2))
    return s / (len(ra) * (len(ra) - 1) / 2)


def test_greedy_stability_kendall_tau_is_on_ranks(run):
    st = greedy_stability(run, objective="cross_entropy", n_bootstrap=6, random_state=2)
    ref = st["reference_order"]
    naive = [naive_kendall_tau(ref, o) for o in st["orders"]]
    assert st["kendall_tau"] == pytest.approx(naive, abs=1e-12)
    assert st["kendall_tau_mean"] == pytest.approx(np.mean(naive), abs=1e-12)


# ---------------------------------------------------------------------------- tied data
@pytest.mark.parametrize("objective, method", [("mi_copula", "copula"),
                                               ("mi_gaussian", "gaussian")])
def test_copula_and_gaussian_curves_equal_estimators_on_tied_data(objective, method):
    run = synthetic_run(n=300, m=5, ties=True)
    x = member_variables(run.u)
    assert np.unique(x[:, 0, 0]).size < 60  # heavily tied
    values = layer_curves(run, objective=objective, orders=("prefix",))["prefix"].values
    ref = [mutual_information(x[:, :k].reshape(300, -1), run.labels, method=method,
                              random_state=0) for k in range(1, 6)]
    assert values[1:] == pytest.approx(ref, abs=1e-5)  # estimators jitters by 1e-6
