"""The answer paragraph is built from the records: each outcome has its own words, numbers come
from the line, an objective-free statistic is said once, an untestable run states no claim."""

from __future__ import annotations

from infodiv.claims import CLAIMS
from infodiv.reports.answer_text import answer_paragraph, clause, verdict_list


def _line(claim, objective, outcome, estimate, interval, **kw):
    c = CLAIMS[claim]
    return {"claim": claim, "short": c.short, "objective": objective, "outcome": outcome,
            "members_only": c.members_only,
            "conclusions": dict(c.conclusions), "estimate": estimate, "interval": interval,
            "units": c.units.replace("{units}", "bits"),
            "margin": kw.get("margin"), "n_needed": kw.get("n_needed"),
            "reason": kw.get("reason", ""), "power": kw.get("power"), "power_interval": None,
            "false_positive": None, "false_positive_interval": None, "sentence": c.sentence}


def _raw(acc, chance):
    return {"accuracy": acc, "accuracy_interval": [acc - 0.02, acc + 0.02],
            "majority_rate": 0.26, "n": 1000, "chance": chance}


def _block(lines, *, testable=True, chance="above", members=(0.9, [0.8, 1.0])):
    test = {"raw": _raw(0.2 if chance == "below" else 0.58, chance), "testable": testable,
            "members": {"value": members[0], "interval": members[1], "h_y": 2.0},
            "reason": ""}
    return {"raw": test["raw"], "testability": test, "theorem1": None, "information": None,
            "verdicts": lines}


def test_each_outcome_says_its_own_words_and_number():
    hold = _line("diminishing_returns", "mi_readout", "holds", -2.45e-4, [-3.8e-4, -1.3e-4])
    text = clause(hold)
    assert text.startswith("holds on information (mi_readout)")
    assert CLAIMS["diminishing_returns"].conclusions["holds"] in text
    assert "-0.000245" in text or "-2.45e-04" in text
    opp = _line("redundancy_cost", "accuracy", "opposite", -0.0312, [-0.0485, -0.00848])
    assert clause(opp).startswith("the opposite on accuracy")
    assert "-0.0312" in clause(opp)
    absent = _line("dr_mean_difference_positive", "accuracy", "absent", 0.0001, [0, 0.001],
                   margin=0.00137)
    assert "within δ = 0.00137" in clause(absent)
    inc = _line("gains_vs_control", "accuracy", "inconclusive", 0.001, [-0.01, 0.01],
                n_needed=3070)
    assert "n ≈ 3070 would decide" in clause(inc)
    why = _line("redundancy_cost", "mi_readout", "inconclusive", 0.1, [0.0, 0.2],
                reason="its rule fires on shuffled labels beyond its level")
    assert "fires on shuffled labels" in clause(why)


def test_a_statistic_of_the_members_alone_is_said_once():
    a = _line("premise", "accuracy", "holds", 0.0272, [0.0261, 0.0284])
    b = _line("premise", "mi_readout", "holds", 0.0272, [0.0261, 0.0284])
    text = " ".join(answer_paragraph(_block([a, b])))
    assert text.count("0.0272") == 1
    assert "holds on every objective" in text
    # the premise reads the members alone: said once, from the record with more resamples
    a["n_bootstrap"] = 200
    c = {**_line("premise", "mi_readout", "holds", 0.0273, [0.0255, 0.0291]), "n_bootstrap": 50}
    text = " ".join(answer_paragraph(_block([c, a])))
    assert text.count("dependence given Y") == 1 and "0.0273" not in text
    assert "holds on the members (one statistic for every objective)" in text and "0.0261" in text
    # a statistic of the objective with different numbers on the two objectives: each is said
    d = _line("redundancy_cost", "accuracy", "holds", 0.02, [0.01, 0.03])
    e = _line("redundancy_cost", "mi_readout", "holds", 0.17, [0.15, 0.19])
    text = " ".join(answer_paragraph(_block([d, e])))
    assert "0.02" in text and "0.17" in text and "every objective" not in text


def test_headline_reads_information_first_and_the_list_carries_every_line():
    acc = _line("diminishing_returns", "accuracy", "inconclusive", 1e-5, [-7e-5, 8e-5],
                n_needed=51049, power=0.0)
    mi = _line("diminishing_returns", "mi_readout", "holds", -2.45e-4, [-3.8e-4, -1.3e-4],
               power=0.7)
    text = " ".join(answer_paragraph(_block([acc, mi])))
    assert text.index("mi_readout") < text.index("on accuracy")
    assert "n ≈ 51049 would decide" in text
    listed = verdict_list(_block([acc, mi]))
    assert listed.count("\n") == 1 and "power 0.7," in listed and "n₈₀ ≈ 51049" in listed


def test_an_untestable_run_states_no_claim_and_a_below_chance_prompt_is_tested():
    dr = _line("diminishing_returns", "accuracy", "holds", -1e-3, [-2e-3, -5e-4])
    off = answer_paragraph(_block([dr], testable=False, members=(0.01, [-0.02, 0.03])))
    assert "no claim is tested" in " ".join(off)
    assert not any("Diminishing returns" in s for s in off)
    below = " ".join(answer_paragraph(_block([dr], chance="below")))
    assert "below chance" in below and "a prompt effect" in below
    assert "Diminishing returns (Theorems 5–7): holds" in below


def test_information_below_zero_is_flagged_and_said_once():
    info = {"joint": -0.0112, "joint_ci": [-0.0207, -0.00175], "h_y": 1.0,
            "error_lower_bound": 0.0, "error_upper_bound": 0.5, "best_readout_error": None}
    text = " ".join(answer_paragraph({**_block([], testable=True), "information": info}))
    assert "no detectable information" in text and "cannot" in text and "≥ -0.0112" not in text
    # an untestable run: what the members carry is said once, by the testability sentence
    off = " ".join(answer_paragraph({**_block([], testable=False, members=(-5e-4, [-0.006,
                                                                                   0.005])),
                                     "information": info}))
    assert "-0.0112" not in off and "no claim is tested" in off
