"""The curves report on shuffled labels (nothing to find): the members carry no label, so the
run is untestable and every record says so; no claim is detected, every record's interval
holds its estimate and its null-corrected interval covers 0, and the markdown leads with the
conclusions, power beside them, and ends with the flags; all read from the engine's
records."""

import json

import pytest

from infodiv.claims import claim_names
from infodiv.inference import dependent_ensemble, shuffled_labels
from infodiv.inference.record import VerdictRecord
from infodiv.study import StudySettings
from infodiv.study.curves import curves_stage


@pytest.fixture(scope="module")
def shuffled_doc(tmp_path_factory):
    run = shuffled_labels(dependent_ensemble(240, 6, signal=0.5, rho=0.4, random_state=1),
                          random_state=1)
    run.meta.update(model="synthetic", task="shuffled")
    out = tmp_path_factory.mktemp("curves")
    s = StudySettings().with_settings(objectives=("accuracy",), claims=claim_names("curve"),
                                      n_curve_orders=40, n_triples=10, n_bootstrap=20,
                                      power_replicates=4, stability=0, graph=False)
    doc = curves_stage(run, out, s, log=lambda *a: None)
    return doc, (out / "report.md").read_text(), json.loads((out / "report.json").read_text())


def test_shuffled_labels_give_no_verdict_and_null_corrected_intervals_cover_zero(shuffled_doc):
    doc, _, written = shuffled_doc
    assert written == doc
    test = doc["testability"]
    assert not test["testable"] and test["members"]["interval"][0] <= 0
    assert test["raw"]["chance"] == "at"
    verdicts = doc["objectives"]["accuracy"]["verdicts"]
    assert set(verdicts) == {"diminishing_returns", "dr_mean_difference_positive",
                             "violations", "diversity_effect"}
    for name, r in verdicts.items():
        rec = VerdictRecord.from_dict(r)
        rec.check()
        assert not rec.detected and not rec.finding, name
        assert rec.outcome == "untestable" and rec.text().startswith("untestable"), name
        assert rec.n_bootstrap == 20 and rec.n_permutations == 20 and rec.power["n"] == 4
        if rec.interval is not None:
            assert rec.corrected_interval[0] <= 0 <= rec.corrected_interval[1], name
            assert rec.null_interval[0] <= rec.null_mean <= rec.null_interval[1], name
    viol = verdicts["violations"]
    assert viol["estimate"] == 0.0 and viol["extra"]["n_triples"] == 10
    sel = doc["selection"]["inference"]
    assert sel["sizes"]["n_bootstrap"] == 20 and sel["sizes"]["n_permutations"] == 20
    assert set(sel["verdicts"]) == {"greedy_beats_random", "greedy_beats_prefix"}
    for r in sel["verdicts"].values():
        assert r["interval"][0] <= r["estimate"] <= r["interval"][1]
        assert r["n_bootstrap"] == 20 and r["detected"] is False
        assert r["outcome"] == "untestable"


def test_markdown_leads_with_the_verdicts_and_their_power_and_ends_with_flags(shuffled_doc):
    _, md, _ = shuffled_doc
    assert ("- **diminishing returns**: untestable (the members carry no detectable "
            "information about the label); a matched submodular case (members "
            "permuted independently within each class, same n) is detected with probability"
            in md)
    assert "with shuffled labels it fires with probability" in md
    assert "null-corrected" in md and "Monte-Carlo error" in md
    assert "diversity regression beta" in md
    # the verdicts lead, the point estimates follow
    body = md.split("## accuracy")[1]
    assert body.index("untestable") < body.index("f(empty)")
    assert body.index("rule:") < body.index("submodularity ratio")
    assert "## Flags" in md
    assert md.rstrip().splitlines()[-1].startswith(("Flags", "- "))
