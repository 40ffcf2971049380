"""The AG News pages (SmolLM2-135M-Instruct, blocks and heads) print what their JSON holds,
and the JSON agrees with itself: the model's accuracy and its Wilson interval recomputed here
from the per-example labels and predictions the page stores (and from the run's arrays when
the run folder is present), the prompt-setting comparison recomputed from its counts, the
prefix readout copied from the decompositions and ending at the model's own accuracy, and every
verdict record with its power and shuffled-label rate from the surrogates its part ran."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from _paths import ROOT

from infodiv.claims import CLAIMS
from infodiv.reports.answer import outcome_of
from infodiv.reports.answer_text import objective_label

RESULTS = ROOT / "docs" / "results"
PAGES = sorted(p.name for p in RESULTS.glob("smollm2-135m-agnews-*")
               if (p / "report_page.json").is_file())
Z95 = 1.959963984540054   # the 0.975 quantile of the standard normal


def _wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson score interval, written out here (not the toolkit's)."""
    p = k / n
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 / (1 + Z95**2 / n) * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n))
    return centre - half, centre + half


def _interval(lo: float, hi: float, spec: str = ".3f") -> str:
    return f"[{lo:{spec}}, {hi:{spec}}]".replace("-", "\N{MINUS SIGN}")


def _load(folder):
    d = RESULTS / folder
    return (json.loads((d / "report_page.json").read_text()),
            json.loads((d / "report.json").read_text()), (d / "README.md").read_text())


def test_the_block_page_exists():
    assert "smollm2-135m-agnews-block" in PAGES, PAGES


@pytest.mark.parametrize("folder", PAGES)
def test_accuracy_and_interval_recomputed_from_the_arrays(folder):
    page, report, readme = _load(folder)
    labels = np.asarray(page["arrays"]["labels"])
    pred = np.asarray(page["arrays"]["predictions"])
    assert labels.shape == pred.shape == (page["run"]["N"],) == (report["run"]["N"],)
    k = int((labels == pred).sum())
    acc, (lo, hi) = k / labels.size, _wilson(k, labels.size)
    assert page["accuracy"]["correct"] == k
    assert page["accuracy"]["value"] == pytest.approx(acc, abs=1e-15)
    assert page["accuracy"]["ci"] == pytest.approx([lo, hi], abs=1e-12)
    assert f"{acc:.3f} {_interval(lo, hi)}" in readme
    run = (RESULTS / folder / page["run"]["dir"]).resolve()
    if (run / "arrays.npz").is_file():   # the run itself, where it was extracted
        with np.load(run / "arrays.npz") as z:
            logits = z["logits"]
            own = z["labels"]
        assert (own == labels).all() and (logits.argmax(axis=1) == pred).all()


@pytest.mark.parametrize("folder", PAGES)
def test_prompt_selection_printed_and_recomputed(folder):
    page, _, readme = _load(folder)
    sel = page["prompt_selection"]
    assert sel["rows"][0] >= page["run"]["rows"][1], "selection rows overlap the analysed ones"
    best = max(sel["settings"], key=lambda s: sel["settings"][s]["correct"])
    assert sel["chosen"] == best == page["run"]["prompt_setting"]
    for name, s in sel["settings"].items():
        lo, hi = _wilson(s["correct"], s["n"])
        assert s["accuracy"] == pytest.approx(s["correct"] / s["n"], abs=1e-15)
        assert s["accuracy_ci"] == pytest.approx([lo, hi], abs=1e-12)
        assert f"| {name} | {s['n']} | {s['correct'] / s['n']:.3f} {_interval(lo, hi)} |" in readme


@pytest.mark.parametrize("folder", PAGES)
def test_prefix_readout_is_the_decompositions_and_ends_at_the_model(folder):
    page, _, readme = _load(folder)
    dec = json.loads((RESULTS / folder / "decompositions" / "decompositions.json").read_text())
    lens = dec["junction_curves"]["logit_lens"]
    pr = page["prefix_readout"]
    assert pr["block"] == list(range(len(pr["block"]))) and len(pr["block"]) == 30
    for b, k, acc, band in zip(pr["block"], pr["k"], pr["logit_lens_accuracy"],
                               pr["logit_lens_ci"]):
        i = lens["names"].index(f"L{b}.mlp#0")
        assert (lens["k"][i], lens["accuracy"][i], lens["accuracy_ci"][i]) == (k, acc, band)
        assert band[0] <= acc <= band[1]
        assert f"| {b} | {acc:.3f} {_interval(*band)} |" in readme
    # the logit lens after the last block is the model's own readout (exact extraction)
    assert pr["logit_lens_accuracy"][-1] == pytest.approx(page["accuracy"]["value"], abs=1e-9)


@pytest.mark.parametrize("folder", PAGES)
def test_every_verdict_with_power_and_shuffled_rate(folder):
    page, report, readme = _load(folder)
    parts = json.loads((RESULTS / folder / "regeneration.json").read_text())["parts"]
    md = (RESULTS / folder / "report.md").read_text()
    generated = "answer" in page or (RESULTS / folder / "answer.json").exists()
    for obj, entry in report["objectives"].items():
        verdicts = entry["verdicts"]
        assert {"premise", "redundancy_cost", "gains_vs_control",
                "marginal_gain_redundancy", "diminishing_returns"} <= set(verdicts), obj
        for name, v in verdicts.items():
            if v["extra"].get("report_only"):
                continue
            part = next((p for key, p in parts.items()
                         if key.startswith(obj + "+") and name in p["claims"]), parts[obj])
            for rate in (v["power"], v["false_positive"]):
                assert rate["n"] == part["power_replicates"] > 0, (obj, name)
                assert rate["rate"] == pytest.approx(rate["n_detected"] / rate["n"])
            if generated:    # the verdicts are the generator's list, with the rates
                item = next(ln for ln in readme.splitlines()
                            if ln.startswith(f"- **{CLAIMS[name].short}**")
                            and f"on {objective_label(obj)}" in ln)
                outcome = outcome_of(v)["outcome"]
                word = "the opposite" if outcome == "opposite" else outcome
                assert f"{word} on {objective_label(obj)}" in item, item
                assert f"power {v['power']['rate']:.2g}" in item, (name, item)
                assert f"shuffled labels {v['false_positive']['rate']:.2g}" in item, (name, item)
            else:
                rates = (f"power {v['power']['rate']:.2f}, shuffled labels "
                         f"{v['false_positive']['rate']:.2f}")
                assert rates in readme, (name, rates)
            assert f"with probability {v['power']['rate']:.2f}" in md, name


@pytest.mark.parametrize("folder", [f for f in PAGES if "answer" in _load(f)[0]])
def test_the_answer_is_generated_from_the_records(folder):
    """The page's answer paragraph and verdict list are what the generator writes from the
    committed records now: a hand edit of the page, or records changed without regenerating
    it, fails here."""
    from infodiv.reports.answer import answer_of
    from infodiv.reports.answer_text import verdict_list

    page, report, readme = _load(folder)
    dec = json.loads((RESULTS / folder / "decompositions" / "decompositions.json").read_text())
    said = answer_of(dec, report)
    assert " ".join(said["paragraph"]) == page["answer"]["text"]
    assert page["answer"]["text"] in readme and verdict_list(said) in readme
    assert said["testability"]["testable"]
    headline = [v for v in said["verdicts"] if v["claim"] == "diminishing_returns"]
    assert {v["objective"] for v in headline} == {"accuracy", "mi_readout"}
    for v in said["verdicts"]:   # every conclusion is one of the four, with what decides it
        assert v["outcome"] in ("holds", "opposite", "absent", "inconclusive", "report"), v
        if v["outcome"] == "inconclusive" and v["margin"] is not None:
            if v["n_needed"] is None:   # an uncalibrated rule: no n decides it
                assert "shuffled labels beyond its level" in v["reason"], v
            else:
                assert f"n₈₀ ≈ {v['n_needed']}" in readme, v
