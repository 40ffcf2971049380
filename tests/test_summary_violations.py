"""The one-screen summary shows the calibrated violations rate next to the raw BH rate."""

import json
from pathlib import Path

import pytest

from infodiv.reports.summary import _curve_rows

REPORT = Path(__file__).resolve().parents[1] / "docs/results/smollm2-135m-sst2-block/report.json"


@pytest.mark.skipif(not REPORT.exists(), reason="committed SmolLM2 curves report absent")
def test_rows_quote_the_step_down_rate_from_the_json():
    doc = json.loads(REPORT.read_text())
    rows = _curve_rows(doc, doc["run"]["N"])
    checked = 0
    for name, res in doc["objectives"].items():
        dr = res.get("report", res).get("dr", {})
        if dr.get("significant_violation_rate_corrected") is None:
            continue
        mine = [r for r in rows if r["section"].split(": ", 1)[-1].split(" (")[0] == name
                and r["quantity"] == "violations beyond the label null"]
        assert len(mine) == 1, name
        assert mine[0]["value"] == dr["significant_violation_rate_corrected"]
        assert "step-down" in mine[0]["estimator"]
        checked += 1
    assert checked >= 1
