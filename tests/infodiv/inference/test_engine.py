"""The inference engine (infodiv.inference.engine) and the claims registry (infodiv.claims).

- reproduction: on a small synthetic run the engine gives the estimates, intervals, null means,
  p-values and verdicts stored in ``tests/data/engine_reproduction.json`` (same seeds)
  exactly, and the power within Monte-Carlo error; in the slow tier also those of a committed
  zoo report end to end;
- the bootstrap refits: replicate 0 equals a resample drawn and refitted by hand;
- the null permutes: a strong effect's null sits near 0 and its p is the smallest possible;
- power counts the matched surrogate, not shuffled labels;
- every interval contains its estimate (a widened interval is flagged), records round-trip.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from _paths import ROOT

from infodiv.claims import CLAIMS, claim_names, get_claims
from infodiv.inference.claim import Design
from infodiv.inference.engine import evaluate
from infodiv.inference.record import VerdictRecord
from infodiv.inference.synthetic import dependent_ensemble

GOLDEN = json.loads((ROOT / "tests" / "data" / "engine_reproduction.json").read_text())


@pytest.fixture(scope="module")
def golden_run():
    g = GOLDEN["run"]
    return dependent_ensemble(g["n_examples"], g["n_members"], signal=g["signal"], rho=g["rho"],
                              random_state=g["random_state"])


@pytest.fixture(scope="module")
def curve_records(golden_run):
    d = GOLDEN["curve_design"]
    design = Design(d["objective"], n_orders=d["n_orders"], triples=GOLDEN["triples"])
    return evaluate(golden_run, get_claims(claim_names("curve")), design,
                    n_bootstrap=d["n_bootstrap"],
                    n_permutations=d["n_permutations"], n_mc=d["n_mc"], n_power=d["n_power"],
                    random_state=0)["records"]


@pytest.fixture(scope="module")
def selection_records(golden_run):
    d = GOLDEN["selection_design"]
    design = Design(d["objective"], n_random=d["n_random"])
    return evaluate(golden_run, get_claims(claim_names("selection")), design,
                    n_bootstrap=d["n_bootstrap"], n_permutations=d["n_permutations"],
                    n_mc=d["n_mc"], n_power=d["n_power"], random_state=0)["records"]


def _power_tolerance(rate, n):
    """Three binomial standard errors of a rate from n surrogates (at least 1.5/n)."""
    return max(1.5 / n, 3 * np.sqrt(max(rate * (1 - rate), 0.25 / n) / n))


@pytest.mark.parametrize("name", [*claim_names("curve"), *claim_names("selection")])
def test_engine_reproduces_the_stored_records(name, curve_records, selection_records):
    rec = {**curve_records, **selection_records}[name]
    want = GOLDEN["records"][name]
    assert rec.estimate == pytest.approx(want["estimate"], rel=1e-9, abs=1e-12)
    assert rec.p == pytest.approx(want["p"], rel=1e-12)
    assert rec.detected == want["detected"]
    if want["interval"] is not None:
        np.testing.assert_allclose(rec.interval, want["interval"], rtol=1e-9, atol=1e-12)
        assert rec.null_mean == pytest.approx(want["null_mean"], rel=1e-9, abs=1e-12)
    n = GOLDEN["curve_design"]["n_power"]
    for key in ("power", "false_positive"):
        got = getattr(rec, key)
        assert got["n"] == n and got["rate"] == got["n_detected"] / n
        assert abs(got["rate"] - want[key]) <= _power_tolerance(want[key], n), key


def test_every_record_is_consistent_and_round_trips(curve_records, selection_records):
    for rec in {**curve_records, **selection_records}.values():
        rec.check()
        if rec.interval is not None:
            assert rec.interval[0] <= rec.estimate <= rec.interval[1]
            assert rec.corrected == pytest.approx(rec.estimate - rec.null_mean)
            assert rec.corrected_interval[0] <= rec.corrected <= rec.corrected_interval[1]
        assert rec.finding == (rec.detected and rec.calibrated)
        assert rec.n_bootstrap == 20 and rec.n_permutations == 20 and rec.n_examples == 200
        doc = json.loads(json.dumps(rec.to_dict()))
        assert VerdictRecord.from_dict(doc) == rec
        assert doc["text"].startswith(rec.outcome)
        # the conclusion follows the rule: holds exactly when it is a finding
        assert (rec.outcome == "holds") == rec.finding
        assert rec.outcome in ("holds", "opposite", "absent", "inconclusive")
        assert (rec.outcome == "opposite") == (rec.opposite and rec.calibrated
                                               and not rec.detected)


def test_bootstrap_replicate_is_a_refit_on_resampled_rows(golden_run):
    """Replicate 0 of the engine's bootstrap equals, to the bit, the DR mean of a stratified
    resample drawn by hand with a set function fitted on it (seeds as documented in
    infodiv.inference.nulls / bootstrap / replicates)."""
    from estimators.validation import check_seed_sequence
    from infodiv.inference.engine import ClaimStatistics
    from infodiv.inference.nulls import infer
    from infodiv.setfunctions import make_set_function

    claim = CLAIMS["dr_mean_difference_positive"]
    design = Design("accuracy_calibrated", n_orders=2, triples=GOLDEN["triples"])
    res = infer(golden_run, ClaimStatistics([claim], design), n_bootstrap=20, n_permutations=0,
                n_mc=2, random_state=7, progress=False)
    boot_seed = check_seed_sequence(7).spawn(2)[0]
    data_seed, inner_seed = boot_seed.spawn(2)[1].spawn(20)[0].spawn(2)
    rng = np.random.default_rng(data_seed)
    y = golden_run.labels
    rows = np.sort(np.concatenate([np.flatnonzero(y == c)[rng.integers(0, (y == c).sum(),
                                                                       (y == c).sum())]
                                   for c in np.unique(y)]))
    resampled = golden_run.take(rows)
    seed = int(np.random.default_rng(inner_seed).integers(0, 2**31 - 1))
    f = make_set_function(resampled, "accuracy_calibrated", random_state=seed)
    diffs = []
    for a, b, x in GOLDEN["triples"]:
        a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
        v = [f.value(s) for s in (a, np.append(a, x), b, np.append(b, x))]
        diffs.append(f.sign() * ((v[1] - v[0]) - (v[3] - v[2])))
    dist = res.bootstrap[claim.name].distribution
    assert dist[0] == pytest.approx(np.mean(diffs), abs=1e-12)
    assert np.std(dist) > 0


def test_label_null_permutes_the_labels():
    """A strong diversity effect: its null is centred near 0 (labels carry nothing there), far
    from the estimate, and p is 1/(K + 1)."""
    run = dependent_ensemble(300, 6, signal=0.6, rho=0.3, random_state=3)
    out = evaluate(run, get_claims(["dr_mean_difference_positive"]),
                   Design("accuracy", n_orders=2, n_triples=20), n_bootstrap=20,
                   n_permutations=20, n_mc=2, n_power=0, random_state=0)
    rec = out["records"]["dr_mean_difference_positive"]
    assert rec.estimate > 0.02
    assert abs(rec.null_mean) < 0.25 * rec.estimate
    assert rec.p == pytest.approx(1 / 21)   # (1 + 0) / (1 + K), K = 20
    assert rec.null_interval[1] < rec.estimate


def test_power_is_the_matched_surrogates_rate_not_the_shuffled_labels(curve_records):
    """The matched case (members permuted within class) is detected in at least 5 of 6
    surrogates, the shuffled-label surrogates in none: the record's power is the former."""
    rec = curve_records["diminishing_returns"]
    assert rec.power["rate"] >= 5 / 6 and rec.false_positive["rate"] == 0.0
    assert rec.power["n"] == rec.false_positive["n"] == 6
    assert rec.power["ci"][0] <= rec.power["rate"] <= rec.power["ci"][1]


def test_sizes_are_checked_before_any_work(golden_run):
    for k in (10, 19):   # at K = 19 the smallest p, 1/20, is not below alpha = 0.05
        with pytest.raises(ValueError, match="n_permutations must be >= 20"):
            evaluate(golden_run, get_claims(["diminishing_returns"]), n_permutations=k)
    with pytest.raises(ValueError, match="unknown claims"):
        get_claims(["no_such_claim"])
    one = dependent_ensemble(50, 2, random_state=0).take(np.arange(50))
    with pytest.raises(ValueError, match="DR chains"):
        evaluate(one, get_claims(["violations"]), Design("accuracy", n_triples=0))


@pytest.mark.slow
def test_committed_zoo_report_end_to_end():
    """The committed curves report of the zoo's llama-d128-L1-s0 (accuracy, B = K = 200, five
    Monte-Carlo reruns of 10 orders, 100 DR chains drawn from its seed): the engine gives the
    estimates, intervals, null means, p-values and verdicts of its curve claims' records."""
    from extraction import Contributions

    run = Contributions.load(ROOT / "docs/results/zoo/contributions/llama-d128-L1-s0")
    doc = json.loads((ROOT / "docs/results/zoo/llama-d128-L1-s0/curves/report.json").read_text())
    committed = doc["objectives"]["accuracy"]["verdicts"]
    design = Design("accuracy", {"ridge": 0.0}, n_orders=10, n_triples=100,
                    triple_seed=doc["settings"]["seed"])
    names = claim_names("curve")
    recs = evaluate(run, get_claims(names), design, n_bootstrap=200, n_permutations=200,
                    n_mc=5, n_power=0, random_state=0)["records"]
    for name in names:
        rec, v = recs[name], committed[name]
        assert rec.estimate == pytest.approx(v["estimate"], rel=1e-12), name
        if v["interval"] is None:
            assert rec.interval is None, name
        else:
            np.testing.assert_allclose(rec.interval, v["interval"], rtol=1e-12, err_msg=name)
        if v["null_mean"] is not None:
            assert rec.null_mean == pytest.approx(v["null_mean"], rel=1e-12), name
        assert rec.p == pytest.approx(v["p"], rel=1e-12), name
        assert rec.detected == v["detected"], name
