"""The committed readings in docs/results quote only numbers copied from the committed JSON.

``docs/results/README.template.md`` holds the reading with ``{{file.json:key|spec}}``
placeholders; ``docs/results/README.md`` must equal the template with every placeholder filled
from the JSON beside it (``infodiv.reports.markdown.fill_numbers``; regenerate with
``python scripts/regenerate_results.py readme``).
"""

from __future__ import annotations

import json
import math

import pytest
from _paths import ROOT

from infodiv.claims import claim_names
from infodiv.reports.markdown import PLACEHOLDER, fill_numbers

RESULTS = ROOT / "docs" / "results"
TEMPLATES = sorted(RESULTS.glob("**/README.template.md"))


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: str(p.relative_to(RESULTS)))
def test_readme_numbers_come_from_the_json(template):
    readme = template.with_name("README.md")
    expected = fill_numbers(template.read_text(), template.parent)
    assert readme.read_text() == expected, (
        f"{readme} differs from its template filled from the JSON: run "
        "'python scripts/regenerate_results.py readme'")


def test_results_readme_is_templated():
    assert (RESULTS / "README.template.md").is_file()


def _write(tmp_path, **a):
    (tmp_path / "b.json").write_text(json.dumps({"a": a}))
    return tmp_path


def test_fill_numbers_tracks_the_json(tmp_path):
    (tmp_path / "r.json").write_text(json.dumps({"a": {"ci": [-1.234e-5, 2e-4], "p": 0.0399}}))
    text = "slope CI {{r.json:a.ci|.2g}}, p = {{r.json:a.p|.2f}}"
    assert fill_numbers(text, tmp_path) == "slope CI [\u22121.2e\u22125, 0.0002], p = 0.04"
    assert fill_numbers("{{b.json:a.ok|detected/not detected}}", _write(tmp_path, ok=False)) \
        == "not detected"
    (tmp_path / "r.json").write_text(json.dumps({"a": {"ci": [-1.234e-5, 2e-4], "p": 0.2}}))
    assert fill_numbers(text, tmp_path).endswith("p = 0.20")   # a changed number shows
    with pytest.raises(ValueError, match="no 'q'"):
        fill_numbers("{{r.json:a.q}}", tmp_path)
    with pytest.raises(ValueError, match="no file"):
        fill_numbers("{{s.json:a.p}}", tmp_path)
    import re

    assert not re.search(PLACEHOLDER, fill_numbers(text, tmp_path))


BLOCKS = ("smollm2-135m-sst2-block", "stories260k-sst2-block")
#: what scripts/regenerate_results.sh computes for the block runs (OBJ4, B = K = 200, power 20)
BLOCK_OBJECTIVES = ["accuracy_calibrated", "mi_readout", "accuracy"]
CURVE_CLAIMS = set(claim_names("curve"))


def _bits_ceiling(doc) -> float:
    """log2 C: no information about a C-class label exceeds it (H(Y) <= log2 C)."""
    return math.log2(doc["run"]["C"]) + 1e-12


@pytest.mark.parametrize("folder", BLOCKS)
def test_block_reports_carry_every_verdict_record(folder):
    """Each block report holds, for calibrated accuracy, mi_readout and raw accuracy, the four
    curve verdict records at B = K = 200 with power and shuffled-label rate over 20 surrogates
    each, the selection's two records, and regeneration.json the CPU seconds of every part."""
    doc = json.loads((RESULTS / folder / "report.json").read_text())
    parts = json.loads((RESULTS / folder / "regeneration.json").read_text())["parts"]
    assert doc["settings"]["objective"] == BLOCK_OBJECTIVES
    assert list(doc["objectives"]) == BLOCK_OBJECTIVES
    for obj, entry in doc["objectives"].items():
        assert "point" in entry and CURVE_CLAIMS <= set(entry["verdicts"]), obj
        for name, v in entry["verdicts"].items():
            # a claim part's record: test_page_carries_the_control_claims
            if name not in CURVE_CLAIMS:
                continue
            assert v["objective"] == obj and v["units"], (obj, name)
            assert v["n_bootstrap"] == 200 and v["n_permutations"] == 200, (obj, name)
            for rate in (v["power"], v["false_positive"]):
                assert rate["n"] == 20 and 0 <= rate["rate"] <= 1, (obj, name)
        assert parts[obj]["power_replicates"] == 20 and parts[obj]["cpu_s"] > 0, obj
    verdicts = doc["selection"]["inference"]["verdicts"]
    assert set(verdicts) == {"greedy_beats_random", "greedy_beats_prefix"}
    assert all(0 <= v["power"]["rate"] <= 1 for v in verdicts.values())
    assert doc["selection"]["objective"] == BLOCK_OBJECTIVES[0]


def _control_claims():
    """The claims that tell redundancy from a ceiling, and Theorem 8's report."""
    from infodiv.claims import claim_names

    return list(claim_names(("control", "report")))


#: every committed real-run page and the objectives its control claims are judged on: the SST-2
#: pages (blocks of both models, SmolLM2's heads) on all three objectives, the AG News pages
#: (blocks and heads) on raw accuracy
CONTROL_CLAIM_PAGES = {**{folder: tuple(BLOCK_OBJECTIVES)
                      for folder in (*BLOCKS, "smollm2-135m-sst2-head")},
                   "smollm2-135m-agnews-block": ("accuracy",),
                   "smollm2-135m-agnews-head": ("accuracy",)}


def _valid_fit(folder: str) -> dict:
    """The valid information terms of the run behind ``folder``: the page's decompositions
    where it has them, else the run's entry in the committed information benchmark (which the
    results page quotes beside Theorem 8)."""
    own = RESULTS / folder / "decompositions" / "decompositions.json"
    if own.is_file():
        return json.loads(own.read_text())["information"]["usable"]
    bench = RESULTS.parents[1] / "benchmarks" / "results" / "committed_information.json"
    return json.loads(bench.read_text())["decompositions"][folder]


@pytest.mark.parametrize("folder", sorted(CONTROL_CLAIM_PAGES))
def test_one_value_of_information_per_run(folder):
    """I(U;Y) of all members has one value and one interval wherever the run is quoted:
    Theorem 8's report and the valid decomposition are the same fit (estimate, interval,
    bracket and Eq. 12 bounds equal)."""
    doc = json.loads((RESULTS / folder / "report.json").read_text())
    t8 = next(e["verdicts"]["theorem8"]["extra"] for e in doc["objectives"].values()
              if "theorem8" in e.get("verdicts", {}))
    fit = _valid_fit(folder)
    pairs = {"mi": fit["joint"], "mi_interval_low": fit["joint_interval"][0],
             "mi_interval_high": fit["joint_interval"][1], "mi_lower": fit["joint_lower"],
             "mi_upper": fit["joint_upper"], "error_lower_bound": fit["error_lower_bound"],
             "error_upper_bound": fit["error_upper_bound"]}
    for key, value in pairs.items():
        assert t8[key] == pytest.approx(value, rel=0, abs=1e-9), (folder, key, t8[key], value)


@pytest.mark.parametrize("folder", sorted(CONTROL_CLAIM_PAGES))
def test_page_carries_the_control_claims(folder):
    """The page carries, on each of its objectives, a verdict record of every control claim (those
    that tell redundancy from a ceiling) judged on the matched case the claim declares, with its
    estimate inside its interval, its label null, and power and shuffled-label rate (rate = detected
    / surrogates, the surrogates its part ran); Theorem 8's report (no test: never detected, bounds
    ordered) once; report.md prints each record's power and shuffled-label rate; regeneration.json
    the CPU seconds of every claim part."""
    from infodiv.claims import CLAIMS

    doc = json.loads((RESULTS / folder / "report.json").read_text())
    parts = json.loads((RESULTS / folder / "regeneration.json").read_text())["parts"]
    md = (RESULTS / folder / "report.md").read_text()
    names = _control_claims()
    assert "theorem8" in names and len(names) >= 5, names
    reports = [(o, e["verdicts"]["theorem8"]) for o, e in doc["objectives"].items()
               if "theorem8" in e.get("verdicts", {})]
    assert len(reports) == 1, [o for o, _ in reports]
    t8 = reports[0][1]["extra"]
    assert t8["report_only"] and not reports[0][1]["detected"]
    assert 0 <= t8["error_lower_bound"] <= t8["error_upper_bound"] <= 1, t8
    assert 0 <= t8["mi_lower"] <= t8["mi_upper"] <= t8["h_y"] + 1e-12, t8
    for obj in CONTROL_CLAIM_PAGES[folder]:
        verdicts = doc["objectives"][obj]["verdicts"]
        for name in (n for n in names if n != "theorem8"):
            v = verdicts[name]
            assert v["claim"] == name and v["objective"] == obj, (obj, name)
            assert v["matched_case"] == CLAIMS[name].matched_case, (obj, name, "stale case")
            if v["interval"] is not None:
                assert v["interval"][0] <= v["estimate"] <= v["interval"][1], (obj, name)
            # a claim decided by its own rule (the premise: a within-class permutation
            # baseline inside its statistic) has no label-permutation null mean
            if CLAIMS[name].decide is None:
                assert v["null_mean"] is not None, (obj, name)
            assert 0 < v["p"] <= 1, (obj, name)
            part = next(p for k, p in parts.items()
                        if k.startswith(obj + "+") and name in p["claims"])
            assert part["cpu_s"] > 0 and v["n_bootstrap"] == part["n_bootstrap"], (obj, name)
            # label permutations: "n_null" in parts written before the option had one name
            k = part["n_null"] if "n_null" in part else part["n_permutations"]
            assert v["n_permutations"] == k, (obj, name)
            for rate in (v["power"], v["false_positive"]):
                assert rate["n"] == part["power_replicates"] > 0, (obj, name)
                assert rate["rate"] == pytest.approx(rate["n_detected"] / rate["n"]), (obj, name)
            section = next(s for s in md.split("\n## ") if s.startswith(obj + "\n"))
            line = next(ln for ln in section.split("\n")
                        if ln.startswith(f"- **{name.replace('_', ' ')}**: "))
            assert (f"detected with probability {v['power']['rate']:.2f}" in line
                    and f"fires with probability {v['false_positive']['rate']:.2f}" in line), line


@pytest.mark.parametrize("folder", BLOCKS)
def test_block_information_is_usable_information_in_bits(folder):
    """The pages' information about the label is mi_readout: bits, every curve value, band and
    verdict estimate at most log2 C, f(empty) = 0, and f(all) the answer figure's last point;
    no Gaussian information objective is left on the page."""
    doc = json.loads((RESULTS / folder / "report.json").read_text())
    assert not any(o.startswith("mi_") and o != "mi_readout" for o in doc["objectives"])
    entry, top = doc["objectives"]["mi_readout"], _bits_ceiling(doc)
    assert entry["curves"]["units"] == "bits" and entry["answer_curves"]["units"] == "bits"
    values = [x for c in entry["curves"]["curves"].values() for x in c["values"]]
    real = entry["answer_curves"]["real"]
    values += [*real["mean"], *real["ci_low"], *real["ci_high"]]
    assert values and max(values) <= top, (max(values), top)
    assert entry["point"]["f_empty"] == pytest.approx(0.0, abs=1e-9)
    assert entry["point"]["f_all"] == pytest.approx(real["mean"][-1], abs=1e-9)
    assert entry["verdicts"]["diminishing_returns"]["units"] == "bits per member"


ZOO = RESULTS / "zoo"
ZOO_MODELS = sorted(p.parent.parent.name for p in ZOO.glob("*/curves/report.json"))


def _record_schema(path) -> bool:
    """Whether a committed curves report holds verdict records (the schema the code reads)."""
    entry = next(iter(json.loads(path.read_text())["objectives"].values()))
    return "point" in entry


#: models whose committed curves report holds verdict records (all of them: a report in an
#: older schema would be quoted nowhere, and the zoo test fails on it)
ZOO_CURRENT = [m for m in ZOO_MODELS if _record_schema(ZOO / m / "curves" / "report.json")]


def _zoo_verdicts(doc) -> dict:
    """Per objective of a record-schema curves report: every claim it was asked for (the
    objective's ``zoo_settings`` claims and report claims, and on the selection's objective
    the selection verdicts) mapped to its verdict record, None where the entry lacks it."""
    sel = doc["selection"]
    out = {}
    for obj, entry in doc["objectives"].items():
        zs = entry["zoo_settings"]
        asked = [*zs["claims"], *(zs.get("report_claims") or [])]
        verdicts = dict(entry["verdicts"])
        if obj == sel["objective"]:
            asked += list(sel["inference"]["verdicts"])
            verdicts.update(sel["inference"]["verdicts"])
        assert set(verdicts) <= set(asked), (obj, sorted(set(verdicts) - set(asked)))
        out[obj] = {t: verdicts.get(t) for t in asked}
    return out


def _check_zoo_report(name, doc, record, across) -> set:
    """One model's record-schema curves report: every claim's verdict present, with its power
    and shuffled-label rate (n = the entry's power surrogates, rate = detected / n) where the
    entry ran power surrogates and None where it did not or the claim is report-only;
    summary.json's record and across.json's lists quote it. Returns the claims whose verdict
    was judged on another matched case than the current claim's (``{(objective, claim)}``)."""
    from infodiv.claims import CLAIMS

    stale = set()
    for obj, tests in _zoo_verdicts(doc).items():
        n_power = doc["objectives"][obj]["zoo_settings"]["power_replicates"]
        for test, v in tests.items():
            cell = across[obj][test]
            if v is None:      # a claim that could not run: listed as missing (quoted so)
                assert name in cell["missing"] and test in doc["objectives"][obj]["not_tested"], (
                    name, obj, test)
                continue
            assert name not in cell["missing"], (name, obj, test)
            if v["matched_case"] != CLAIMS[test].matched_case:
                stale.add((obj, test))
            assert (name in cell["findings"]) == bool(v["finding"]), (name, obj, test)
            report_only = bool((v.get("extra") or {}).get("report_only"))
            if report_only or not n_power:
                assert v["power"] is None and v["false_positive"] is None, (name, obj, test)
                assert name in cell["no_power"], (name, obj, test)
                continue
            assert v.get("power") and v.get("false_positive"), (name, obj, test)
            for rate in (v["power"], v["false_positive"]):
                assert rate["n"] == n_power and 0 <= rate["rate"] <= 1, (name, obj, test)
                assert rate["rate"] == pytest.approx(rate["n_detected"] / rate["n"]), (name, obj)
            assert name not in cell["no_power"], (name, obj, test)
            assert (name in cell["power_zero"]) == (v["power"]["rate"] == 0), (name, obj, test)
            quoted = record["curves"][obj]["verdict_details"][test]
            assert quoted["power"]["rate"] == v["power"]["rate"], (name, obj, test)
            assert quoted["false_positive"]["rate"] == v["false_positive"]["rate"], (name, obj)
    return stale


def test_zoo_curves_carry_every_verdict_with_its_power():
    """Every zoo model's record-schema curves report has, per objective, every claim it was
    asked for (and on the first objective the two selection verdicts), each on the current
    claim's matched case, with power and shuffled-label rate
    wherever its entry ran power surrogates; summary.json quotes each report exactly and
    across.json's counts and lists (findings, no power, power 0, missing) are its overview.
    The models whose report predates
    the schema are exactly across.json's ``curves_stale``, quoted nowhere (removing a verdict
    or its power from a report, or a model from the lists, goes red)."""
    from infodiv.experiments.analyses import curve_summary, verdict_overview

    records = {r["model"]: r for r in json.loads((ZOO / "summary.json").read_text())}
    assert len(ZOO_MODELS) == 28 and sorted(records) == ZOO_MODELS
    doc_across = json.loads((ZOO / "across.json").read_text())
    across = doc_across["verdicts"]
    assert verdict_overview(records.values()) == across
    old = [m for m in ZOO_MODELS if m not in ZOO_CURRENT]
    assert old == [], old               # every model's report holds verdict records
    assert sorted(doc_across["curves_stale"]) == old
    assert all(records[m]["curves"] == {} for m in old), old
    assert ZOO_CURRENT and next(iter(across)) == "accuracy"
    for name in ZOO_CURRENT:
        path = ZOO / name / "curves" / "report.json"
        assert records[name]["curves"] == curve_summary(path), name
        stale = _check_zoo_report(name, json.loads(path.read_text()), records[name], across)
        assert not stale, (name, sorted(stale))
    assert all(c["n_models"] + len(c["missing"]) == len(ZOO_CURRENT)
               for tests in across.values() for c in tests.values())
