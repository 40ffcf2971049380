"""What three seeds can say on the depth page (infodiv.experiments.depth_seeds): t intervals
that can leave the seeds' range, a step law beside the smooth growth laws, the depths where a
curve falls again after saturating, and a gap regression's leave-one-out influence. Every
expected number is computed here independently (numpy/scipy), on synthetic records and on the
committed summary."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from _cli_checks import one_line_error
from _paths import ROOT
from scipy import stats

from infodiv.cli import main
from infodiv.experiments.depth_answer import answer
from infodiv.experiments.depth_seeds import (
    collapses,
    depth_curve,
    derive,
    gap_influence,
    model_state,
    refresh,
    step_comparison,
    t_interval,
)
from infodiv.growth import ALL_LAWS, fit_growth_laws
from infodiv.outputs import MANIFEST

SUMMARY = ROOT / "docs" / "results" / "depth" / "summary.json"


def _rec(depth, seed, acc, *, shared=False, plateau=False, at_chance=False):
    return {"model": f"m-L{depth}{'-share2' if shared else ''}-s{seed}", "hops": 2,
            "depth": depth, "seed": seed, "shared": shared, "accuracy": acc,
            "at_chance": at_chance, "training": {"on_plateau": plateau}}


def test_t_interval_matches_student_and_can_leave_the_seeds_range():
    v = [0.741, 0.756, 0.697]
    t = t_interval(v)
    half = stats.t.ppf(0.975, 2) * np.std(v, ddof=1) / math.sqrt(3)
    assert t["ci95"] == pytest.approx([np.mean(v) - half, np.mean(v) + half])
    assert t["ci95"][0] < min(v) and t["ci95"][1] > max(v)
    assert t_interval([0.5])["ci95"] is None


def test_states_use_the_threshold_not_the_chance_rule():
    assert model_state(_rec(2, 0, 0.95)) == "solves"
    assert model_state(_rec(2, 0, 0.586)) == "partial"
    assert model_state(_rec(2, 0, 0.25, at_chance=True)) == "chance"
    assert model_state(_rec(2, 0, 0.25, plateau=True, at_chance=True)) == "plateau"


def test_a_step_curve_is_won_by_the_step_and_a_log_curve_is_not():
    x = np.asarray([1, 2, 3, 4, 6, 8], float)
    step = fit_growth_laws([0.25, 0.26, 1.0, 1.0, 0.99, 1.0], k=x, laws=ALL_LAWS)
    assert step["best_aicc"] == "step"
    a, b, c = step["step"]["params"]
    assert 2 < c < 3 and a == pytest.approx(0.255) and b == pytest.approx(0.9975)
    rng = np.random.default_rng(0)
    smooth = 0.3 + 0.2 * np.log(x) + rng.normal(0, 0.002, x.size)
    assert fit_growth_laws(smooth, k=x, laws=ALL_LAWS)["best_aicc"] == "log"
    # the default laws stay the three smooth ones
    assert "step" not in fit_growth_laws(smooth, k=x)


def test_a_curve_that_falls_after_saturating_is_named():
    recs = [_rec(d, s, a) for d, accs in {1: [0.25] * 3, 2: [1.0, 1.0, 0.3], 4: [1.0] * 3,
                                         6: [0.5, 0.25, 0.25]}.items()
            for s, a in enumerate(accs)]
    recs[-1]["training"]["on_plateau"] = True
    curve = depth_curve(recs)
    assert [r["median"] for r in curve] == [0.25, 1.0, 1.0, 0.25]
    out = collapses(curve)
    assert [r["depth"] for r in out] == [6] and out[0]["saturated_at"] == 2
    assert out[0]["counts"] == {"partial": 2, "plateau": 1}
    g = step_comparison(recs)
    assert g["depths"] == [1, 2, 4, 6] and g["seeds"] == [0, 1, 2]


def _pairs(x, y):
    return [{"shared_depth": 2, "compare": "equal parameters", "unshared_depth": 2, "seed": i,
             "diversity_gap": float(a), "accuracy_gap": float(b)} for i, (a, b)
            in enumerate(zip(x, y))]


def test_gap_influence_finds_the_pair_a_correlation_rests_on():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=6), rng.normal(size=6)
    x[5], y[5] = 8.0, 8.0                       # one outlying pair makes the correlation
    recs = []
    for i in range(6):
        recs += [_rec(2, i, 0.99, shared=True), _rec(2, i, 0.98)]
    g = gap_influence(recs, {"diversity": "ce_diversity", "pairs": _pairs(x, y)})
    assert g["r"] == pytest.approx(np.corrcoef(x, y)[0, 1])
    assert g["spearman"] == pytest.approx(stats.spearmanr(x, y)[0])
    top = g["most_influential"]
    assert top["seed"] == 5
    assert top["r_without"] == pytest.approx(np.corrcoef(x[:5], y[:5])[0, 1])
    # exact permutation p over all 720 orderings, recomputed
    null = [abs(np.corrcoef(np.asarray(p), y)[0, 1]) for p in __import__("itertools")
            .permutations(x)]
    assert g["p_permutation"] == pytest.approx(np.mean(np.asarray(null) >= abs(g["r"]) - 1e-12))
    # a pair with a partial model leaves the solving set
    recs[1]["accuracy"] = 0.5
    assert gap_influence(recs, {"diversity": "ce_diversity",
                                "pairs": _pairs(x, y)})["n_pairs"] == 5


@pytest.fixture(scope="module")
def summary():
    return refresh(json.loads(SUMMARY.read_text()))


def test_committed_summary_seeds_section_is_what_its_records_give(summary):
    stored = json.loads(SUMMARY.read_text())
    for hops, d in stored["by_hops"].items():
        rs = [r for r in stored["records"] if str(r["hops"]) == hops]
        assert d["seeds"] == json.loads(json.dumps(derive(rs, d))), hops


def test_committed_k2_is_a_step_and_k1_falls_after_saturating(summary):
    k2, k1 = summary["by_hops"]["2"]["seeds"], summary["by_hops"]["1"]["seeds"]
    assert k2["growth"]["winner"] == "step"
    means = {r["depth"]: np.mean(r["accuracy"]) for r in k2["curve"]}
    assert k2["growth"]["seed_mean"]["step"]["rss"] < k2["growth"]["seed_mean"]["log"]["rss"] / 100
    assert means[3] > 0.99 and means[2] < 0.3
    assert [r["depth"] for r in k1["collapses"]] == [6, 8]


def test_committed_ce_gap_regression_rests_on_one_pair(summary):
    g = summary["by_hops"]["2"]["seeds"]["gap_influence"]["above_chance"]["ce_diversity"]
    pairs = summary["by_hops"]["2"]["table1"]["gap_regression"]["ce_diversity"]["pairs"]
    states = summary["by_hops"]["2"]["seeds"]["states"]
    name = {(True, p["shared_depth"], p["seed"]): f"llama-d64-L{p['shared_depth']}-share2-s"
            f"{p['seed']}" for p in pairs}
    keep = [p for p in pairs
            if states[name[(True, p["shared_depth"], p["seed"])]] in ("solves", "partial")
            and states[f"llama-d64-L{p['unshared_depth']}-s{p['seed']}"] in ("solves", "partial")]
    x = np.asarray([p["diversity_gap"] for p in keep])
    y = np.asarray([p["accuracy_gap"] for p in keep])
    assert g["n_pairs"] == len(keep) == 8
    assert g["r"] == pytest.approx(np.corrcoef(x, y)[0, 1]) and g["r"] > 0.7
    i = int(np.argmax([abs(g["r"] - np.corrcoef(np.delete(x, j), np.delete(y, j))[0, 1])
                       for j in range(len(x))]))
    assert g["most_influential"]["r_without"] == pytest.approx(
        np.corrcoef(np.delete(x, i), np.delete(y, i))[0, 1])
    assert abs(g["most_influential"]["r_without"]) < 0.1


def test_the_answer_says_step_collapse_threshold_and_influence(summary):
    text = "\n".join(answer(summary))
    assert "law wins" not in text
    assert "is a step: accuracy jumps" in text
    assert "Not monotone in depth (K = 1)" in text and "depth 6 (seed median 0.250" in text
    assert "held-out accuracy ≥ 0.90" in text
    assert "the correlation rests on that one pair" in text
    assert "equal executions) -0.007, t interval over 3 seeds [-0.040, 0.025]" in text


def test_the_committed_page_is_what_depth_page_draws(tmp_path, capsys):
    out = tmp_path / "depth"
    out.mkdir()
    (out / "summary.json").write_text(SUMMARY.read_text())
    (out / MANIFEST).write_text((SUMMARY.parent / MANIFEST).read_text())   # as committed
    assert main(["zoo", "depth-page", "--out", str(out)]) == 0
    assert (out / "README.md").read_text() == (SUMMARY.parent / "README.md").read_text()
    capsys.readouterr()
    one_line_error(capsys, ["zoo", "depth-page", "--out", str(tmp_path / "none")],
                   "no summary.json")
    (out / "summary.json").write_text("[1, 2]")
    (out / MANIFEST).unlink()
    one_line_error(capsys, ["zoo", "depth-page", "--out", str(out), "--adopt"],
                   "is not a JSON object")
