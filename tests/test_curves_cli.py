"""`infodiv curves RUN_DIR` end to end on a small synthetic run directory (issue 5)."""

import json

from infodiv.cli import main
from infodiv.controls import conditionally_independent_ensemble


def test_curves_command_writes_report_and_figures(tmp_path, capsys):
    run = conditionally_independent_ensemble(300, 6, mu=0.5, random_state=0)
    run.meta.update(model="synthetic", task="ci-control")
    run.save(tmp_path / "run")
    out = tmp_path / "out"
    rc = main(["curves", str(tmp_path / "run"), "--objective", "accuracy", "mi_gaussian",
               "--out", str(out), "--n-permutations", "20", "--n-triples", "10",
               "--n-bootstrap", "100", "--stability", "3"])
    assert rc == 0
    doc = json.loads((out / "report.json").read_text())
    assert set(doc["objectives"]) == {"accuracy", "mi_gaussian"}
    rep = doc["objectives"]["mi_gaussian"]["report"]
    assert rep["dr"]["n_bootstrap"] == 100 and "slope" in rep["gain_slope"]
    assert "prefix" in rep["information"]
    for name in ("curves_accuracy.png", "gains_mi_gaussian.png", "shapley_accuracy.png",
                 "layer_graph.png", "layer_graph.graphml", "report.md"):
        assert (out / name).stat().st_size > 100, name
    md = (out / "report.md").read_text()
    assert "gain profile slope" in md and "Chow-Liu" in md and "negative control" in md
    assert doc["objectives"]["accuracy"]["control_modular"]["significant_violation_rate"] == 0
    assert doc["run"]["model"] == "synthetic"
    # power by default: the final summary prints every verdict with its detection rate
    said = capsys.readouterr().out
    for obj in ("accuracy", "mi_gaussian"):
        assert doc["objectives"][obj]["report"]["power"]["n_replicates"] == 20
        assert f"infodiv curves: {obj}: diminishing returns: " in said
    assert "is detected with probability" in said


def test_power_replicates_flag_zero_skips_the_power(tmp_path, capsys):
    run = conditionally_independent_ensemble(120, 4, mu=0.5, random_state=0)
    run.save(tmp_path / "run")
    rc = main(["curves", str(tmp_path / "run"), "--objective", "accuracy", "--out",
               str(tmp_path / "out"), "--n-permutations", "20", "--n-triples", "5",
               "--n-bootstrap", "100", "--stability", "0", "--no-graph",
               "--power-replicates", "0"])
    assert rc == 0
    rep = json.loads((tmp_path / "out" / "report.json").read_text())["objectives"]["accuracy"]
    assert rep["report"]["power"] is None
    assert "power not computed" in capsys.readouterr().out
