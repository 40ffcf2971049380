"""The claim registry: a claim's group, label and words are its attributes, every list of
claims is read from the registry, and a claim added from outside the package shows up in the
command line's choices, the records and the page."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from _paths import ROOT

from infodiv.claims import CLAIMS, claim_names, get_claim, register
from infodiv.inference.claim import GROUPS


def test_every_claim_states_its_group_label_and_words():
    assert len(CLAIMS) >= 11
    for name, c in CLAIMS.items():
        assert c.group in GROUPS and c.short, name
        for words in (c.theorem, c.statistic_name, c.sentence):
            assert words and words == " ".join(words.split()), name
    assert claim_names("selection") == ("greedy_beats_random", "greedy_beats_prefix")
    assert claim_names("report") == ("theorem8",)
    assert set(claim_names()) == set(CLAIMS)
    assert set(claim_names(("curve", "control"), default=True)) == {
        "diminishing_returns", "dr_mean_difference_positive", "violations", "diversity_effect",
        "premise", "redundancy_cost"}
    with pytest.raises(ValueError, match="unknown claim groups"):
        claim_names("curves")


@pytest.mark.slow
def test_the_package_imports_with_docstrings_stripped():
    """Nothing reads a docstring at import time: every module of the three packages imports
    under ``python -OO`` (which strips them) and the command line builds its parser."""
    code = ("import importlib, pkgutil, estimators, extraction, infodiv\n"
            "for pkg in (infodiv, extraction, estimators):\n"
            "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
            "        importlib.import_module(m.name)\n"
            "from infodiv.cli import build_parser; build_parser()\n")
    res = subprocess.run([sys.executable, "-OO", "-c", code], cwd=ROOT, capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr[-2000:]


def test_a_second_claim_under_a_registered_name_is_refused():
    with pytest.raises(ValueError, match="already registered"):
        register(get_claim("premise"))
    with pytest.raises(TypeError, match="must be an infodiv.inference.claim.Claim"):
        register("premise")


TOY = '''
"""A toy claim: the mean of the first member's first logit is above 0."""
from infodiv.claims._cases import scalar_claim


def statistic(rep):
    return float(rep.run.u[:, 0, 0].mean())


CLAIM = scalar_claim(name="toy_first_member", statistic=statistic, direction="greater",
                     surrogate="conditionally_independent", rule_name="mean first logit",
                     group="curve", short="toy", theorem="a toy theorem",
                     statistic_name="mean of the first member's first logit",
                     sentence="the first member leans towards the first option")
'''


@pytest.fixture
def toy_claim(tmp_path, monkeypatch):
    (tmp_path / "toy_claim_module.py").write_text(textwrap.dedent(TOY))
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    module = importlib.import_module("toy_claim_module")
    monkeypatch.setitem(CLAIMS, module.CLAIM.name, module.CLAIM)   # one registry row
    yield module.CLAIM
    sys.modules.pop("toy_claim_module", None)


def test_a_claim_from_a_new_module_reaches_the_choices_the_records_and_the_page(
        toy_claim, tmp_path):
    from infodiv.cli import build_parser
    from infodiv.inference import dependent_ensemble
    from infodiv.reports.html import write_report
    from infodiv.study import StudySettings
    from infodiv.study.curves import curves_stage

    args = build_parser().parse_args(["curves", "RUN", "--claims", "toy_first_member"])
    assert args.claims == ["toy_first_member"]
    run = dependent_ensemble(120, 4, signal=0.6, rho=0.2, random_state=0)
    run.meta.update(model="synthetic", task="toy")
    folder = tmp_path / "run"
    run.save(folder / "contributions")
    s = StudySettings().with_settings(objectives=("accuracy",), claims=("toy_first_member",),
                                      n_curve_orders=4, n_triples=2, stability=0, graph=False,
                                      n_bootstrap=20, power_replicates=0,
                                      selection_verdicts=False)
    doc = curves_stage(run, folder / "curves", s, log=lambda *a: None)
    rec = doc["objectives"]["accuracy"]["verdicts"]["toy_first_member"]
    assert rec["sentence"] == toy_claim.sentence and rec["n_bootstrap"] == 20
    assert rec["estimate"] == pytest.approx(float(run.u[:, 0, 0].mean()))
    page = write_report([folder], folder / "report.html").read_text()
    assert toy_claim.sentence in page


def test_docs_list_every_registered_claim():
    from _paths import ROOT

    from infodiv.claims import CLAIMS, claims_table

    text = (ROOT / "docs" / "claims.md").read_text()
    table = text.split("<!-- claims-table -->\n", 1)[1].split("\n<!-- /claims-table -->")[0]
    assert table == claims_table()
    assert all(f"| `{name}` |" in table for name in CLAIMS) and len(CLAIMS) >= 11
