"""The README's extraction-cost table quotes ``benchmarks/results/extract_matrix.json``: every
ratio it prints is recomputed here from the committed results (rounded as printed)."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROWS = {   # README row label -> configuration in the results file
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
    assert len(lines) == 1, f"README: {len(lines)} table rows start with {label!r}"
    return [c.strip() for c in lines[0].strip("|").split("|")][1:]


def test_readme_extraction_table_matches_results():
    readme = (ROOT / "README.md").read_text()
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


WORK_ROWS = {   # README work/parity table label -> configuration
    "bare 0-shot": "zero_shot", "chat 0-shot": "zero_shot_chat",
    "random demonstrations": "few_shot_4_random_demos",
    "fixed demonstrations": "few_shot_4_fixed_demos"}


def test_readme_work_and_parity_table_matches_results():
    """FLOP ratios (3 decimals) and the 24-repetition CPU intervals, recomputed."""
    readme = (ROOT / "README.md").read_text()
    doc = json.loads((ROOT / "benchmarks/results/extract_matrix.json").read_text())
    flops, parity = doc["flops"]["tasks"], doc["parity"]["tasks"]
    for label, config in WORK_ROWS.items():
        cells = _row(readme, label)
        assert cells[0] == f"{flops[config]['extract_over_plain']:.3f}", (label, cells)
        assert cells[1] == f"{flops[config]['extract_over_plain_same_work']:.3f}", label
        if config not in parity:
            assert cells[2] == "", label
            continue
        ratios = parity[config]["ratios"]
        r = ratios.get("overhead_extract_over_plain_same_work", ratios["extract_over_plain"])
        assert r["n"] == parity[config]["reps"] == len(parity[config]["cpu_s"]["extract"])
        m = NUMBER.match(cells[2])
        assert m and m.groups() == (f"{r['geometric_mean']:.2f}", f"{r['ci_low']:.2f}",
                                    f"{r['ci_high']:.2f}"), (label, cells[2])
    noise, text = doc["noise"], " ".join(readme.split())
    assert (f"repeated {len(noise['cpu_s'])} times varies with a coefficient of variation of "
            f"{noise['cv']:.2f} and up to {noise['max_over_min']:.2f}×") in text

