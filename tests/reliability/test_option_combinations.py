"""Options checked together (infodiv.commands.option_checks), through the real command line,
before any work: one line on stderr naming both options, exit 2, no traceback; ``--inference 0``
is honoured everywhere, so it needs no note."""

from __future__ import annotations

import pytest
from _cli_checks import one_line_error
from _synthetic_runs import saved_tiny_run

from infodiv.cli import main

#: (argv, the words the one line must hold); "x" is a run folder that does not exist: the
#: combination is refused before the folder is even looked at
REFUSED = [(argv.split(), words.split("|")) for argv, words in [
    ("curves x --no-inference --n-bootstrap 50", "--no-inference|--n-bootstrap 50"),
    ("curves x --no-inference --n-bootstrap=200", "--no-inference|--n-bootstrap 200"),
    ("curves x --n-permutations 30 --no-inference", "--no-inference|--n-permutations 30"),
    ("curves x --no-inference --power-replicates 5", "--no-inference|--power-replicates 5"),
    ("curves x --no-inference --n-orders 4", "--no-inference|--n-orders 4"),
    ("curves x --no-inference --objective-sizes mi_readout=50,10",
     "--no-inference|--objective-sizes mi_readout=50,10"),
    ("run --no-inference --n-bootstrap 50", "--no-inference|--n-bootstrap 50"),
    ("decompose x --info-null 50 --info-method none", "--info-null 50|--info-method none"),
    ("decompose x --info-method --info-null 50", "--info-null 50|--info-method"),
    ("run --info-null 50 --info-method none", "--info-null 50|--info-method none"),
    ("run --choice-n 100", "--choice-n 100|--choose-prompt"),
    ("run --choice-criterion accuracy", "--choice-criterion accuracy|--choose-prompt"),
]]


@pytest.mark.parametrize("argv, words", REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
def test_an_option_another_option_makes_unused_is_refused(capsys, argv, words):
    one_line_error(capsys, argv, *words)


def test_defaults_are_not_mistaken_for_choices(capsys):
    # --no-inference alone, --info-method none alone: the run folder is what is wrong
    for argv in (["curves", "x", "--no-inference"], ["decompose", "x", "--info-method", "none"]):
        err = one_line_error(capsys, argv, "x does not exist")
        assert "--n-bootstrap" not in err and "--info-null" not in err


@pytest.mark.parametrize("suffix, like", [(".txt", False), (".csv", True), ("", False)])
def test_validate_out_follows_its_suffix(capsys, tmp_path, suffix, like):
    out = tmp_path / f"rows{suffix}"
    argv = ["validate", "--out", str(out)] + (["--like", str(tmp_path)] if like else [])
    one_line_error(capsys, argv, "--out", ".json")
    assert not out.exists()


def test_report_refuses_the_same_run_twice(capsys, tmp_path):
    run = saved_tiny_run(tmp_path / "run")
    one_line_error(capsys, ["report", str(run), str(run)], "given twice", "give each run once")
    # a run folder and its contributions/ are the same run
    root = tmp_path / "folder"
    saved_tiny_run(root / "contributions")
    (root / "run.json").write_text("{}")
    one_line_error(capsys, ["report", str(root), str(root / "contributions")], "given twice")
    assert not (run / "report.html").exists() and not (root / "report.html").exists()


@pytest.fixture
def fake_decompose(monkeypatch):
    """The decompose stage replaced by a recorder: the test is about what is said before."""
    import infodiv.study.pipeline as pipeline

    seen = []

    def stage(contrib, out, settings, **kw):
        seen.append(settings)
        return {"run": {"N": contrib.n_examples, "M": contrib.n_members, "C": 2,
                        "accuracy": 0.5}}

    monkeypatch.setattr(pipeline, "decompose_stage", stage)
    return seen


def test_inference_zero_is_honoured_so_nothing_is_said(capsys, tmp_path, fake_decompose):
    """``--inference 0`` draws no example resample in any stage (every variant, model-based
    terms included: tests/infodiv/commands/test_decompose_inference_zero.py), so no option
    combination needs a note."""
    run = saved_tiny_run(tmp_path / "run")
    for extra in (["--info-method", "usable", "gaussian"], ["--info-method", "copula"],
                  ["--no-every-variant"]):
        assert main(["decompose", str(run), "--inference", "0", *extra]) == 0
        assert capsys.readouterr().err == ""
        assert fake_decompose[-1].decompose.n_resamples == 0


def test_given_options_are_recorded_and_are_no_settings():
    from infodiv.cli import build_parser
    from infodiv.commands.options import study_settings

    args = build_parser().parse_args(["curves", "x", "--n-bootstrap", "30", "--seed=3"])
    assert args._given == {"n_bootstrap", "seed"}
    s = study_settings(args)
    assert s.inference.n_bootstrap == 30 and s.seed == 3


def test_a_page_without_inference_claims_no_resample_sizes(tmp_path):
    """``--no-inference``: the summary says no verdicts were run, not the default B and K."""
    import json

    from infodiv.reports.curves_md import curves_markdown

    run = saved_tiny_run(tmp_path / "run", n=60)
    assert main(["curves", str(run), "--no-inference", "--no-graph", "--no-selection-verdicts",
                 "--out", str(tmp_path / "curves")]) == 0
    doc = json.loads((tmp_path / "curves" / "report.json").read_text())
    text = (tmp_path / "curves" / "report.md").read_text()
    assert doc["settings"]["inference"] is False
    assert "no verdicts: inference off" in text and "B = " not in text.split("\n")[2]
    doc["settings"]["inference"] = True   # the same document with inference on names its sizes
    assert f"B = {doc['settings']['n_bootstrap']} example resamples" in curves_markdown(doc)
