"""Flags, subsampling, depth estimand, junction correlations and the engine's verdict
records."""

import json

import numpy as np
import pytest
from joblib import parallel_config

from extraction.contributions import Contributions, Member
from infodiv.claims import claim_names, get_claims
from infodiv.inference import (
    DepthPipeline,
    dependent_ensemble,
    depth_curves,
    fisher_z_average,
    junction_correlations,
    subsample_extrapolation,
    two_level_bootstrap,
)
from infodiv.inference.claim import Design
from infodiv.inference.engine import ClaimStatistics, evaluate
from infodiv.inference.flags import (
    Flag,
    check_bounds,
    check_dimension,
    check_in_sample,
    check_information,
    flags_from_curve_notes,
    summary_lines,
)
from infodiv.inference.subsampling import extrapolate_inverse_n
from infodiv.reports.curves_md import record_line
from infodiv.tables import fisher_z_mean


def test_flags_fire_exactly_where_the_number_is_impossible_or_unreliable():
    assert check_information([0.2, 0.9], 1.0, "I") == []
    (fl,) = check_information([0.2, 8.41], 1.0, "head-level I")
    assert fl.code == "information_exceeds_entropy" and fl.value == 8.41 and "8.41" in fl.message
    assert check_bounds(-0.3, 0.4, "ok") == []          # a negative lower bound is only vacuous
    (fl,) = check_bounds(-1.79, -0.40, "SST-2 n=200")
    assert fl.code == "bound_outside_unit_interval" and fl.value == pytest.approx(-0.40)
    assert "1 of 2" in fl.message                        # the upper bound < 0: I > H(Y)
    assert check_bounds(1.2, 0.9, "x")[0].code == "bound_outside_unit_interval"
    labels = np.repeat([0, 1], [40, 60])
    assert check_dimension(19, labels, "D") == []
    (fl,) = check_dimension(20, labels, "D")          # D >= 40 / 2
    assert fl.code == "dimension_too_large" and fl.threshold == 20
    assert check_in_sample(True, "greedy") == []
    assert check_in_sample(False, "greedy", "one class")[0].code == "in_sample_fallback"
    notes = ["greedy: cross-fitting impossible (singular); the curve is in-sample", "other"]
    assert [f.code for f in flags_from_curve_notes(notes, "curves")] == ["in_sample_fallback"]
    lines = summary_lines([fl, fl])
    assert lines[0].startswith("Flags (2): dimension_too_large ×2") and len(lines) == 3
    assert summary_lines([]) == ["Flags: none."]
    with pytest.raises(ValueError, match="unknown flag code"):
        Flag("nope", "x", "y")


def test_inverse_n_extrapolation_recovers_a_known_bias_law():
    ns = np.array([800, 400, 200])
    theta, b = extrapolate_inverse_n(ns, 0.43 + 150.0 / ns)
    assert theta == pytest.approx(0.43) and b == pytest.approx(150.0)


def test_subsampling_levels_and_interval_on_a_biased_statistic():
    run = dependent_ensemble(400, 4, signal=0.5, rho=0.3, random_state=4)

    def plug_in_variance(r):  # biased by a factor (n - 1) / n: theta_n = s2 - s2 / n
        x = r.u[:, 0, 0].astype(np.float64)
        return float(np.mean((x - x.mean()) ** 2))

    res = subsample_extrapolation(run, plug_in_variance, n_subsamples=4, n_bootstrap=60,
                                  random_state=0)
    assert res["n"] == [400, 200, 100]
    assert res["values"][0] == pytest.approx(plug_in_variance(run))
    unbiased = float(np.var(run.u[:, 0, 0].astype(np.float64), ddof=1))
    assert res["ci"][0] < res["extrapolated"] < res["ci"][1]
    assert abs(res["extrapolated"] - unbiased) < 0.1 * unbiased
    with pytest.raises(ValueError, match="fractions"):
        subsample_extrapolation(run, plug_in_variance, fractions=(1.0,))


def _lens_run(n=120, m=5, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    u = (rng.normal(size=(n, m, 2)) + 0.8 * np.eye(2)[y][:, None, :]).astype(np.float32)
    scale = rng.uniform(0.5, 2.0, (n, m)).astype(np.float32)
    members = [Member("embed", "embed")] + [Member(f"L{i}", "attn", i) for i in range(m - 1)]
    return Contributions(u, np.zeros(2, np.float32), y, u.sum(1), scale, members, ["a", "b"])


def test_depth_curves_name_truncated_model_and_direct_effect_apart_and_match_by_hand():
    run = _lens_run()
    d = depth_curves(run)
    assert set(d["labels"]) == {"truncated_model", "member_subsets"}
    assert "truncated" in d["labels"]["truncated_model"]
    assert "direct effect" in d["labels"]["member_subsets"]
    u, s, y = run.u.astype(np.float64), run.scale.astype(np.float64), run.labels
    for j, k in enumerate(d["k"]):
        fixed = u[:, :k].sum(axis=1)
        lens = (s[:, -1] / s[:, k - 1])[:, None] * fixed
        assert d["member_subsets"]["accuracy"][j] == pytest.approx(np.mean(fixed.argmax(1) == y))
        assert d["truncated_model"]["accuracy"][j] == pytest.approx(np.mean(lens.argmax(1) == y))
        q = np.exp(lens - lens.max(1, keepdims=True))
        ce = -np.log2(q[np.arange(len(y)), y] / q.sum(1)).mean()
        assert d["truncated_model"]["cross_entropy"][j] == pytest.approx(ce, rel=1e-6)
    boot = two_level_bootstrap(run, DepthPipeline("cross_entropy"), n_bootstrap=30, n_mc=2,
                               progress=False)
    assert boot["truncated_model_curve"].value.shape == (run.n_members,)
    # at the last junction the two readouts coincide (scale_M / scale_M = 1)
    assert boot["truncated_minus_subsets"].value[-1] == pytest.approx(0.0, abs=1e-9)


def test_junction_correlations_bootstrap_recomputes_series_and_leaves_last_points_out():
    runs = {t: dependent_ensemble(150, 9, signal=0.5, rho=0.3, random_state=t) for t in (1, 2)}
    res = {t: junction_correlations(r, variants=("logit/mean", "paper_eq14/mean"),
                                    measures=("diversity",), methods=("pearson",),
                                    leave_last=(1,), n_bootstrap=30, random_state=0)
           for t, r in runs.items()}
    rows = res[1]["rows"]
    assert {(r["variant"], r["left_out"]) for r in rows} == {
        ("logit/mean", 0), ("logit/mean", 1), ("paper_eq14/mean", 0), ("paper_eq14/mean", 1)}
    full = next(r for r in rows if r["variant"] == "logit/mean" and r["left_out"] == 0)
    assert full["n_points"] == 9 and 0 < full["p_bootstrap"] <= 1
    from scipy import stats

    from infodiv.junctions import junction_curves

    jc = junction_curves(runs[1], space="logit", scale="mean")
    assert full["r"] == pytest.approx(stats.pearsonr(jc.accuracy, jc.diversity)[0], abs=1e-12)
    drop1 = next(r for r in rows if r["variant"] == "logit/mean" and r["left_out"] == 1)
    assert drop1["r"] == pytest.approx(stats.pearsonr(jc.accuracy[:-1], jc.diversity[:-1])[0],
                                       abs=1e-12)
    sp = junction_correlations(runs[1], variants=("paper_eq14/mean",), measures=("mse",),
                               methods=("spearman",), leave_last=(), n_bootstrap=20)["rows"][0]
    eq14 = junction_curves(runs[1], space="paper_eq14", scale="mean")
    assert sp["r"] == pytest.approx(stats.spearmanr(eq14.accuracy, eq14.mse)[0], abs=1e-12)
    dist = res[1]["replicates"]["logit/mean|diversity|pearson|0"]
    assert dist.shape == (30,) and np.std(dist) > 0          # series recomputed per replicate
    assert full["ci"][0] <= np.median(dist) <= full["ci"][1]
    avg = fisher_z_average(res, "logit/mean", "diversity")
    rs = [next(r["r"] for r in res[t]["rows"] if r["variant"] == "logit/mean"
               and r["left_out"] == 0) for t in res]
    assert avg["r"] == pytest.approx(fisher_z_mean(rs, [9, 9]))
    assert avg["ci"][0] <= avg["r"] <= avg["ci"][1] and avg["n_tasks"] == 2
    with pytest.raises(ValueError, match="unknown variants"):
        junction_correlations(runs[1], variants=("nope",))


def test_bootstrap_is_seeded_independent_of_n_jobs_and_counts_failures():
    run = dependent_ensemble(120, 4, signal=0.5, random_state=0)
    pipe = ClaimStatistics(get_claims(["diminishing_returns", "dr_mean_difference_positive"]),
                           Design("accuracy", n_orders=3, n_triples=4))
    a = two_level_bootstrap(run, pipe, n_bootstrap=20, n_mc=2, random_state=3, progress=False)
    with parallel_config(backend="threading"):
        b = two_level_bootstrap(run, pipe, n_bootstrap=20, n_mc=2, random_state=3, n_jobs=2,
                                progress=False)
    for name in ("diminishing_returns", "dr_mean_difference_positive"):
        np.testing.assert_array_equal(a[name].distribution, b[name].distribution)
        assert np.std(a[name].distribution) > 0

    def flaky(r, rng):
        if r.labels[:3].sum() == 0:
            raise ValueError("singular")
        return {"mean_u": float(r.u.mean())}

    res = two_level_bootstrap(run, flaky, n_bootstrap=40, n_mc=2, random_state=0,
                              stratify=False, progress=False)
    est = res["mean_u"]
    assert est.n_failed == len(res.errors) == int(np.isnan(est.distribution).sum())
    with pytest.raises(ValueError, match="n_bootstrap"):
        two_level_bootstrap(run, pipe, n_bootstrap=5)


#: the words of each surrogate kind in the claims' matched case
CLAIMS_KIND_WORDS = {"conditionally_independent": "permuted independently within each class",
                     "planted_synergy": "planted synergistic pair",
                     "planted_redundancy": "planted redundancy"}


def test_engine_records_are_inferential_with_nulls_power_and_flags():
    """The curve claims' records on a small run: every scalar record carries the example
    interval, the label null, the null-corrected value, p and the Monte-Carlo error apart,
    the power on its matched surrogate and the shuffled-label rate; the violations record
    summarises its chains; all of it is JSON and the report's markdown line prints it."""
    run = dependent_ensemble(200, 5, signal=0.5, rho=0.3, random_state=2)
    out = evaluate(run, get_claims(claim_names("curve")),
                   Design("accuracy", n_orders=3, n_triples=6),
                   n_bootstrap=20, n_permutations=20, n_mc=2, n_power=2, n_power_bootstrap=20)
    recs = out["records"]
    assert set(recs) == set(claim_names("curve")) and out["n_failed"] == 0
    kinds = {"diminishing_returns": "conditionally_independent",
             "dr_mean_difference_positive": "conditionally_independent",
             "violations": "planted_synergy", "diversity_effect": "planted_redundancy"}
    for name, rec in recs.items():
        doc = json.loads(json.dumps(rec.to_dict()))
        assert rec.power["n"] == rec.false_positive["n"] == 2, name
        assert rec.n_bootstrap == 20 and rec.n_permutations == 20 and rec.n_mc == 2
        assert rec.matched_case and CLAIMS_KIND_WORDS[kinds[name]] in rec.matched_case, name
        line = record_line(name, doc)
        assert line.startswith(f"- **{name.replace('_', ' ')}**: {doc['text']}")
        if name == "violations":
            assert rec.interval is None and rec.extra["n_triples"] == 6
            assert 0 <= rec.estimate <= 1 and 1 / 21 <= rec.p <= 1
            continue
        assert rec.interval[0] <= rec.estimate <= rec.interval[1]
        assert rec.null_interval[0] <= rec.null_mean <= rec.null_interval[1]
        assert rec.corrected == pytest.approx(rec.estimate - rec.null_mean)
        assert 1 / 21 <= rec.p <= 1 and rec.mc_error >= 0
        assert "example bootstrap" in rec.interval_method
        assert "null-corrected" in line and "Monte-Carlo error" in line
    assert all(isinstance(f, dict) and "code" in f for r in recs.values() for f in r.flags)


def test_centred_interval_removes_the_resampling_bias_of_an_information_estimate():
    from infodiv.inference.information_terms import ModelBasedTerms as InformationPipeline

    run = dependent_ensemble(120, 12, signal=0.3, rho=0.4, random_state=9)
    kw = dict(n_bootstrap=40, n_mc=2, random_state=0, progress=False)
    plain = two_level_bootstrap(run, InformationPipeline(), **kw)["joint"]
    centred = two_level_bootstrap(run, InformationPipeline(), interval="centred", **kw)["joint"]
    assert plain.bootstrap_bias > 0.2                     # duplicated rows inflate I
    assert not plain.ci[0] <= plain.value <= plain.ci[1]  # a percentile CI can miss it
    assert centred.ci[0] <= centred.value <= centred.ci[1]
    assert centred.ci[1] - centred.ci[0] == pytest.approx(plain.ci[1] - plain.ci[0])
    assert centred.to_dict()["interval"].startswith("centred")
    with pytest.raises(ValueError, match="interval"):
        two_level_bootstrap(run, InformationPipeline(), interval="bca", **kw)
