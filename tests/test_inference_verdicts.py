"""Verdicts survive their null and carry their power; library intervals resample examples
(issue 9, the library / defaults half).

Judged over seeded replicates with binomial tolerances: a coverage floor is the nominal rate
minus two binomial standard errors (at most 0.90), a false-positive ceiling 0.05 plus two.
"""

import numpy as np
import pytest
from _binomial import ceiling

from infodiv.curves import order_scores, random_order_values
from infodiv.inference import (
    conditionally_independent,
    curve_inference,
    dependent_ensemble,
    planted_synergy,
    shuffled_labels,
)
from infodiv.inference.verdicts import NullReference, decide, verdict_docs
from infodiv.setfunctions import make_set_function
from infodiv.submodularity import dr_tests, gain_slope, submodularity_report


def covers(ci):
    return ci[0] <= 0 <= ci[1]


def floor(p, n):
    return min(0.90, p - 2 * np.sqrt(p * (1 - p) / n))


def test_library_intervals_resample_examples_and_cover_zero_under_shuffled_labels():
    """submodularity_report without the inference engine: the g(k) slope (k >= 1, k >= 2) and
    DR mean intervals are the two-level example bootstrap and cover 0 in >= 90% of 20
    shuffled-label replicates; the BH-significant violation rate averages <= 5%; the
    orders-only intervals (``ci_mc``), which ignore the examples, cover far less often."""
    n, hits, mc_hits, sig = 20, np.zeros(3), 0, []
    for r in range(n):
        run = shuffled_labels(dependent_ensemble(200, 6, signal=0.5, rho=0.4, random_state=r),
                              random_state=r)
        rep = submodularity_report(run, objective="accuracy", n_triples=12, n_bootstrap=200,
                                   n_permutations=30, info_method=None, random_state=r)
        gs, dr = rep.gain_slope, rep.dr
        hits += [covers(gs["ci"]), covers(gs["from_k2"]["ci"]), covers(dr["mean_difference_ci"])]
        mc_hits += covers(gs["ci_mc"])
        sig.append(dr["significant_violation_rate"])
    assert (hits / n >= floor(0.95, n)).all(), hits
    assert np.mean(sig) <= 0.05
    assert mc_hits < hits[0]


def test_mc_fields_exist_and_are_narrower_than_the_inferential_ones_at_real_scale():
    """61 members, 872 examples (the SmolLM2/SST-2 shape): the Monte-Carlo error of the order
    or triple average is much narrower than the example-resampled interval."""
    run = dependent_ensemble(872, 61, signal=0.055, rho=0.3, random_state=0)
    f = make_set_function(run, "accuracy")
    perms, samples = random_order_values(f, 40, random_state=0)
    per_example = np.stack([order_scores(f, p) for p in perms])
    np.testing.assert_allclose(per_example.mean(axis=2), samples, atol=1e-12)
    gs = gain_slope(per_example, f.sign(), n_bootstrap=300)
    assert gs["slope"] == pytest.approx(gain_slope(samples, f.sign(), n_bootstrap=2)["slope"])
    for s in (gs, gs["from_k2"]):
        assert "Monte-Carlo" in s["ci_mc_label"] and "example" in s["ci_label"]
        assert s["ci_mc"][1] - s["ci_mc"][0] < 0.5 * (s["ci"][1] - s["ci"][0])
    dr = dr_tests(f, n_triples=60, n_bootstrap=200)
    width = np.diff(dr["mean_difference_ci"])[0]
    assert "Monte-Carlo" in dr["mean_difference_ci_mc_label"]
    assert 0 < np.diff(dr["mean_difference_ci_mc"])[0] < width
    # averaged samples alone carry no example information: no interval is invented
    flat = gain_slope(samples, f.sign(), n_bootstrap=100)
    assert np.isnan(flat["ci"]).all() and "ci_note" in flat and np.isfinite(flat["ci_mc"]).all()


def test_a_verdict_is_yes_only_when_it_survives_its_null():
    stats = {"gain_slope": {"value": -1.0, "ci": (-1.5, -0.5)},
             "dr_mean_difference": {"value": 0.2, "ci": (0.1, 0.3)},
             "dr_differences": {"value": np.array([-0.5, 0.2, 0.1]),
                                "se": np.array([0.05, 0.1, 0.1])},
             "diversity_partial_r": {"value": 0.3, "ci": (0.1, 0.5)}}
    rng = np.random.default_rng(0)
    centred = NullReference(rng.normal(0, 0.1, 199), rng.normal(0, 0.02, 199),
                            rng.normal(0, 0.05, (199, 3)), rng.normal(0, 0.05, 199))
    assert decide(stats, centred) == {"diminishing_returns": True,
                                      "dr_mean_difference_positive": True, "violations": True,
                                      "diversity_effect": True}
    # the null reproduces the effect (estimator bias): the same intervals are no finding
    biased = NullReference(rng.normal(-1.0, 0.1, 199), rng.normal(0.2, 0.02, 199),
                           rng.normal([-0.5, 0.2, 0.1], 0.05, (199, 3)),
                           rng.normal(0.3, 0.05, 199))
    assert not any(decide(stats, biased).values())
    assert not any(decide(stats, NullReference(None, None, None)).values())  # no null
    docs = verdict_docs(decide(stats, biased), None)
    assert docs["diminishing_returns"]["text"].startswith("not detected; power not computed")
    power = {"conditionally_independent": {"diminishing_returns": {"rate": 0.85, "n": 20,
                                                                   "ci": [0.64, 0.95]}},
             "shuffled_labels": {"diminishing_returns": {"rate": 0.05, "n": 20,
                                                         "ci": [0.01, 0.24]}}}
    text = verdict_docs(decide(stats, biased), power)["diminishing_returns"]["text"]
    assert text.startswith("not detected; a matched submodular case")
    assert "detected with probability 0.85" in text and "fires with probability 0.05" in text
    assert "not calibrated" not in text


def test_a_verdict_its_shuffled_labels_reproduce_is_not_a_finding():
    """A rule whose shuffled-label detection rate is above alpha beyond its Wilson interval is
    reported as detected but not a finding (``calibrated`` False, ``finding`` False); at a
    rate compatible with alpha it stays a finding."""
    from infodiv.inference.power import wilson_interval
    from infodiv.inference.verdicts import is_calibrated

    detected = {"diminishing_returns": True, "dr_mean_difference_positive": False,
                "violations": True}
    power = {"conditionally_independent": {t: {"rate": 0.9, "n": 20,
                                                "ci": list(wilson_interval(18, 20))}
                                            for t in ("diminishing_returns",
                                                      "dr_mean_difference_positive")},
             "planted_synergy": {"violations": {"rate": 1.0, "n": 20,
                                                "ci": list(wilson_interval(20, 20))}},
             "shuffled_labels": {"diminishing_returns": {"rate": 0.05, "n": 20,
                                                         "ci": list(wilson_interval(1, 20))},
                                 "violations": {"rate": 0.75, "n": 20,
                                                "ci": list(wilson_interval(15, 20))}}}
    docs = verdict_docs(detected, power)
    v = docs["violations"]
    assert v["detected"] and not v["calibrated"] and not v["finding"]
    assert "not calibrated" in v["text"] and "not a finding" in v["text"]
    d = docs["diminishing_returns"]
    assert d["detected"] and d["calibrated"] and d["finding"]
    assert "not calibrated" not in d["text"]
    # 3 of 20 (0.15): Wilson lower bound 0.052 > 0.05, already beyond alpha; 2 of 20 is not
    assert not is_calibrated({"rate": 0.15, "ci": list(wilson_interval(3, 20))})
    assert is_calibrated({"rate": 0.10, "ci": list(wilson_interval(2, 20))})
    assert is_calibrated(None)


def chance_run(r, n=200, m=6):
    """Raw accuracy of a model at chance with a label-free trend: labels independent of U
    (30% minority class), the bias predicts the minority class and every member pushes
    towards the majority, so f(k) rises with shrinking steps whatever the labels are."""
    from infodiv.inference.surrogates import with_arrays

    rng = np.random.default_rng(r)
    base = dependent_ensemble(n, m, signal=0.0, rho=0.4, random_state=r)
    u = np.asarray(base.u, dtype=np.float64).copy()
    u[:, :, 0] += 1.0
    return with_arrays(base, u=u, labels=(rng.random(n) < 0.3).astype(np.int64),
                       bias=np.array([0.0, 1.5]))


def test_a_model_at_chance_gets_no_diminishing_returns_verdict():
    """The demo's bug: a model at chance read "diminishing returns = yes". Here the
    interval-only rule (slope CI below 0) fires in all 10 replicates (measured), because the
    shuffled-label null reproduces the slope; the verdict fires in at most 0.05 + 2 sd."""
    n, yes, interval_only = 10, 0, 0
    for r in range(n):
        doc = curve_inference(chance_run(r), "accuracy", n_bootstrap=40, n_permutations=39,
                              n_mc=3, n_orders=4, n_triples=8, growth_laws=False,
                              information=False, power_replicates=0, random_state=r,
                              progress=False)
        yes += doc["verdicts"]["diminishing_returns"]["detected"]
        interval_only += doc["gain_slope"]["ci"][1] < 0
    assert interval_only >= 8          # the trend is there, and label-free
    assert yes <= n * ceiling(0.05, n)


@pytest.fixture(scope="module")
def powered():
    run = dependent_ensemble(300, 6, signal=0.5, rho=0.4, random_state=5)
    return curve_inference(run, "accuracy", n_bootstrap=60, n_permutations=59, n_mc=3,
                           n_orders=6, n_triples=12, growth_laws=False, information=False,
                           power_replicates=12, random_state=0, progress=False)


def test_power_is_on_by_default_and_sits_beside_every_verdict(powered):
    import inspect

    from infodiv.reports.curves import CurvesSettings

    assert CurvesSettings().power_replicates >= 20
    assert inspect.signature(curve_inference).parameters["power_replicates"].default >= 20
    p = powered["power"]
    assert p["n_replicates"] == 12
    for v in powered["verdicts"].values():
        assert v["power"]["n"] == 12 and v["false_positive"]["n"] == 12
        assert f"{v['power']['rate']:.2f}" in v["text"]
    # conditionally independent members with signal: DR detected in most surrogates; the
    # shuffled-label surrogates of the same run fire rarely
    ci = p["conditionally_independent"]
    assert ci["dr_mean_difference_positive"]["rate"] >= 0.8 - 2 * np.sqrt(0.16 / 12)
    for test in ("diminishing_returns", "dr_mean_difference_positive", "violations"):
        assert p["shuffled_labels"][test]["n_detected"] <= 12 * ceiling(0.05, 12)


def test_planted_xor_surrogates_show_violations_through_the_verdict_rule():
    """The power detector's violation rule (null-corrected per-triple differences, step-down
    min-z against the base run's label null) fires on planted XOR pairs and not on the
    conditionally independent base (Gaussian I)."""
    from infodiv.inference import CurvePipeline, permutation_null
    from infodiv.inference.power import FixedFitDetector

    pipe = CurvePipeline("mi_gaussian", n_orders=2, n_triples=16, information=False,
                         diversity=False)
    with_xor = without = 0
    for r in range(4):
        base = conditionally_independent(dependent_ensemble(800, 4, signal=0.5, rho=0.4,
                                                            random_state=200 + r),
                                         random_state=r)
        ref = NullReference.from_null(permutation_null(base, pipe, n_permutations=39,
                                                       random_state=r, progress=False))
        detect = FixedFitDetector(pipe, ref, n_bootstrap=100)
        rng = np.random.default_rng(r)
        with_xor += detect(planted_synergy(base, n_pairs=2, random_state=r), rng)["violations"]
        without += detect(base, rng)["violations"]
    assert with_xor >= 3 and without <= 1


def test_figures_in_every_variant_are_the_default_with_a_switch_off():
    import argparse
    import inspect

    from infodiv.commands import decompose
    from infodiv.reports.decomposition import decomposition_report

    assert inspect.signature(decomposition_report).parameters["every_variant"].default is True
    parser = argparse.ArgumentParser()
    decompose.configure(parser)
    assert parser.parse_args(["x"]).no_every_variant is False
    assert parser.parse_args(["x", "--no-every-variant"]).no_every_variant is True


def test_mean_curve_band_is_the_inferential_one_and_mc_is_labelled():
    from infodiv.curves import layer_curves
    from infodiv.reports.figures import plot_layer_curves

    run = dependent_ensemble(120, 5, signal=0.5, rho=0.4, random_state=0)
    lc = layer_curves(run, objective="accuracy", n_permutations=10)
    k = np.arange(6)
    band = {"ci_low": 0.3 + 0 * k, "ci_high": 0.9 + 0 * k}
    fig = plot_layer_curves(lc, None, band=band)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("examples resampled" in t for t in labels)
    assert any(t.startswith("Monte-Carlo error") for t in labels)
    shaded = ax.collections[0].get_paths()[0].vertices[:, 1]
    assert shaded.min() == pytest.approx(0.3) and shaded.max() == pytest.approx(0.9)
    off = plot_layer_curves(lc, None)
    texts = [t.get_text() for t in off.axes[0].get_legend().get_texts()]
    assert not off.axes[0].collections and any("inference off" in t for t in texts)
