"""`infodiv curves RUN_DIR` end to end on a small synthetic run directory (issue 5)."""

import json

from infodiv.cli import main
from infodiv.controls import conditionally_independent_ensemble


def test_curves_command_writes_report_and_figures(tmp_path):
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
