"""Greedy subset selection as a product feature (infodiv.subset) on runs whose best set is
known: the planted members are found, units group whole layers exactly, the budget form
returns the planted size, and the stability warning separates a planted run from noise."""

import numpy as np
import pytest
from _planted_runs import planted_run

from extraction.contributions import Contributions, Member
from infodiv.setfunctions import make_set_function
from infodiv.subset import (
    STABILITY_THRESHOLD,
    chance_jaccard,
    member_units,
    select_subset,
    unit_set_function,
)

PLANTED = ("L1.mlp#0", "L3.attn#0", "L4.mlp#0")


@pytest.fixture(scope="module")
def planted():
    return planted_run(PLANTED)


def test_select_finds_exactly_the_planted_members(planted):
    sel = select_subset(planted, 3, n_bootstrap=8, random_state=1)
    assert set(sel.chosen) == set(PLANTED) and sel.chosen_members == sel.chosen
    assert [set(h) for h in sel.stability["halves"]] == [set(PLANTED)] * 2
    sc, diff = sel.scores, sel.differences
    for s in sc.values():
        assert s["interval"][0] <= s["estimate"] <= s["interval"][1]
    # the depth prefix (embed, L0.attn, L0.mlp) carries nothing: at chance, far below the choice
    assert diff["chosen_minus_prefix"]["interval"][0] > 0.3
    assert abs(sc["prefix"]["estimate"] - sc["empty"]["estimate"]) < 0.08
    # the noise members dilute the summed readout: the chosen set beats the full model
    assert diff["chosen_minus_full"]["interval"][0] > 0
    assert sc["full"]["size"] == planted.n_members and sc["empty"]["size"] == 0
    assert sel.stability["mean_jaccard"] == 1.0 and not sel.unstable
    assert sel.stability["frequency"] == dict.fromkeys(sel.chosen, 1.0)


def test_best_random_set_is_the_best_on_the_selection_half():
    # one planted member, k = 1: 60 random singletons include it, and the selection half
    # picks it, so the best random set scores exactly as the greedy choice
    run = planted_run(("L2.attn#0",), n=300)
    sel = select_subset(run, 1, n_random=60, n_bootstrap=0)
    assert sel.chosen == ["L2.attn#0"] and sel.stability["n_replicates"] == 2
    assert sel.scores["best_random"]["estimate"] == sel.scores["chosen"]["estimate"]
    assert sel.differences["chosen_minus_best_random"]["estimate"] == 0.0


def test_same_seed_same_selection_and_json_ready(planted):
    import json

    a = select_subset(planted, 2, n_bootstrap=3, n_random=5, n_resamples=200, random_state=4)
    b = select_subset(planted, 2, n_bootstrap=3, n_random=5, n_resamples=200, random_state=4)
    assert json.dumps(a.to_dict()) == json.dumps(b.to_dict())
    assert a.to_dict()["member_names"] == planted.names


def test_layer_units_hold_attention_and_mlp_together(planted):
    units = member_units(planted, "layer")
    assert units.names == ["embed", "L0", "L1", "L2", "L3", "L4"]
    assert units.to_dict()["units"]["L3"] == ["L3.attn#0", "L3.mlp#0"]
    sel = select_subset(planted, 3, unit="layer", n_bootstrap=4)
    assert set(sel.chosen) == {"L1", "L3", "L4"}
    assert set(sel.chosen_members) == {f"L{i}.{k}#0" for i in (1, 3, 4) for k in ("attn", "mlp")}
    assert sel.scores["full"]["size"] == 6 and sel.sizes["U"] == 6


@pytest.mark.parametrize("objective", ["accuracy_calibrated", "mi_readout", "mi_gaussian"])
def test_unit_set_function_is_the_objective_of_the_union(planted, objective):
    units = member_units(planted, "layer")
    f_units = unit_set_function(planted, units, objective)
    f_members = make_set_function(planted, objective)
    for chosen in ([], [2], [1, 4], [0, 3, 5]):
        union = np.concatenate([units.members[t] for t in chosen] or [np.zeros(0, int)])
        np.testing.assert_allclose(f_units.scores(chosen), f_members.scores(union),
                                   rtol=1e-9, atol=1e-9)


def test_shared_blocks_and_head_units():
    members = [Member("embed", "embed"), Member("L0.attn#0.h0", "attn", 0, 0, 0),
               Member("L0.attn#0.h1", "attn", 0, 0, 1), Member("L0.attn#0.bias", "attn", 0),
               Member("L0.mlp#0", "mlp", 0), Member("L0.attn#1.h0", "attn", 0, 1, 0),
               Member("L0.attn#1.h1", "attn", 0, 1, 1), Member("L0.mlp#1", "mlp", 0, 1)]
    run = Contributions(np.zeros((8, 8, 2)), np.zeros(2), np.arange(8) % 2, np.zeros((8, 2)),
                        np.ones((8, 8)), members, ["a", "b"])
    layer = member_units(run, "layer")
    assert layer.names == ["embed", "L0#0", "L0#1"]      # a block run twice: two layers
    assert layer.to_dict()["units"]["L0#1"] == ["L0.attn#1.h0", "L0.attn#1.h1", "L0.mlp#1"]
    head = member_units(run, "head")
    assert head.names == ["embed", "L0.attn#0.h0", "L0.attn#0.h1", "L0.attn#0.bias",
                          "L0.mlp#0", "L0.attn#1.h0", "L0.attn#1.h1", "L0.mlp#1"]
    with pytest.raises(ValueError, match="granularity head"):
        member_units(planted_run(), "head")


def test_budget_form_returns_the_planted_size():
    # three planted members, every other member exactly zero: the full model's readout is the
    # planted three's, so 95 % of its held-out gain needs all three and no more
    run = planted_run(PLANTED, others="zero", signal=1.0, n=600)
    sel = select_subset(run, target=0.95, n_bootstrap=4)
    b = sel.budget
    assert sel.k == b["k"] == 3 and set(sel.chosen) == set(PLANTED)
    assert b["fraction_curve"][3] == pytest.approx(1.0) and b["fraction_curve"][2] < 0.95
    assert b["k_interval"][0] <= 3 <= b["k_interval"][1]
    assert b["fraction"]["interval"][0] <= b["fraction"]["estimate"]


def test_stability_warning_fires_on_noise_only():
    noise = planted_run(planted=(), n=200)
    sel = select_subset(noise, 3, n_bootstrap=8)
    st = sel.stability
    assert sel.unstable and st["mean_jaccard"] < STABILITY_THRESHOLD
    assert st["n_replicates"] == 10 and sum(st["frequency"].values()) == pytest.approx(3.0)
    assert st["chance_jaccard"] == pytest.approx(chance_jaccard(3, 11))
    # held out, the members picked from noise score at chance; in sample they look better
    lo, hi = sel.scores["chosen"]["interval"]
    assert lo < 1 / 3 < hi and sel.in_sample > sel.scores["chosen"]["estimate"]


def test_chance_jaccard_exact_cases():
    assert chance_jaccard(1, 2) == pytest.approx(0.5)      # same member with probability 1/2
    assert chance_jaccard(4, 4) == 1.0
    rng = np.random.default_rng(0)
    sim = np.mean([len(set(a) & set(b)) / len(set(a) | set(b)) for a, b in (
        (rng.choice(9, 3, replace=False), rng.choice(9, 3, replace=False))
        for _ in range(4000))])
    assert chance_jaccard(3, 9) == pytest.approx(sim, abs=0.02)


@pytest.mark.parametrize("kwargs, match", [
    ({"k": 12}, r"k must lie in \[1, 11\]"),
    ({"k": 2, "target": 0.5}, "either k or target"),
    ({"target": 1.5}, "fraction in"),
    ({"k": 2, "objective": "mi_knn"}, "per-example"),
    ({"k": 2, "unit": "block"}, "unit must be one of"),
])
def test_bad_arguments_say_what_is_wrong(planted, kwargs, match):
    with pytest.raises(ValueError, match=match):
        select_subset(planted, **kwargs)


def test_budget_without_any_gain_is_refused():
    # members that push the label's raw logit down: the full model is below the empty set's
    # chance level (ties split evenly: 1/3), so no fraction of its gain exists
    anti = planted_run(PLANTED, signal=-3.0, n=120)
    with pytest.raises(ValueError, match="no fraction"):
        select_subset(anti, target=0.9, objective="accuracy", n_bootstrap=0)
