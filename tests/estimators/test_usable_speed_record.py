"""``docs/performance.md`` quotes ``benchmarks/results/usable_speed.json`` (written by
``benchmarks/bench_usable_speed.py``): every CPU time, ratio and the log-log slope of its
usable-information section are recomputed from the results file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "usable_speed.json"
PAGE = ROOT / "docs" / "performance.md"


@pytest.fixture(scope="module")
def record():
    return json.loads(RESULTS.read_text())


@pytest.fixture(scope="module")
def section():
    text = PAGE.read_text()
    start = text.index("### Usable information: the default label decomposition")
    end = text.find("\n## ", start)
    return text[start:end if end >= 0 else None]


def test_every_shape_row_is_the_record(record, section):
    rows = {m.group(1): m.groups()[1:] for m in re.finditer(
        r"^\| (\(2000, \d+, \d+\)) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \[([\d.]+), ([\d.]+)\] \|$",
        section, flags=re.M)}
    assert set(rows) == set(record["pairs"])
    for key, entry in record["pairs"].items():
        ref, new, ratio, low, high = rows[key]
        assert ref == f"{entry['reference_cpu_s_median']:.1f}"
        assert new == f"{entry['cpu_s_median']:.2f}"
        assert ratio == f"{entry['ratio_geometric_mean']:.1f}"
        assert (low, high) == tuple(f"{v:.1f}" for v in entry["ratio_range"])
        ratios = [p["reference_cpu_s"] / p["cpu_s"] for p in entry["pairs"]]
        assert entry["ratio_range"] == [min(ratios), max(ratios)]


def test_scaling_sentence_is_the_record(record, section):
    rows = record["scaling"]["rows"]
    sizes = ", ".join(str(r["n_members"]) for r in rows)
    times = ", ".join(f"{r['cpu_s_median']:.1f}" for r in rows)
    flat = " ".join(section.split())
    assert f"(M = {sizes}): {times} CPU s" in flat
    assert f"log-log slope of {record['scaling']['loglog_slope']:.2f}" in flat
