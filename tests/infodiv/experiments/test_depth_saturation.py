"""The saturation depth of a depth grid and its shift between difficulties
(infodiv.experiments.depth_saturation), and the answer lines that quote them
(infodiv.experiments.depth_answer), on synthetic grids whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest


def _grid(depth_acc, seed_offsets=(0.0, 0.0, 0.0), b=400, noise=0.002, random_state=0):
    """Records, points and replicates: accuracy per unshared depth plus a per-seed offset;
    replicates = point + small noise on ``b`` shared resamples."""
    rng = np.random.default_rng(random_state)
    records, points, reps = [], {}, {}
    for s, off in enumerate(seed_offsets):
        for d, a in depth_acc.items():
            name = f"L{d}-s{s}"
            records.append({"model": name, "depth": d, "shared": False, "seed": s})
            points[name] = {"accuracy": a + off}
            reps[name] = {"accuracy": a + off + rng.normal(0, noise, b)}
    return records, points, reps


def test_saturation_depth_is_the_first_depth_reaching_the_threshold():
    from infodiv.experiments.depth_saturation import saturation_depth

    sat = saturation_depth(*_grid({1: 0.25, 2: 0.30, 3: 0.95, 4: 0.97, 6: 0.97, 8: 0.96}))
    assert sat["depth"] == 3 and sat["deepest"] == 8 and sat["seeds"] == [0, 1, 2]
    assert sat["accuracy"] == pytest.approx([0.25, 0.30, 0.95, 0.97, 0.97, 0.96])
    assert sat["replicates"]["share"]["3"] == 1.0 and sat["replicates"]["n"] == 400
    assert sat["replicates"]["depth"].count(3) == 400
    late = saturation_depth(*_grid({1: 0.25, 2: 0.30, 3: 0.85, 4: 0.95}))
    assert late["depth"] == 4
    never = saturation_depth(*_grid({1: 0.25, 2: 0.60}))
    # one seed stuck at chance does not move the depth (median), two do
    stuck = _grid({1: 0.25, 2: 0.98, 3: 0.99})
    stuck[1]["L2-s2"]["accuracy"] = 0.25
    stuck[2]["L2-s2"]["accuracy"] = np.full(400, 0.25)
    assert saturation_depth(*stuck)["depth"] == 2
    stuck[1]["L2-s1"]["accuracy"] = 0.25
    stuck[2]["L2-s1"]["accuracy"] = np.full(400, 0.25)
    assert saturation_depth(*stuck)["depth"] == 3
    assert never["depth"] is None and never["replicates"]["share"]["beyond"] == 1.0
    assert saturation_depth(*_grid({1: 0.25, 2: 0.60}), threshold=0.5)["depth"] == 2
    with pytest.raises(ValueError, match="threshold must lie in"):
        saturation_depth(*_grid({1: 0.2}), threshold=0)
    shared_only = [{"model": "x", "depth": 2, "shared": True, "seed": 0}]
    assert saturation_depth(shared_only, {}, {}) is None


def test_seeds_are_resampled_inside_every_replicate():
    """Seeds 0.80 / 0.99 / 0.99 at depth 3: the seed median 0.99 saturates, but a replicate
    that draws seed 0 at least twice (probability 7/27) has median 0.80, so depth 3 wins about
    20/27 of the replicates and depth 4 (all seeds at 0.99) the rest."""
    from infodiv.experiments.depth_saturation import saturation_depth

    records, points, reps = _grid({1: 0.25, 3: 0.99, 4: 0.99}, b=1000, noise=0.0)
    for name in ("L3-s0",):
        points[name]["accuracy"] = 0.80
        reps[name]["accuracy"] = np.full(1000, 0.80)
    sat = saturation_depth(records, points, reps, random_state=3)
    assert sat["depth"] == 3
    share = sat["replicates"]["share"]
    assert share["3"] == pytest.approx(20 / 27, abs=0.05)
    assert share["4"] == pytest.approx(7 / 27, abs=0.05) and share["1"] == 0.0


def test_one_seed_draw_serves_every_depth():
    """Seed 2 stuck at depth 2, seed 1 stuck at depth 3, depth 4 absent: a replicate can fail
    depth 2 (seed 2 drawn at least twice) or depth 3 (seed 1 at least twice), never both with
    3 draws shared across depths, so no replicate lies beyond the grid; independent draws per
    depth would put about (7/27)^2 = 0.067 of them there."""
    from infodiv.experiments.depth_saturation import saturation_depth

    records, points, reps = _grid({1: 0.25, 2: 1.0, 3: 1.0}, b=2000, noise=0.0)
    for name in ("L2-s2", "L3-s1"):
        points[name]["accuracy"] = 0.30
        reps[name]["accuracy"] = np.full(2000, 0.30)
    share = saturation_depth(records, points, reps, random_state=5)["replicates"]["share"]
    assert share["beyond"] == 0.0
    assert share["2"] == pytest.approx(20 / 27, abs=0.03)
    assert share["3"] == pytest.approx(7 / 27, abs=0.03)


def test_shift_counts_replicate_pairs_and_the_answer_says_it():
    from infodiv.experiments.depth_answer import _saturation, _shift
    from infodiv.experiments.depth_saturation import saturation_depth, saturation_shift

    hard = saturation_depth(*_grid({1: 0.25, 2: 0.26, 3: 1.0, 4: 1.0, 6: 0.99, 8: 0.97}))
    easy = saturation_depth(*_grid({1: 0.30, 2: 0.98, 3: 1.0, 4: 1.0}))
    shift = saturation_shift({"2": hard, "1": easy})
    assert (shift["harder"], shift["easier"]) == (2, 1)
    assert (shift["harder_depth"], shift["easier_depth"]) == (3, 2)
    assert (shift["deeper"], shift["same"], shift["earlier"]) == (1.0, 0.0, 0.0)
    text = _shift(shift)
    assert "K = 2 saturates deeper than K = 1 (3 against 2): deeper in 1.00 of 400" in text
    assert "(K = 1 trained up to depth 4)" in text
    assert "saturation depth **3**" in _saturation(hard, "2")
    same = saturation_shift({"2": hard, "1": hard})
    assert (same["deeper"], same["same"], same["earlier"]) == (0.0, 1.0, 0.0)
    assert "saturates at the same depth" in _shift(same)
    never = saturation_depth(*_grid({1: 0.25, 2: 0.3}))
    beyond = saturation_shift({"2": never, "1": easy})
    assert beyond["deeper"] == 1.0 and "(beyond the grid against 2)" in _shift(beyond)
    assert "no trained depth reaches 0.90" in _saturation(never, "2")
    assert saturation_shift({"2": hard}) is None and saturation_shift({"2": hard,
                                                                      "1": None}) is None


def test_mechanism_lines_count_only_models_that_solve_the_task():
    from infodiv.experiments.depth_across import verdict_counts
    from infodiv.experiments.depth_answer import _mechanism
    from infodiv.experiments.depth_seeds import model_state

    v = {"detected": True, "calibrated": True, "finding": True, "no_test": False,
         "power": {"rate": 1.0, "ci": [0.8, 1.0]}, "false_positive": {"rate": 0.05,
                                                                     "ci": [0, 0.2]}}
    records = [{"model": "a", "hops": 1, "at_chance": True, "accuracy": 0.25,
                "verdicts": {"premise": v}},
               {"model": "b", "hops": 1, "at_chance": False, "accuracy": 0.95,
                "verdicts": {"premise": v}},
               {"model": "p", "hops": 1, "at_chance": False, "accuracy": 0.586,
                "verdicts": {"premise": v}},     # partial: above chance, below 0.90
               {"model": "c", "hops": 1, "at_chance": False, "accuracy": 0.99,
                "verdicts": {"premise": {**v, "detected": False, "finding": False}}}]

    def hops(rs):
        return {"verdicts": verdict_counts(rs),
                "seeds": {"threshold": 0.9, "states": {r["model"]: model_state(r) for r in rs}}}

    line, = _mechanism({"records": records}, hops(records), "1")
    assert ("in 1 of the 2 models that solve the task (held-out accuracy ≥ 0.90); power "
            "1.00–1.00") in line
    chance = [{**r, "at_chance": True} for r in records]
    line, = _mechanism({"records": chance}, hops(chance), "1")
    assert "none of the 4 analysed models solves the task (held-out accuracy ≥ 0.90)" in line


def _analysis(hops, depth, seed, acc, b=50):
    """A minimal per-model analysis (the fields summarise reads); model names repeat across
    difficulties, as the grid's do."""
    rng = np.random.default_rng(hops * 100 + depth * 10 + seed)
    k = [1 + 2 * j for j in range(depth + 1)]
    trunc = [0.25] * depth + [acc]
    fig = {"accuracy": acc, "accuracy_wilson95": [acc - 0.01, acc + 0.01],
           "cross_entropy": 1 - acc, "sq_diversity": acc / 10, "ce_diversity": acc / 5,
           "k": k, "junction_names": [f"j{x}" for x in k], "truncated_accuracy": trunc,
           "subsets_accuracy": {}}
    noise = rng.normal(0, 0.002, b)
    res = {name: fig[name] + noise for name in ("accuracy", "cross_entropy", "sq_diversity",
                                                 "ce_diversity")}
    res["usable_information"] = 2 * acc + noise
    res["truncated_accuracy"] = np.asarray(trunc)[None, :] + noise[:, None]
    return {"model": {"task": "hops", "hops": hops, "model": f"llama-d64-L{depth}-s{seed}",
                      "depth": depth, "shared": False, "seed": seed, "params": 1000 * depth,
                      "executions": depth, "n_members": 1 + 2 * depth, "width": 64,
                      "steps": 10},
            "n_examples": 2000, "max_exactness_error": 0.0, "figures": fig,
            "information": {"joint": 2 * acc, "joint_interval": [0, 2], "joint_lower": 0,
                            "joint_upper": 2, "joint_upper_kind": "h_y", "h_y": 2.0,
                            "relevancy": 1.0, "diversity": 0.0},
            "verdicts": {}, "cpu_s": 1.0, "resamples": res}


def test_two_difficulties_with_the_same_model_names_do_not_mix():
    """K = 2 needs 3 blocks, K = 1 needs 2; the models of both are named llama-d64-L<d>-s<s>.
    Every figure of a difficulty comes from its own models."""
    from infodiv.experiments.depth_across import summarise

    acc = {2: {1: 0.25, 2: 0.26, 3: 1.0}, 1: {1: 0.25, 2: 1.0, 3: 1.0}}
    analyses = [_analysis(h, d, s, a) for h, row in acc.items() for d, a in row.items()
                for s in range(3)]
    summary = summarise(analyses)
    for hops, row in acc.items():
        d = summary["by_hops"][str(hops)]
        means = {r["depth"]: r["accuracy"]["mean"] for r in d["by_depth"]}
        assert means == pytest.approx(row), hops
        assert d["saturation"]["accuracy"] == pytest.approx(list(row.values()))
        tv = {t["after_block"]: t["depth_model_accuracy"] for t in d["truncated_vs_depth"]}
        assert tv == pytest.approx({1: row[1], 2: row[2]}), hops
    shift = summary["saturation_shift"]
    assert (shift["harder_depth"], shift["easier_depth"], shift["deeper"]) == (3, 2, 1.0)


def test_a_depth_still_training_does_not_drop_seeds_of_the_others():
    """Depth 6 has seeds 0 and 1 only (seed 2 still training): depth 3 (1.00 / 0.58 / 0.98)
    keeps its median 0.98 over all three seeds, not the mean of two; its replicates draw
    its own three seeds (a draw with seed 1 twice fails: about 7/27 of them), and the record
    says the seeds are per depth."""
    from infodiv.experiments.depth_saturation import saturation_depth

    records, points, reps = _grid({1: 0.25, 3: 1.0, 6: 0.5}, b=2000, noise=0.0)
    points["L3-s1"]["accuracy"] = 0.58
    reps["L3-s1"]["accuracy"] = np.full(2000, 0.58)
    points["L3-s2"]["accuracy"] = 0.98
    reps["L3-s2"]["accuracy"] = np.full(2000, 0.98)
    keep = [r for r in records if r["model"] != "L6-s2"]
    sat = saturation_depth(keep, points, reps, random_state=2)
    assert sat["accuracy"] == pytest.approx([0.25, 0.98, 0.5])
    assert sat["depth"] == 3 and sat["seeds"] == "per depth"
    assert sat["replicates"]["share"]["3"] == pytest.approx(20 / 27, abs=0.03)
    assert sat["replicates"]["share"]["beyond"] == pytest.approx(7 / 27, abs=0.03)
    assert saturation_depth(records, points, reps)["seeds"] == [0, 1, 2]
