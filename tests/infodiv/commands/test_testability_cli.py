"""Testability through the command line: a run whose prompt reads out below chance while its
members carry the label is tested, and its page and summary state the raw accuracy; a run whose
labels are independent of its members claims nothing. Synthetic runs, no model."""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest

from infodiv.cli import main
from infodiv.controls import conditionally_independent_ensemble

CURVES = ["--objective", "accuracy", "mi_readout", "--n-curve-orders", "10", "--n-triples", "10",
          "--n-bootstrap", "20", "--power-replicates", "2", "--stability", "0", "--no-graph"]


def _folder(root, name, run):
    folder = root / name
    run.meta.update(model={"model_id": "synthetic", "name": "synthetic"}, task=name)
    run.save(folder / "contributions")
    assert main(["curves", str(folder), *CURVES]) == 0
    return folder


def _report(folder, capsys):
    capsys.readouterr()
    assert main(["report", str(folder)]) == 0
    printed = capsys.readouterr().out
    return (folder / "report.html").read_text(), printed


@pytest.mark.slow
def test_a_prompt_below_chance_with_informed_members_is_tested(tmp_path, capsys):
    run = conditionally_independent_ensemble(300, 5, mu=0.6, random_state=0)
    run.u = np.ascontiguousarray(run.u[:, :, ::-1])   # every member votes for the other option
    run.bias = run.bias[::-1].copy()
    run.logits = np.ascontiguousarray(run.logits[:, ::-1])
    acc = float(run.accuracy())
    assert acc < 0.3                                    # the raw readout is below chance
    folder = _folder(tmp_path, "flipped", run)
    doc = json.loads((folder / "curves" / "report.json").read_text())
    test = doc["testability"]
    assert test["testable"] and test["raw"]["chance"] == "below"
    assert test["raw"]["accuracy"] == pytest.approx(acc)
    # the members are judged on information; the raw readout's own curve measures the prompt
    records = doc["objectives"]["mi_readout"]["verdicts"]
    assert records and all(r["outcome"] != "untestable" for r in records.values())
    raw = doc["objectives"]["accuracy"]["verdicts"]
    assert raw and all(r["outcome"] == "untestable" and "below chance" in r["outcome_reason"]
                       for r in raw.values())
    page, printed = _report(folder, capsys)
    page = html.unescape(page)
    said = f"The model's own readout is below chance (accuracy {acc:.3g}"
    assert said in page and said in " ".join(printed.split())
    assert "a prompt effect: its members carry the label" in page
    assert "no claim is tested on this run" not in page


@pytest.mark.slow
def test_labels_independent_of_the_members_claim_nothing(tmp_path, capsys):
    run = conditionally_independent_ensemble(300, 5, mu=0.6, random_state=1)
    run.labels = np.random.default_rng(3).permutation(run.labels)
    folder = _folder(tmp_path, "independent", run)
    doc = json.loads((folder / "curves" / "report.json").read_text())
    assert not doc["testability"]["testable"]
    records = [*doc["objectives"]["accuracy"]["verdicts"].values(),
               *doc["objectives"]["mi_readout"]["verdicts"].values(),
               *doc["selection"]["inference"]["verdicts"].values()]
    assert records and all(r["outcome"] == "untestable" and not r["finding"] for r in records)
    page, printed = _report(folder, capsys)
    assert "no claim is tested on this run" in page
    assert "no claim is tested on this run" in " ".join(printed.split())
    # the answer paragraph states no conclusion of a claim
    text = re.search(r"<p class='answer-text' id='answer-text'>(.*?)</p>", page).group(1)
    assert not re.search(r"\b(holds on|absent on|the opposite on)\b", text)
