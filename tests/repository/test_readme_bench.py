"""``docs/performance.md`` quotes ``benchmarks/results/extract_matrix.json``: every ratio it
prints is recomputed here from the results file (rounded as printed)."""

import json
import re

from _paths import ROOT

PAGE = ROOT / "docs" / "performance.md"
ROWS = {   # table row label -> configuration in the results file
    "0-shot, bare template": "zero_shot",
    "0-shot, chat template": "zero_shot_chat",
    "4-shot, random demonstrations": "few_shot_4_random_demos",
    "4-shot, fixed demonstrations": "few_shot_4_fixed_demos",
}
COLUMNS = [["extract_over_plain"],
           ["tl_full_cache_over_extract", "tl_filtered_cache_over_extract",
            "tl_best_over_extract"],
           ["nnsight_over_extract", "nnsight_best_over_extract"]]
NUMBER = re.compile(r"(\d+\.\d+)(?: \[(\d+\.\d+), (\d+\.\d+)\])?")


def _row(readme: str, label: str) -> list[str]:
    lines = [ln for ln in readme.splitlines() if ln.startswith(f"| {label}")]
    assert len(lines) == 1, f"performance page: {len(lines)} table rows start with {label!r}"
    return [c.strip() for c in lines[0].strip("|").split("|")][1:]


def test_readme_extraction_table_matches_results():
    readme = PAGE.read_text()
    doc = json.loads((ROOT / "benchmarks/results/extract_matrix.json").read_text())
    for label, config in ROWS.items():
        paired = doc["tasks"][config]["ratios"]["paired"]
        cells = _row(readme, label)
        assert len(cells) == len(COLUMNS), (label, cells)
        for cell, keys in zip(cells, COLUMNS):
            printed = [m for m in NUMBER.finditer(cell)]
            assert len(printed) == len(keys), (label, cell)
            for m, key in zip(printed, keys):
                r = paired[key]
                assert m.group(1) == f"{r['geometric_mean']:.2f}", (label, key, cell)
                if m.group(2) is not None:
                    assert (m.group(2), m.group(3)) == (f"{r['ci_low']:.2f}",
                                                        f"{r['ci_high']:.2f}"), (label, key)


WORK_ROWS = {   # work/parity table label -> configuration
    "bare 0-shot": "zero_shot", "chat 0-shot": "zero_shot_chat",
    "random demonstrations": "few_shot_4_random_demos",
    "fixed demonstrations (16 prompts)": "few_shot_4_fixed_demos",
    "fixed demonstrations (64 prompts)": "few_shot_4_fixed_demos_n64"}
WITH_REPS = re.compile(r"(\d+\.\d+) \[(\d+\.\d+), (\d+\.\d+)\], (\d+) repetitions, "
                       r"(met|not met|undecided)$")
PEER_ROWS = {"focused: 0-shot, bare template": "zero_shot",
             "focused: 4-shot, random demonstrations": "few_shot_4_random_demos"}


def _interval_cell(cell: str, r: dict, reps: int, label, digits: int = 2) -> None:
    m = WITH_REPS.match(cell)
    assert m, (label, cell)
    assert m.groups() == (f"{r['geometric_mean']:.{digits}f}", f"{r['ci_low']:.{digits}f}",
                          f"{r['ci_high']:.{digits}f}", str(reps), r["verdict"]), (label, cell)


def test_readme_work_and_parity_table_matches_results():
    """FLOP ratios (3 decimals) and the parity runs' CPU intervals, repetitions and verdicts,
    recomputed; every parity run measured the extraction code of one committed tree."""
    readme = PAGE.read_text()
    doc = json.loads((ROOT / "benchmarks/results/extract_matrix.json").read_text())
    flops, parity = doc["flops"]["tasks"], doc["parity"]["tasks"]
    for label, config in WORK_ROWS.items():
        cells = _row(readme, label)
        assert cells[0] == f"{flops[config]['extract_over_plain']:.3f}", (label, cells)
        assert cells[1] == f"{flops[config]['extract_over_plain_same_work']:.3f}", label
        if config not in parity:
            assert cells[2] == "", label
            continue
        run = parity[config]
        assert run["n_prompts"] == flops[config]["n_prompts"], label
        ratios = run["ratios"]
        r = ratios.get("overhead_extract_over_plain_same_work") or ratios["extract_over_plain"]
        assert r["n"] == run["reps"] == len(run["cpu_s"]["extract"])
        _interval_cell(cells[2], r, run["reps"], label, digits=3)   # sub-percent differences
    trees = {t["extraction_tree"] for t in parity.values()}
    assert len(trees) == 1 and None not in trees, trees


def test_readme_peer_focus_matches_results():
    """The focused TransformerLens runs: one row per configuration measured, each peer's
    interval, repetitions and verdict (peers in name order)."""
    readme = PAGE.read_text()
    doc = json.loads((ROOT / "benchmarks/results/extract_matrix.json").read_text())
    focus = doc["peer_focus"]["tasks"]
    assert sorted(focus) == sorted(PEER_ROWS.values())
    for label, config in PEER_ROWS.items():
        run, cells = focus[config], _row(readme, label)
        peers = sorted(k for k in run["ratios"] if k.endswith("_over_extract"))
        assert len(cells) == len(peers), (label, cells, peers)
        for cell, key in zip(cells, peers):
            assert run["ratios"][key]["n"] == run["reps"] == len(run["cpu_s"]["extract"])
            _interval_cell(cell, run["ratios"][key], run["reps"], label)


def test_readme_noise_sentence_matches_results():
    readme = PAGE.read_text()
    doc = json.loads((ROOT / "benchmarks/results/extract_matrix.json").read_text())
    noise, text = doc["noise"], " ".join(readme.split())
    assert (f"repeated {len(noise['cpu_s'])} times varies with a coefficient of variation of "
            f"{noise['cv']:.2f} and up to {noise['max_over_min']:.2f}×") in text


def test_readme_flops_saving_sentence_matches_results():
    """The saving in matrix-product FLOPs the page quotes in words (0-shot and 4-shot with
    fixed demonstrations, 16 prompts), recomputed as whole percentages."""
    readme = " ".join(PAGE.read_text().split())
    tasks = json.loads((ROOT / "benchmarks/results/extract_matrix.json").read_text()
                       )["flops"]["tasks"]
    zero, fixed = tasks["zero_shot"], tasks["few_shot_4_fixed_demos"]
    assert (f"they do {100 * (1 - zero['extract_over_plain']):.1f} % less work than a plain "
            f"forward on 0-shot SST-2 (no shared prefix) and "
            f"{100 * (1 - fixed['extract_over_plain']):.0f} % less on 4-shot SST-2 with fixed "
            f"demonstrations ({fixed['shared_prefix_tokens']} tokens shared)") in readme


def test_demo_and_engine_figures_match_results():
    """The demo's wall time and the engine report's CPU seconds, as the page and the README
    print them, recomputed from ``demo.json`` and ``inference_engine.json``."""
    page = " ".join(PAGE.read_text().split())
    readme = " ".join((ROOT / "README.md").read_text().split())
    demo = json.loads((ROOT / "benchmarks" / "results" / "demo.json").read_text())
    engine = json.loads((ROOT / "benchmarks" / "results" / "inference_engine.json").read_text())[
        "b200_power20_accuracy_calibrated_n872_m61"]
    base, st = demo["baseline"], demo["stages_s"]
    assert (f"**{demo['wall_s']:.0f} s wall, {demo['cpu_s']:.0f} CPU s** (extraction "
            f"{st['extract']:.0f} s, decompositions {st['decompose']:.0f} s, curves and verdicts "
            f"{st['curves']:.0f} s)") in page
    assert (f"against **{base['wall_s']:.0f} s wall, {base['cpu_s']:.0f} CPU s** for accuracy "
            f"alone (curves {base['stages_s']['curves']:.0f} s)") in page
    ratios = (f"**{demo['wall_s'] / base['wall_s']:.2f}× the wall time, "
              f"{demo['cpu_s'] / base['cpu_s']:.2f}× the CPU**")
    assert ratios in page
    assert (f"takes {demo['wall_s'] / base['wall_s']:.2f}× the wall time of the same demo on "
            f"accuracy alone ({demo['wall_s']:.0f} s against {base['wall_s']:.0f} s") in readme
    assert f"(load average {base['load_average_start'][0]:.2f} at its start)" in page
    met = "met" if demo["met"] else "not met"
    assert f"{demo['target_s']:.0f} s on 2 idle cores, {met} on this machine" in page
    assert f"**{engine['report_cpu_s']:.0f} CPU s**" in page
    met = "is met" if engine["meets_target"] else "is not met"
    assert f"({engine['target_cpu_s']:.0f} CPU s), {met}." in page
