"""What the claims share through :mod:`infodiv.claims._cases`: the three-part rule's words on
each claim's own side, one reader's name per matched surrogate kind and its size on a run."""

from __future__ import annotations

from types import SimpleNamespace

from infodiv.claims import CLAIMS
from infodiv.claims._cases import MATCHED_CASES, SURROGATE_SETTINGS


def test_three_part_rule_words_state_the_claims_side():
    scalar = [c for c in CLAIMS.values() if c.decide is None]
    assert len(scalar) >= 6
    for c in scalar:
        side = {"less": "below 0", "greater": "above 0"}[c.direction]
        assert f"95% CI and null-corrected CI {side}, label-null p({c.direction}) < " \
               "{alpha}" in c.rule, (c.name, c.rule)


def test_claims_of_a_shared_kind_name_and_size_it_alike():
    for c in CLAIMS.values():
        if c.surrogate in MATCHED_CASES and c.name != "premise":   # premise: its own words
            assert c.matched_case == MATCHED_CASES[c.surrogate], c.name
            assert c.surrogate_kwargs is SURROGATE_SETTINGS.get(c.surrogate), c.name


def test_planted_redundancy_copies_half_the_members_up_to_four():
    copies = SURROGATE_SETTINGS["planted_redundancy"]
    expected = {1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 3, 7: 3, 8: 4, 9: 4, 30: 4}
    for m, n in expected.items():
        assert copies(SimpleNamespace(n_members=m), None) == {"n_copies": n}


def test_planted_synergy_is_the_style_the_objective_can_read():
    style = SURROGATE_SETTINGS["planted_synergy"]
    expected = {"mi_knn": "xor", "mi_gaussian": "xor", "accuracy_calibrated": "cancel",
                "mi_usable": "cancel"}
    for objective, kind in expected.items():
        assert style(None, SimpleNamespace(objective=objective)) == {"style": kind}
