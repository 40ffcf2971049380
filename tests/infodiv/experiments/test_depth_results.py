"""The committed depth-grid results (docs/results/depth/summary.json) hold what the experiment
promises: one record per trained model with its grid coordinates, held-out accuracy and
verdicts; the harder setting complete (at least 5 unshared depths with 3 seeds each and
layer-shared twins at 2 depths), its deepest models accurate and its one-block models near
chance. Every number is recomputed here from the records, not read from the page's text."""

from __future__ import annotations

import json
from collections import defaultdict
from statistics import median

import pytest
from _paths import ROOT

SUMMARY = ROOT / "docs" / "results" / "depth" / "summary.json"
FIELDS = ("task", "hops", "depth", "shared", "seed", "params", "n_members", "accuracy",
          "verdicts")


@pytest.fixture(scope="module")
def records():
    return json.loads(SUMMARY.read_text())["records"]


def _hardest(records):
    return max(r["hops"] for r in records)


def test_every_record_has_the_grid_fields_and_verdicts_with_power(records):
    assert records, "no trained model recorded"
    for r in records:
        missing = [f for f in FIELDS if f not in r]
        assert not missing, (r.get("model"), missing)
        assert 0.0 <= r["accuracy"] <= 1.0 and r["n_members"] >= 3
        for name, v in r["verdicts"].items():
            if v is None or "power" not in v or v["power"] is None:
                continue
            p = v["power"]
            assert 0 <= p["n_detected"] <= p["n"] and p["rate"] == pytest.approx(
                p["n_detected"] / p["n"]), (r["model"], name)


def test_the_harder_setting_is_complete(records):
    k = _hardest(records)
    seeds = defaultdict(set)
    for r in records:
        if r["hops"] == k:
            seeds[(r["depth"], r["shared"])].add(r["seed"])
    unshared = [d for (d, shared), s in seeds.items() if not shared and len(s) >= 3]
    shared = [d for (d, sh), s in seeds.items() if sh and len(s) >= 1]
    assert len(unshared) >= 5, sorted(seeds.items())
    assert len(shared) >= 2, sorted(seeds.items())


def test_depth_is_needed_and_then_saturates(records):
    """Median held-out accuracy at the deepest unshared depth >= 0.90 and at depth 1 <= 0.50
    (chance is 0.25 with 4 options)."""
    k = _hardest(records)
    by_depth = defaultdict(list)
    for r in records:
        if r["hops"] == k and not r["shared"]:
            by_depth[r["depth"]].append(r["accuracy"])
    assert 1 in by_depth, sorted(by_depth)
    assert median(by_depth[max(by_depth)]) >= 0.90, by_depth[max(by_depth)]
    assert median(by_depth[1]) <= 0.50, by_depth[1]


def _saturation_from_records(records, hops, threshold=0.90):
    """Smallest unshared depth whose median accuracy over its finished seeds reaches
    ``threshold`` (None: none does), recomputed from the records."""
    rows = [r for r in records if r["hops"] == hops and not r["shared"]]
    for d in sorted({r["depth"] for r in rows}):
        accs = [r["accuracy"] for r in rows if r["depth"] == d]
        if median(accs) >= threshold:
            return d
    return None


def test_saturation_depth_per_difficulty_and_its_shift():
    """The page's saturation depth of every difficulty is the one the records give; with two
    difficulties, the harder one saturates deeper, in most replicate pairs and earlier in none
    (a pair saturates at the same depth when its seed draw takes a seed stuck at chance at
    least twice)."""
    summary = json.loads(SUMMARY.read_text())
    records = summary["records"]
    for hops, d in summary["by_hops"].items():
        sat = d["saturation"]
        assert sat["depth"] == _saturation_from_records(records, int(hops)), hops
        share = sat["replicates"]["share"]
        assert sum(share.values()) == pytest.approx(1.0)
    shift = summary["saturation_shift"]
    if len({r["hops"] for r in records}) < 2:
        assert shift is None
        return
    hard, easy = shift["harder"], shift["easier"]
    assert (shift["harder_depth"], shift["easier_depth"]) == (
        _saturation_from_records(records, hard), _saturation_from_records(records, easy))
    assert shift["harder_depth"] > shift["easier_depth"]
    assert shift["deeper"] > 0.5 and shift["earlier"] == 0.0, shift


def test_the_answer_says_which_models_never_learned_the_task():
    """Every record says where its training loss ended; the page's answer counts, per
    difficulty, the models whose loss stayed on the chance plateau (recounted here from the
    final losses, not from the flags)."""
    import math

    summary = json.loads(SUMMARY.read_text())
    page = (SUMMARY.parent / "README.md").read_text()
    answer = page.split("## Answer", 1)[1].split("\n## ", 1)[0]
    for hops in summary["by_hops"]:
        rows = [r for r in summary["records"] if str(r["hops"]) == hops]
        assert all(r.get("training") for r in rows), hops
        stuck = sum(r["training"]["final_loss"] >= 0.95 * math.log(r["training"]["n_options"])
                    for r in rows)
        if stuck:
            assert (f"**Training (K = {hops})**: {stuck} of {len(rows)} models ended training "
                    "on the chance plateau") in answer, hops
