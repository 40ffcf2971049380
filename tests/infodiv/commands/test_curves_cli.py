"""`infodiv curves RUN_DIR` end to end on a small synthetic run directory: point estimates,
one verdict record per claim from the engine, figures, markdown, size options that mean what
they say."""

import json

import numpy as np
import pytest

from infodiv.claims import claim_names
from infodiv.cli import main
from infodiv.controls import conditionally_independent_ensemble
from infodiv.inference.record import VerdictRecord


def _curves(tmp_path, *extra, n=200, m=5):
    run = conditionally_independent_ensemble(n, m, mu=0.5, random_state=0)
    run.meta.update(model="synthetic", task="ci-control")
    run.save(tmp_path / "run")
    out = tmp_path / "out"
    rc = main(["curves", str(tmp_path / "run"), "--out", str(out), "--n-curve-orders", "20",
               "--n-triples", "8", "--stability", "2", *extra])
    assert rc == 0
    return json.loads((out / "report.json").read_text()), out


def test_curves_command_writes_records_and_figures(tmp_path, capsys):
    doc, out = _curves(tmp_path, "--objective", "accuracy", "--n-bootstrap", "20",
                       "--power-replicates", "3")
    entry = doc["objectives"]["accuracy"]
    # one verdict record per default claim, each a valid record whose sizes are the options
    assert set(entry["verdicts"]) == set(doc["settings"]["claims"]) == set(
        claim_names(("curve", "control"), default=True))
    for name, rec in entry["verdicts"].items():
        r = VerdictRecord.from_dict(rec)
        r.check()   # every interval contains its estimate
        assert r.n_bootstrap == 20 and r.n_permutations == 20, name   # K = B by default
        assert r.power["n"] == 3 and r.false_positive["n"] == 3, name
    # the point estimates: f(empty) and f(all) are the random-order curve's ends
    rand = entry["curves"]["curves"]["random"]["values"]
    assert entry["point"]["f_empty"] == rand[0] and entry["point"]["f_all"] == rand[-1]
    assert "ci" not in json.dumps(entry["point"]).replace("curvature", "")
    for name in ("curves_accuracy.png", "gains_accuracy.png", "shapley_accuracy.png",
                 "layer_graph.png", "layer_graph.graphml", "report.md"):
        assert (out / name).stat().st_size > 100, name
    md = (out / "report.md").read_text()
    slope = entry["verdicts"]["diminishing_returns"]
    assert f"{slope['estimate']:.3g}" in md and "Chow-Liu" in md
    said = capsys.readouterr().out
    assert "infodiv curves: accuracy: diminishing returns: " in said
    assert "is detected with probability" in said
    sel = doc["selection"]["inference"]["verdicts"]
    assert set(sel) == {"greedy_beats_random", "greedy_beats_prefix"}


def test_size_options_mean_what_they_say(tmp_path):
    doc, _ = _curves(tmp_path, "--objective", "accuracy", "--n-bootstrap", "24",
                     "--n-permutations", "30", "--power-replicates", "0", "--claims",
                     "diminishing_returns", "--no-graph", n=120, m=4)
    rec = doc["objectives"]["accuracy"]["verdicts"]["diminishing_returns"]
    assert list(doc["objectives"]["accuracy"]["verdicts"]) == ["diminishing_returns"]
    assert rec["n_bootstrap"] == 24 and rec["n_permutations"] == 30
    assert rec["power"] is None and "power not computed" in rec["text"]
    assert doc["settings"]["n_bootstrap"] == 24 and doc["settings"]["n_permutations"] == 30


def test_no_inference_leaves_point_estimates_only(tmp_path):
    doc, out = _curves(tmp_path, "--objective", "accuracy", "--no-inference", "--no-graph",
                       n=120, m=4)
    entry = doc["objectives"]["accuracy"]
    assert "verdicts" not in entry and np.isfinite(entry["point"]["f_all"])
    assert "no inference" in (out / "report.md").read_text()


@pytest.mark.parametrize("argv, word", [(["--claims", "no_such_claim"], "no_such_claim"),
                                        (["--n-bootstrap", "5"], "--n-bootstrap"),
                                        (["--n-permutations", "3"], "--n-permutations")])
def test_bad_sizes_and_claims_are_refused_before_any_work(tmp_path, capsys, argv, word):
    with pytest.raises(SystemExit) as exc:
        main(["curves", str(tmp_path / "absent"), *argv])
    assert exc.value.code == 2
    assert word in capsys.readouterr().err
