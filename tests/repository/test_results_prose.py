"""A results page states no verdict in its own words: conclusions reach a page only through the
answer generator (``infodiv.reports.answer_text``), quoted from a JSON that equals what the
generator writes from the committed records now.

Three checks on every ``docs/results/**/README.template.md``:

- no placeholder renders a verdict field itself (``.detected``, ``.finding``, ``.outcome``,
  the ``detected/not detected`` format): a template that did would be writing its own verdict
  sentence around it;
- no sentence of the template's own text names a claim together with a conclusion word
  (holds, fails, detected, absent, opposite, inconclusive, no test, …);
- every quoted ``answer.json`` is what the regeneration script's ``page_answer`` (through
  :func:`infodiv.reports.answer.answer_document`) writes from the folder's records now (a hand
  edit of a record or of the answer fails here).
"""

from __future__ import annotations

import importlib.util
import json
import re

import pytest
from _paths import ROOT

RESULTS = ROOT / "docs" / "results"

TEMPLATES = sorted(RESULTS.glob("**/README.template.md"))

_VERDICT_FIELD = re.compile(r"\{\{[^}]*\.(detected|finding|outcome)\b[^}]*\}\}|"
                            r"\|detected/not detected\}\}")
_CLAIM = re.compile(r"diminishing returns|submodular|redundancy cost|premise|gains? (vs|against)"
                    r" (the )?control|marginal gain|diversity effect|greedy|nested sets|"
                    r"violations?|theorem 8", re.I)
_CONCLUSION = re.compile(r"(?<![*\w-])(holds?|fails?|detected|absent|opposite|inconclusive|"
                         r"no test|not a finding|confirm\w*|refut\w*|supported|goes the "
                         r"paper's way)(?![*\w])", re.I)


def _own_sentences(text: str) -> list[str]:
    """The template's own sentences: code blocks and placeholders removed (a placeholder's
    value is the JSON's, quoted)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"\{\{.*?\}\}", "X", text)
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n\s*\n|\n- ", text) if s.strip()]


def _id(p):
    return str(p.relative_to(RESULTS))


@pytest.mark.parametrize("template", TEMPLATES, ids=_id)
def test_no_template_renders_a_verdict_field(template):
    hits = _VERDICT_FIELD.findall(template.read_text())
    assert not hits, f"{_id(template)}: {len(hits)} placeholders render a verdict field"


@pytest.mark.parametrize("template", TEMPLATES, ids=_id)
def test_no_template_sentence_states_a_conclusion(template):
    bad = [s for s in _own_sentences(template.read_text())
           if _CLAIM.search(s) and _CONCLUSION.search(s)]
    assert not bad, f"{_id(template)}: {len(bad)} sentences state a conclusion: {bad[:3]}"


def test_the_checks_catch_hand_written_verdicts():
    """The two checks fire on the kinds of sentence the pages used to carry."""
    old = ("Diminishing returns **{{a.json:x.diminishing_returns.detected|detected/not "
           "detected}}** for calibrated accuracy. The premise fails on this run.")
    assert _VERDICT_FIELD.search(old)
    bad = [s for s in _own_sentences(old) if _CLAIM.search(s) and _CONCLUSION.search(s)]
    assert len(bad) == 1 and "premise fails" in bad[0]
    fine = "A claim *holds* when its rule fires. Diminishing returns: {{a.json:answer.text}}"
    assert not [s for s in _own_sentences(fine) if _CLAIM.search(s) and _CONCLUSION.search(s)]


ANSWERS = sorted(RESULTS.glob("*/answer.json"))


@pytest.fixture(scope="module")
def page_answer():
    spec = importlib.util.spec_from_file_location("regenerate_results",
                                                  ROOT / "scripts" / "regenerate_results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.page_answer


@pytest.mark.parametrize("path", ANSWERS, ids=lambda p: p.parent.name)
def test_every_answer_is_the_generators_from_the_records(path, page_answer):
    expected = page_answer(path.parent)
    assert json.loads(path.read_text()) == json.loads(json.dumps(expected)), path.parent.name


def test_every_run_page_with_records_has_a_generated_answer():
    """Each run folder with a curves report quotes a generated answer (its answer.json, or the
    AG News block page's report_page.json answer)."""
    for report in sorted(RESULTS.glob("*/report.json")):
        page = report.parent / "report_page.json"
        has = (report.parent / "answer.json").exists() or (
            page.exists() and "answer" in json.loads(page.read_text()))
        assert has, report.parent.name
