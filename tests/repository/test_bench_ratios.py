"""The paired-ratio interval and the verdicts of the extraction benchmark (benchmarks/_ratios.py),
on synthetic timings with known ratios."""

import math
import sys

import numpy as np
import pytest
from _paths import ROOT
from scipy import stats

sys.path.insert(0, str(ROOT / "benchmarks"))
from _binomial import binomial_floor, ceiling  # noqa: E402
from _ratios import MET, NOT_MET, UNDECIDED, paired_ratio, ratio_table, targets_met, verdict  # noqa: E402


def _times(ratio, n, noise, seed):
    """Paired timings: a shared per-repetition load factor (large) times the side's own noise."""
    rng = np.random.default_rng(seed)
    load = np.exp(rng.normal(0, 0.3, n))   # drift shared by both sides of a repetition
    b = 10.0 * load * np.exp(rng.normal(0, noise, n))
    a = ratio * 10.0 * load * np.exp(rng.normal(0, noise, n))
    return a, b


def test_interval_is_the_t_interval_of_the_mean_log_ratio():
    d = np.array([0.1, 0.2, 0.3])
    b = np.array([2.0, 5.0, 7.0])
    s = paired_ratio(b * np.exp(d), b)
    half = stats.t.ppf(0.975, 2) * 0.1 / math.sqrt(3)
    assert s["geometric_mean"] == pytest.approx(math.exp(0.2), rel=1e-12)
    assert s["ci_low"] == pytest.approx(math.exp(0.2 - half), rel=1e-12)
    assert s["ci_high"] == pytest.approx(math.exp(0.2 + half), rel=1e-12)
    assert s["min"] == pytest.approx(2 * math.exp(0.1) / 2)
    assert s["n"] == 3


def test_pairing_removes_the_shared_load():
    # 30 % load drift per repetition, 1 % own noise: the paired interval is tight around 0.8
    a, b = _times(0.8, 8, 0.01, seed=1)
    s = paired_ratio(a, b)
    assert s["ci_low"] < 0.8 < s["ci_high"]
    assert s["ci_high"] - s["ci_low"] < 0.05


def test_verdicts():
    low = paired_ratio(*_times(0.85, 10, 0.03, seed=2))         # clearly below 1.0
    straddle = paired_ratio(*_times(1.0, 10, 0.08, seed=3))     # around 1.0, noisy
    high = paired_ratio(*_times(1.2, 10, 0.03, seed=4))         # clearly above 1.0
    assert verdict(low, ("<=", 1.0)) == MET
    assert straddle["ci_low"] < 1.0 < straddle["ci_high"]
    assert verdict(straddle, ("<=", 1.0)) == UNDECIDED
    assert verdict(high, ("<=", 1.0)) == NOT_MET
    assert verdict(paired_ratio(*_times(1.6, 10, 0.03, seed=5)), (">=", 1.3)) == MET
    assert verdict(paired_ratio(*_times(1.1, 10, 0.03, seed=6)), (">=", 1.3)) == NOT_MET
    assert verdict(paired_ratio([1.0], [1.0]), ("<=", 1.0)) == UNDECIDED   # no interval


def test_coverage_of_the_interval():
    n_sim, hits = 400, 0
    for seed in range(n_sim):
        s = paired_ratio(*_times(1.25, 6, 0.1, seed=100 + seed))
        hits += s["ci_low"] <= 1.25 <= s["ci_high"]
    assert binomial_floor(0.95, n_sim, 3) <= hits / n_sim <= ceiling(0.95, n_sim, 3)


def test_ratio_table_and_targets():
    a, b = _times(0.9, 8, 0.02, seed=7)
    cpu = {"plain": b, "plain_same_work": b, "extract": a, "extract_no_savings": b,
           "tl_best": 1.5 * a}
    table = ratio_table(cpu, ["tl_best"])
    assert table["paired"]["tl_best_over_extract"]["geometric_mean"] == pytest.approx(1.5)
    assert table["paired"]["extract_over_extract_without_savings"]["verdict"] is None
    met = targets_met({"zero_shot": {"ratios": table}})["zero_shot"]
    assert met == {"overhead_extract_over_plain_same_work": MET, "extract_over_plain": MET,
                   "tl_best_over_extract": MET}


@pytest.mark.parametrize("a, b", [([1.0, 2.0], [1.0]), ([], []), ([1.0, 0.0], [1.0, 1.0])])
def test_bad_input(a, b):
    with pytest.raises(ValueError):
        paired_ratio(a, b)


def test_committed_matrix_verdicts_follow_from_its_timings():
    import json

    path = ROOT / "benchmarks" / "results" / "extract_matrix.json"
    doc = json.loads(path.read_text())
    for label, task in doc["tasks"].items():
        peers = list(task["peers_agreement_first_batch"])
        table = ratio_table(task["cpu_s"], peers)   # from the stored (rounded) CPU seconds
        for key, stat in table["paired"].items():
            assert stat["geometric_mean"] == pytest.approx(
                task["ratios"]["paired"][key]["geometric_mean"], rel=1e-3)
        assert targets_met({label: {"ratios": table}})[label] == doc["targets_met"][label]
        assert task["max_exactness_error"] < 1e-4


def test_time_sides_resumes_with_the_rotation_where_it_stopped():
    """An interrupted focused run (``--parity-reps`` / ``--peer-reps``) continues after the
    repetitions it saved: the same order of sides as one uninterrupted run, every repetition
    saved through ``on_rep``, and uneven lists to resume are refused."""
    from _extract_sides import time_sides

    def run(reps, done=None):
        order, saved = [], []
        thunks = {k: (lambda k=k: order.append(k)) for k in ("a", "b", "c")}
        cpu, wall, _ = time_sides("t", thunks, reps, lambda: None, done=done,
                                  on_rep=lambda c, w: saved.append(len(c["a"])))
        return order, saved, cpu, wall

    whole, _, _, _ = run(5)
    assert "".join(whole) == "abc" "bca" "cab" "abc" "bca"   # rotated by one side per rep
    first, saved, cpu, wall = run(2)
    rest, saved_rest, cpu5, _ = run(5, done=(cpu, wall))
    assert first + rest == whole                  # rotation continues at repetition 2
    assert saved == [1, 2] and saved_rest == [3, 4, 5]
    assert cpu5["a"][:2] == cpu["a"] and len(cpu5["c"]) == 5
    assert run(2, done=(cpu, wall))[0] == []      # already measured: nothing runs
    cpu["b"].pop()
    with pytest.raises(ValueError, match="do not cover every side equally"):
        run(5, done=(cpu, wall))


def test_a_focused_entry_resumes_only_on_the_same_prompts_code_sides_and_machine():
    """Repetitions timed on two machines (a new VM runs at another speed) or two trees are
    never pooled: any difference starts the entry over."""
    from _extract_sides import machine, resumable

    here = machine()
    assert here["cpu_count"] >= 1 and set(here) == {"cpu", "cpu_count", "memory", "boot_id"}
    old = {"n_prompts": 64, "extraction_tree": "abc", "machine": here,
           "cpu_s": {"plain": [1.0], "extract": [1.0]}}
    assert resumable(old, 64, "abc", ("extract", "plain"), here)
    assert not resumable(old, 64, "abc", ("extract", "plain"), here | {"boot_id": "other"})
    assert not resumable(old, 64, "abd", ("extract", "plain"), here)
    assert not resumable(old, 64, None, ("extract", "plain"), here)     # uncommitted tree
    assert not resumable(old, 48, "abc", ("extract", "plain"), here)
    assert not resumable(old, 64, "abc", ("extract", "plain_same_work"), here)
    assert not resumable({k: v for k, v in old.items() if k != "machine"}, 64, "abc",
                         ("extract", "plain"), here)   # a record without its machine
