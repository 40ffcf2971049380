"""`infodiv select RUN` on a saved run whose best set is known: the table names the planted
members (whole layers with --unit layer) with their held-out score against prefix, random and
full, and the stability; the JSON holds every number; bad input is one line and exit 2; and the
curves stage's report.json names the members."""

import json

import pytest
from _cli_checks import one_line_error
from _planted_runs import planted_run

from infodiv.cli import main

PLANTED = ("L1.mlp#0", "L3.attn#0", "L4.mlp#0")
FAST = ["--n-bootstrap", "6", "--n-random", "10", "--n-resamples", "200"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("select") / "run"
    planted_run(PLANTED).save(folder)
    return folder


def test_select_prints_the_planted_members_and_writes_json(run_dir, tmp_path, capsys):
    out = tmp_path / "sel.json"
    assert main(["select", str(run_dir), "--k", "3", "--out", str(out), *FAST]) == 0
    said = capsys.readouterr().out
    table = said.split("held-out scores")[0]
    assert all(name in table for name in PLANTED) and "chosen 3 members" in table
    for row in ("chosen (greedy)", "depth prefix (embed…L0.mlp#0)", "best of 10 random sets",
                "full model", "empty set (chance level)", "stability: mean Jaccard 1.00"):
        assert row in said, row
    assert "warning" not in said and f"wrote {out}" in said
    doc = json.loads(out.read_text())
    assert set(doc["chosen"]) == set(PLANTED) and doc["stability"]["unstable"] is False
    assert doc["run"]["model"] == "planted" and doc["units_of"] == "member"
    assert set(doc["differences"]) == {"chosen_minus_prefix", "chosen_minus_best_random",
                                       "chosen_minus_full"}
    assert doc["member_names"][0] == "embed" and len(doc["member_names"]) == 11
    # an existing file is kept unless --overwrite
    before = out.read_text()
    one_line_error(capsys, ["select", str(run_dir), "--out", str(out), *FAST], "--overwrite")
    assert out.read_text() == before
    assert main(["select", str(run_dir), "--k", "2", "--out", str(out), "--overwrite",
                 *FAST]) == 0
    assert json.loads(out.read_text())["k"] == 2


def test_unit_layer_prints_whole_layers(run_dir, capsys):
    assert main(["select", str(run_dir), "--k", "3", "--unit", "layer", *FAST]) == 0
    said = capsys.readouterr().out
    assert "chosen 3 layers" in said and "6 layers: a layer = its attention and MLP" in said
    for i in (1, 3, 4):
        assert f"L{i}.attn#0 + L{i}.mlp#0" in said


def test_budget_form_on_the_command_line(tmp_path, capsys):
    planted_run(PLANTED, others="zero", signal=1.0, n=600).save(tmp_path / "zero")
    assert main(["select", str(tmp_path / "zero"), "--target", "0.95", *FAST]) == 0
    said = capsys.readouterr().out
    assert "reaching 95% of the full model's held-out gain over the empty set has k = 3" in said


def test_unstable_choice_is_said_in_words(tmp_path, capsys):
    planted_run(planted=(), n=200).save(tmp_path / "noise")
    out = tmp_path / "noise.json"
    assert main(["select", str(tmp_path / "noise"), "--k", "3", "--out", str(out), *FAST]) == 0
    assert "warning: the choice is unstable" in capsys.readouterr().out
    assert json.loads(out.read_text())["stability"]["unstable"] is True


@pytest.mark.parametrize("extra, needle", [
    (["--k", "0"], "must be at least 1"),
    (["--k", "12"], "k must lie in [1, 11]"),
    (["--target", "1.5"], "fraction in (0, 1]"),
    (["--k", "3", "--target", "0.5"], "not allowed with argument"),
    (["--unit", "head"], "granularity head"),
    (["--unit", "block"], "invalid choice"),
    (["--objective", "mi_knn"], "per-example"),
    (["--n-bootstrap", "-1"], "must be at least 0"),
])
def test_bad_input_is_one_line_exit_2(run_dir, capsys, extra, needle):
    try:
        one_line_error(capsys, ["select", str(run_dir), *extra, *FAST], needle)
    except SystemExit as exc:     # refused by the option parser, before the run is read
        err = capsys.readouterr().err.strip()
        assert exc.code == 2 and "\n" not in err and needle in err, err


def test_bad_paths_are_one_line_exit_2(run_dir, tmp_path, capsys):
    one_line_error(capsys, ["select", str(tmp_path / "nowhere")], "does not exist")
    one_line_error(capsys, ["select", str(run_dir), "--out", str(tmp_path)], "is a folder")
    one_line_error(capsys, ["select", str(run_dir), "--out", str(tmp_path / "no" / "x.json")],
                   "does not exist")


def test_curves_report_json_names_the_members(tmp_path, monkeypatch):
    from infodiv.study import curves
    from infodiv.study.curves import curves_stage
    from infodiv.study.settings import StudySettings

    for plot in ("plot_answer_curves", "plot_layer_curves", "plot_gains", "plot_shapley"):
        monkeypatch.setattr(curves, plot, lambda *a, **k: None)   # the figures are not tested

    run = planted_run(PLANTED, n=120)
    s = StudySettings().with_settings(objectives=("accuracy",), n_curve_orders=4, n_triples=2,
                                      n_bootstrap=20, verdicts=False, graph=False, stability=0,
                                      selection_verdicts=False)
    curves_stage(run, tmp_path / "curves", s, log=lambda *a: None)
    doc = json.loads((tmp_path / "curves" / "report.json").read_text())
    assert doc["objectives"]["accuracy"]["curves"]["member_names"] == run.names
