"""README.md and docs/ describe the product as it is: no development history.

History lives in ``git log``. A page that names a commit hash, an issue or session number, a
machine anecdote, a role, or a section about a previous version of itself fails here, with the
file, the line and the words found.
"""

from __future__ import annotations

import pytest
from _history_words import history_words
from _paths import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_has_no_development_history(page):
    found = history_words(page.read_text(encoding="utf-8"))
    assert not found, f"{page.relative_to(ROOT)}: " + "; ".join(
        f"line {n}: {kind} {words!r}" for n, kind, words in found[:20])


@pytest.mark.parametrize("text, kind", [
    ("measured at git 28ca820 on main", "commit hash"),
    ("as asked in issue 9", "issue number"),
    ("this session's run", "session"),
    ("measured on another machine", "a machine anecdote"),
    ("the lead stopped the job", "a role"),
    ("Claims of the previous version of this file", "a previous version"),
    ("second round of work", "numbered round of work"),
    ("the GGUF wheel could not be carried to it", "a machine anecdote"),
    ("measured on that machine", "a machine anecdote"),
    ("an earlier measurement took 85 s", "a previous version"),
    ("measured on another 2-core machine", "a machine anecdote"),
    ("half of the 520 CPU s of the pipeline the engine replaced", "a dated change"),
    ("The four failures that were infodiv's own before this change", "a dated change"),
    ("before this rule the estimate was set by rounding", "a dated change"),
    ("the upper side is now H(Y)", "a dated change"),
    ("these cases now pass", "a dated change"),
    ("it was no faster, so it was not kept", "a dated change"),
])
def test_history_words_are_caught(text, kind):
    assert [k for _, k, _ in history_words(text)] == [kind]


@pytest.mark.parametrize("text", [
    "p = 0.0014273 and 61 members", "a decade of research", "CE 0.693147 bits",
    "colour #1f77b4", "sha256 54a9c12c77e402fc14d6a66a506f24d999f596b0176eb777c972cccc2f9cc4b0",
    "the committed results file", "an earlier block writes to the residual",
    "half of them replaced by noisy copies of the strongest", "not met on this machine",
    "the members carry no detectable information", "the change in accuracy is small",
])
def test_ordinary_text_passes(text):
    assert history_words(text) == []
