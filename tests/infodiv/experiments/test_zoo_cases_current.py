"""A zoo curves entry is reused only when every claim verdict in it was judged on the matched
case its claim declares now (infodiv.experiments.analyses.cases_current): a claim whose surrogate
changed makes the committed entry stale."""

from __future__ import annotations


def test_an_entry_judged_on_another_matched_case_is_stale():
    from infodiv.claims import CLAIMS
    from infodiv.experiments.analyses import cases_current

    names = ["redundancy_cost", "premise", "diminishing_returns"]
    entry = {"verdicts": {n: {"matched_case": CLAIMS[n].matched_case} for n in names}}
    assert cases_current(entry)
    assert cases_current({"verdicts": {}}) and cases_current({})
    stale = {"verdicts": {**entry["verdicts"],
                          "redundancy_cost": {"matched_case": "a matched case with planted "
                                              "redundancy (an earlier surrogate)"}}}
    assert not cases_current(stale)
    other = {"verdicts": {**entry["verdicts"], "not_a_claim": {"matched_case": "x"}}}
    assert cases_current(other)
