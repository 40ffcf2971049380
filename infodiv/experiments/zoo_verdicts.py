"""The verdict counts of the zoo's page: per objective and claim, across the models' curves
summaries (:func:`verdict_overview`, quoted in ``across.json``)."""

from __future__ import annotations

__all__ = ["verdict_overview"]


def verdict_overview(records) -> dict:
    """Per objective and verdict, across the models' ``curves`` summaries: how many models
    carry it, detect it, have it as a finding (detected and calibrated), how many had a power
    run (and of those how many have it as a finding), the range of the matched-case power and
    the largest shuffled-label rate, the models without a power run or with power 0
    (``power_zero``: the matched case never detected; a "not detected" of either is no test)
    and those whose entry lacks the verdict (``missing``). Counts, not readings."""
    out = {}
    for r in records:
        for obj, c in (r.get("curves") or {}).items():
            for test, d in (c.get("verdict_details") or {}).items():
                cell = out.setdefault(obj, {}).setdefault(test, {
                    "n_models": 0, "n_detected": 0, "n_finding": 0, "n_powered": 0,
                    "n_finding_powered": 0, "no_power": [], "power_zero": [], "findings": [],
                    "detected_not_calibrated": [], "_powers": [], "_false_positives": []})
                cell["n_models"] += 1
                cell["n_detected"] += bool(d.get("detected"))
                cell["n_finding"] += bool(d.get("finding"))
                if d.get("finding"):
                    cell["findings"].append(r["model"])
                elif d.get("detected"):
                    cell["detected_not_calibrated"].append(r["model"])
                pw, fp = (d.get("power") or {}).get("rate"), (d.get("false_positive") or {}).get(
                    "rate")
                if pw is None:
                    cell["no_power"].append(r["model"])
                    continue
                cell["n_powered"] += 1
                cell["n_finding_powered"] += bool(d.get("finding"))
                if pw == 0:   # the matched case is never detected: a 'no' here is no test
                    cell["power_zero"].append(r["model"])
                cell["_powers"].append(pw)
                if fp is not None:
                    cell["_false_positives"].append(fp)
    for obj, tests in out.items():   # models whose entry of obj does not carry the verdict
        for test, cell in tests.items():
            pws, fps = cell.pop("_powers"), cell.pop("_false_positives")
            cell |= {"power_min": min(pws, default=None), "power_max": max(pws, default=None),
                     "false_positive_max": max(fps, default=None)}
            cell["missing"] = [r["model"] for r in records if obj in (r.get("curves") or {})
                               and test not in r["curves"][obj].get("verdict_details", {})]
    return out
