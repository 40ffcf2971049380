"""The committed readings in docs/results quote only numbers copied from the committed JSON.

``docs/results/README.template.md`` holds the reading with ``{{file.json:key|spec}}``
placeholders; ``docs/results/README.md`` must equal the template with every placeholder filled
from the JSON beside it (``infodiv.reports.markdown.fill_numbers``; regenerate with
``python scripts/regenerate_results.py readme``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infodiv.reports.markdown import PLACEHOLDER, fill_numbers

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
TEMPLATES = sorted(RESULTS.glob("**/README.template.md"))


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: str(p.relative_to(RESULTS)))
def test_readme_numbers_come_from_the_json(template):
    readme = template.with_name("README.md")
    expected = fill_numbers(template.read_text(), template.parent)
    assert readme.read_text() == expected, (
        f"{readme} differs from its template filled from the JSON: run "
        "'python scripts/regenerate_results.py readme'")


def test_results_readme_is_templated():
    assert (RESULTS / "README.template.md").is_file()


def _write(tmp_path, **a):
    (tmp_path / "b.json").write_text(json.dumps({"a": a}))
    return tmp_path


def test_fill_numbers_tracks_the_json(tmp_path):
    (tmp_path / "r.json").write_text(json.dumps({"a": {"ci": [-1.234e-5, 2e-4], "p": 0.0399}}))
    text = "slope CI {{r.json:a.ci|.2g}}, p = {{r.json:a.p|.2f}}"
    assert fill_numbers(text, tmp_path) == "slope CI [\u22121.2e\u22125, 0.0002], p = 0.04"
    assert fill_numbers("{{b.json:a.ok|detected/not detected}}", _write(tmp_path, ok=False)) \
        == "not detected"
    (tmp_path / "r.json").write_text(json.dumps({"a": {"ci": [-1.234e-5, 2e-4], "p": 0.2}}))
    assert fill_numbers(text, tmp_path).endswith("p = 0.20")   # a changed number shows
    with pytest.raises(ValueError, match="no 'q'"):
        fill_numbers("{{r.json:a.q}}", tmp_path)
    with pytest.raises(ValueError, match="no file"):
        fill_numbers("{{s.json:a.p}}", tmp_path)
    import re

    assert not re.search(PLACEHOLDER, fill_numbers(text, tmp_path))


BLOCKS = ("smollm2-135m-sst2-block", "stories260k-sst2-block")


@pytest.mark.parametrize("folder", BLOCKS)
def test_block_reports_carry_the_added_verdicts(folder):
    """Every block objective has the diversity-effect verdict with its power and false-positive
    rate, the selection section its two verdicts, and each part's regeneration record says which
    commit added them (scripts/regenerate_results.sh stage ``verdicts``)."""
    doc = json.loads((RESULTS / folder / "report.json").read_text())
    parts = json.loads((RESULTS / folder / "regeneration.json").read_text())["parts"]
    for obj, entry in doc["objectives"].items():
        verdict = entry["report"]["verdicts"]["diversity_effect"]
        assert 0 <= verdict["power"]["rate"] <= 1 and 0 <= verdict["false_positive"]["rate"] <= 1
        assert parts[obj]["added_verdicts"]["names"] == ["diversity_effect"], obj
    verdicts = doc["selection"]["inference"]["verdicts"]
    assert set(verdicts) == {"greedy_beats_random", "greedy_beats_prefix"}
    assert all(0 <= v["power"]["rate"] <= 1 for v in verdicts.values())
    first = doc["settings"]["objective"][0]
    assert parts[first]["added_selection"]["commit"]
