"""A claim's words come from its module docstring (infodiv.claims._cases.claim_words)."""

from __future__ import annotations

import importlib

import pytest

from infodiv.claims import CLAIMS
from infodiv.claims._cases import claim_words

DOC = """Claim: something.

Prose that mentions :theorem: inside a line is not a field.

:theorem: Theorem 9: one
    two
:statistic: a slope
:sentence: it
    holds
    here

After a blank line: no longer the sentence.
"""


def test_fields_join_their_continuation_lines():
    assert claim_words(DOC) == {"theorem": "Theorem 9: one two", "statistic_name": "a slope",
                                "sentence": "it holds here"}


def test_missing_and_repeated_fields_are_named():
    with pytest.raises(ValueError, match=r"lacks 2 of the claim's fields: :statistic:, "
                                         r":sentence:"):
        claim_words(":theorem: only this\n")
    with pytest.raises(ValueError, match="repeats the field :sentence:"):
        claim_words(DOC + ":sentence: again\n")


@pytest.mark.parametrize("module", ["diminishing_returns", "diversity_effect", "dr_mean",
                                    "gains_vs_control", "marginal_gain", "premise",
                                    "redundancy_cost", "theorem8", "violations"])
def test_registered_words_are_the_docstrings(module):
    mod = importlib.import_module(f"infodiv.claims.{module}")
    claim = CLAIMS[mod.CLAIM.name]
    words = claim_words(mod.__doc__)
    assert (claim.theorem, claim.statistic_name, claim.sentence) == (
        words["theorem"], words["statistic_name"], words["sentence"])
    assert "  " not in claim.sentence and claim.sentence == claim.sentence.strip()
