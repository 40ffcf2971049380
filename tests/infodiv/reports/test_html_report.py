"""The self-contained HTML report: content checks, then a render in headless Chromium
(screenshot, every image loaded, no console error). Built on a synthetic run folder, no model."""

from __future__ import annotations

import base64
import csv
import io
import json
import re

import pytest
from _chromium import chromium_or_skip_reason, inspect_page
from PIL import Image

from infodiv.cli import main
from infodiv.reports.html import write_report
from infodiv.reports.summary import fmt


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    from infodiv.controls import conditionally_independent_ensemble

    root = tmp_path_factory.mktemp("runs") / "synthetic-ci-n200-0shot-block"
    run = conditionally_independent_ensemble(200, 5, mu=0.5, random_state=0)
    run.meta.update(model={"model_id": str(root.parent / "weights" / "synthetic"),
                           "name": "synthetic", "weights_sha256": "ab" * 32},
                    task="ci-control", n_examples=200, granularity="block", dtype="float32",
                    device="cpu", versions={"numpy": "x", "torch": "y"},
                    max_exactness_error=1.5e-6, exactness_rtol=1e-4, exactness_ok=True)
    run.save(root / "contributions")
    (root / "run.json").write_text(json.dumps({"config": {"seed": 0, "shots": 0},
                                               "command": "infodiv run ...", "stages": {}}))
    assert main(["decompose", str(root), "--info-method", "usable", "gaussian",
                 "--info-null", "0"]) == 0
    assert main(["curves", str(root), "--objective", "accuracy", "mi_gaussian",
                 "--n-curve-orders", "10", "--n-triples", "10", "--n-bootstrap", "20",
                 "--power-replicates", "2", "--stability", "0"]) == 0
    return root


def test_fmt_rounds_for_reading():
    assert fmt(-0.001886467889908257) == "-0.00189" and fmt(-0.000188646) == "-1.89e-04"
    assert fmt(0.5252293577981652) == "0.525"
    assert fmt(30.969396619045913) == "31"
    assert fmt(123456.7) == "1.23e+05" and fmt(872) == "872" and fmt(None) == "–"
    assert fmt(4391.48) == "4391" and fmt(999.4) == "999"


@pytest.mark.slow
def test_page_content(run_folder):
    page = write_report([run_folder], run_folder / "report.html")
    text = page.read_text()
    for needle in ("synthetic", "ci-control", "200 examples, 5 members, 2 options",
                   "numpy x, torch y", "exact</span>", "1.50e-06", "Bias–diversity",
                   "I(U;Y)", "random-order gain profile g(k)", "Eq. 12", "infodiv run ..."):
        assert needle in text, needle
    for needle in ("label-permutation null", "null-corrected", "verdict: diminishing returns",
                   "Information: intervals and label-permutation nulls",
                   "example bootstrap, everything refitted"):   # infodiv.inference, when run
        assert needle in text, needle
    assert "across tasks" not in text and "Figure 3 on this run" in text   # one task: no "across"
    assert str(run_folder.parent) not in text and "/tmp/" not in text
    visible = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", text)
    assert not re.search(r"\d\.\d{6,}", visible), "an unrounded number reached the page"
    imgs = re.findall(r"<img src='data:image/png;base64,([A-Za-z0-9+/=]+)'", text)
    assert len(imgs) == len(list(run_folder.glob("*/*.png"))) >= 6
    for b in imgs:   # every embedded figure is a complete PNG
        Image.open(io.BytesIO(base64.b64decode(b))).load()
    assert "<script" not in text and "http" not in visible.replace("http-equiv", "")
    rows = list(csv.DictReader(open(run_folder / "report.csv")))
    assert rows and all(r["estimator"] and r["n"] == "200" for r in rows if r["value"])
    full = json.loads((run_folder / "report.json").read_text())
    assert full[0]["header"]["N"] == 200


def _synthetic_run(root, model, task, shared=False, seed=0):
    from dataclasses import replace

    from infodiv.controls import conditionally_independent_ensemble

    run = conditionally_independent_ensemble(150, 6, mu=0.4, random_state=seed)
    if shared:   # every block executed twice: the second half are execution 1
        half = len(run.members) // 2
        run.members = [replace(m, execution=int(i >= half)) for i, m in enumerate(run.members)]
    run.meta.update(model={"model_id": model, "name": model}, task=task, n_examples=150)
    folder = root / f"{model}-{task}"
    run.save(folder / "contributions")
    (folder / "run.json").write_text(json.dumps({"config": {"seed": 0}, "stages": {}}))
    assert main(["decompose", str(folder), "--info-method", "none"]) == 0
    return folder


@pytest.mark.slow
def test_multi_run_page_has_the_cross_run_figures_and_table_1(tmp_path):
    folders = [_synthetic_run(tmp_path, "plain", "sst2", seed=0),
               _synthetic_run(tmp_path, "plain", "rte", seed=1),
               _synthetic_run(tmp_path, "shared", "sst2", shared=True, seed=2),
               _synthetic_run(tmp_path, "shared", "rte", shared=True, seed=3)]
    page = write_report(folders, tmp_path / "all.html")
    text = page.read_text()
    for needle in ("All runs", "Across runs: Figure 3", "Across runs: Figure 6",
                   "Across runs: Table 1", "Figure 3: correlation", "Figure 6: performance"):
        assert needle in text, needle
    assert (tmp_path / "all_figure3.png").is_file() and (tmp_path / "all_figure6.png").is_file()
    rows = list(csv.DictReader(open(tmp_path / "all.csv")))
    table1 = [r for r in rows if r["section"].startswith("Across runs: Table 1")]
    assert table1 and all(r["run"] == "all runs" for r in table1)


@pytest.mark.slow
def test_html_renders_in_headless_chromium(run_folder, tmp_path):
    reason = chromium_or_skip_reason()
    if reason:
        pytest.skip(reason)
    page = write_report([run_folder], run_folder / "report.html")
    doc = inspect_page(page, tmp_path / "shot.png", first_screen=tmp_path / "first.png")
    assert doc["errors"] == []
    box = doc["verdicts"]   # every verdict row is on the first 1400 x 900 screen
    assert box is not None and box["top"] < 900 and box["left"] < 1400
    assert box["top"] + box["height"] <= 900, box
    said = doc["answer"]    # the answer paragraph opens the page, above the table
    assert said is not None and said["box"]["top"] + said["box"]["height"] <= box["top"]
    assert said["text"].startswith("The model's own readout is above chance")
    for needle in ("Diminishing returns (Theorems 5–7):", "Is redundancy the reason",
                   "Theorem 8 bounds", "Selection on held-out examples"):
        assert needle in said["text"], needle
    page_text = page.read_text()
    for needle in ("Theorem 1: loss", "What all members know about the label", "Theorems 5–6",
                   "Theorem 8 (Eq. 12)", "Theorems 5-7 · accuracy"):
        assert needle in page_text, needle
    with Image.open(tmp_path / "first.png") as first:
        assert first.size == (1400, 900)
    assert doc["title"].startswith("infodiv: synthetic on ci-control")
    assert len(doc["images"]) >= 6
    broken = [i["alt"] for i in doc["images"] if not (i["complete"] and i["width"] > 0)]
    assert broken == []
    shot = (tmp_path / "shot.png").read_bytes()
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 20_000


@pytest.mark.slow
def test_the_browser_check_sees_a_broken_image_and_a_console_error(tmp_path):
    reason = chromium_or_skip_reason()
    if reason:
        pytest.skip(reason)
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><title>bad</title><img alt='x' src='data:image/png;base64,"
                   "AAAA'><script>console.error('boom'); missing_function();</script>")
    doc = inspect_page(bad, tmp_path / "bad.png")
    assert [i["width"] for i in doc["images"]] == [0]
    assert any("boom" in e for e in doc["errors"])
    assert any("missing_function" in e for e in doc["errors"])


@pytest.mark.slow
def test_figure6_never_averages_over_different_tasks(tmp_path):
    """Two models run on different tasks: no Figure 6 (it would compare the tasks), and the page
    says why; with one task in common, the average is over that task only and says so."""
    a = _synthetic_run(tmp_path, "alpha", "sst2", seed=0)
    b = _synthetic_run(tmp_path, "beta", "rte", seed=1)
    page = write_report([a, b], tmp_path / "ab.html")
    assert not (tmp_path / "ab_figure6.png").exists()
    assert "the models share no task" in page.read_text()
    c = _synthetic_run(tmp_path, "beta", "sst2", seed=2)
    write_report([a, b, c], tmp_path / "abc.html")
    rows = [r for r in csv.DictReader(open(tmp_path / "abc.csv"))
            if r["section"].startswith("Across runs: Figure 6")]
    assert len(rows) == 2 and all(r["estimator"].endswith(": sst2") for r in rows)
    beta_sst2 = json.loads((c / "decompositions" / "decompositions.json").read_text())
    beta = next(r for r in rows if r["quantity"].startswith("beta"))
    assert float(beta["value"]) == pytest.approx(beta_sst2["run"]["accuracy"])


@pytest.mark.slow
def test_report_of_several_runs_writes_a_folder_named_after_them(tmp_path, monkeypatch):
    """``infodiv report A B`` without --out writes into a folder named after the runs, beside
    them, never into the working directory."""
    a = _synthetic_run(tmp_path / "runs", "alpha", "sst2", seed=0)
    b = _synthetic_run(tmp_path / "runs", "beta", "sst2", seed=1)
    for run in (a, b):   # folders made by hand, not by infodiv run: no stage records to verify
        (run / "run.json").unlink()
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    assert main(["report", str(a), str(b)]) == 0
    assert list(work.iterdir()) == []
    folder = tmp_path / "runs" / f"report-{a.name}+{b.name}"
    assert {p.name for p in folder.iterdir()} >= {"report.html", "report.json", "report.csv"}
