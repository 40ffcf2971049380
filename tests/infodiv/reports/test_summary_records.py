"""The one-screen summary reads the curves report's verdict records: each claim's estimate with
its own interval, its null, its null-corrected value and the verdict, nothing recomputed."""

import pytest

from infodiv.controls import conditionally_independent_ensemble
from infodiv.reports.summary import _curve_rows
from infodiv.study import StudySettings
from infodiv.study.curves import curves_stage


@pytest.fixture(scope="module")
def doc(tmp_path_factory):
    run = conditionally_independent_ensemble(160, 4, mu=0.5, random_state=1)
    s = StudySettings().with_settings(
        objectives=("accuracy",), claims=("diminishing_returns", "violations"), n_curve_orders=20,
        n_triples=6, n_bootstrap=20, power_replicates=2, stability=0, graph=False,
        selection_verdicts=False)
    return curves_stage(run, tmp_path_factory.mktemp("curves"), s, log=lambda *_: None)


def test_rows_quote_every_record_with_its_own_interval(doc):
    rows = _curve_rows(doc, doc["run"]["N"])
    recs = doc["objectives"]["accuracy"]["verdicts"]
    for name, rec in recs.items():
        label = name.replace("_", " ")
        mine = [r for r in rows if r["quantity"] == f"{label}: {rec['statistic']}"]
        assert len(mine) == 1, name
        assert mine[0]["value"] == rec["estimate"]
        assert [mine[0]["low"], mine[0]["high"]] == (rec["interval"] or [None, None])
        verdict = [r for r in rows if r["quantity"] == f"verdict: {label}"]
        assert len(verdict) == 1 and verdict[0]["value"] == rec["outcome"]
        assert verdict[0]["estimator"] == rec["text"]
    # the scalar claim carries its null and corrected value, each with the record's interval
    dr = recs["diminishing_returns"]
    null = [r for r in rows if r["quantity"] == "diminishing returns: label-permutation null "
            "(mean)"]
    assert null[0]["value"] == dr["null_mean"] and [null[0]["low"], null[0]["high"]] == \
        dr["null_interval"]
    cor = [r for r in rows if r["quantity"].startswith("diminishing returns: null-corrected")]
    assert cor[0]["value"] == dr["corrected"]
    # no row holds an interval that misses its value
    for r in rows:
        if r["low"] is not None and isinstance(r["value"], float):
            assert r["low"] <= r["value"] <= r["high"], r


def test_point_rows_are_the_curve_ends(doc):
    rows = _curve_rows(doc, doc["run"]["N"])
    values = doc["objectives"]["accuracy"]["curves"]["curves"]["random"]["values"]
    got = {r["quantity"]: r["value"] for r in rows}
    assert got["f(empty set)"] == values[0] and got["f(all members)"] == values[-1]
