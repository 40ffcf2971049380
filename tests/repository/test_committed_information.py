"""On every committed real run, the default I(U;Y) lies in [H(Y) − CE(own logits) − its
interval, H(Y)] (benchmarks/bench_committed_information.py writes the numbers; this reads them
and recomputes the smallest run)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _paths import ROOT

RESULTS = ROOT / "benchmarks" / "results" / "committed_information.json"
ZOO = ROOT / "docs" / "results" / "zoo" / "contributions"


@pytest.fixture(scope="module")
def doc():
    return json.loads(RESULTS.read_text())


def test_every_committed_run_is_measured_and_in_range(doc):
    on_disk = {p.parent.name: json.loads(p.read_text())["meta"].get("fingerprint")
               for p in ZOO.glob("*/meta.json")}
    assert len(on_disk) >= 28
    for name, fp in on_disk.items():
        assert name in doc["runs"], f"{name} not measured: run the benchmark"
        assert doc["runs"][name]["fingerprint"] == fp, f"{name} changed since measured"
    for name, r in doc["runs"].items():
        low, high = r["interval"]
        assert low <= r["usable"] <= high <= r["h_y"] + 1e-12, name
        assert r["own"] - (r["usable"] - low) <= r["usable"] <= r["h_y"], name
        # the bracket holds I itself (>= 0), not the estimate: a run at chance can estimate
        # below 0 (the probe's learning cost), with the bracket at [0, ...]
        assert 0 <= r["bracket"][0] <= r["bracket"][1] <= r["h_y"] + 1e-12, name
        assert r["ok"], name


def test_smallest_run_recomputed(doc):
    from estimators.usable import usable_information
    from extraction.contributions import Contributions

    name = min((n for n in doc["runs"] if (ZOO / n).is_dir()), key=lambda n: doc["runs"][n]["M"])
    run = Contributions.load(ZOO / name)
    y = run.labels
    p = np.bincount(y) / len(y)
    h_y = float(-(p * np.log2(p)).sum())
    z = run.logits.astype(np.float64)
    logq = z - z.max(1, keepdims=True)
    logq -= np.log(np.exp(logq).sum(1, keepdims=True))
    own = h_y + float(logq[np.arange(len(y)), y].mean() / np.log(2))
    r = doc["runs"][name]
    assert r["h_y"] == pytest.approx(h_y, abs=1e-12) and r["own"] == pytest.approx(own, abs=1e-9)
    ui = usable_information(run.u, y, bias=run.bias, random_state=0)
    assert r["usable"] == pytest.approx(ui.estimate, abs=1e-9)
