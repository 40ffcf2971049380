"""The curves report's fields are inferential (issue 9, wiring)."""

import json

import numpy as np
import pytest

from infodiv.inference import dependent_ensemble, shuffled_labels
from infodiv.inference.wiring import settings_from
from infodiv.reports.curves import CurvesSettings, curves_report


@pytest.fixture(scope="module")
def shuffled_doc(tmp_path_factory):
    run = shuffled_labels(dependent_ensemble(240, 6, signal=0.5, rho=0.4, random_state=1),
                          random_state=1)
    run.meta.update(model="synthetic", task="shuffled")
    out = tmp_path_factory.mktemp("curves")
    s = CurvesSettings(objectives=("accuracy",), n_permutations=40, n_triples=10,
                       n_bootstrap=100, stability=0, info_method="gaussian", graph=False,
                       inference=True, inference_resamples=20, inference_selection=20)
    doc = curves_report(run, out, s)
    return doc, (out / "report.md").read_text(), json.loads((out / "report.json").read_text())


def test_n_bootstrap_is_b_and_the_defaults_reach_200():
    """B is what ``--n-bootstrap`` says (K = B), whatever the number of orders; without it
    B is derived from the orders (200 at the default 200)."""
    full = settings_from(CurvesSettings())
    assert (full.n_resamples, full.n_null, full.inner_orders, full.n_mc) == (200, 200, 20, 10)
    assert full.growth_replicates == 50
    derived = settings_from(CurvesSettings(n_permutations=40))
    assert (derived.n_resamples, derived.n_null) == (20, 20)
    small = settings_from(CurvesSettings(n_permutations=40, n_bootstrap=300))
    assert (small.n_resamples, small.n_null, small.inner_orders,
            small.growth_replicates) == (300, 300, 4, 0)
    both = settings_from(CurvesSettings(n_bootstrap=300, inference_resamples=50,
                                        inference_null=60))
    assert (both.n_resamples, both.n_null) == (50, 60)


def test_existing_fields_keep_their_names_and_become_inferential(shuffled_doc):
    doc, md, written = shuffled_doc
    assert written == doc
    rep = doc["objectives"]["accuracy"]["report"]
    gs = rep["gain_slope"]
    # the orders-only interval moved to ci_mc, labelled; ci is the example bootstrap
    assert "Monte-Carlo" in gs["ci_mc_label"] and gs["n_bootstrap"] == 20
    assert gs["ci"][1] - gs["ci"][0] > gs["ci_mc"][1] - gs["ci_mc"][0]
    for s in (gs, gs["from_k2"]):
        assert s["ci"][0] <= 0 <= s["ci"][1]      # shuffled labels: nothing to find
        assert {"null", "p", "corrected", "corrected_ci", "ci_mc"} <= set(s)
    # the point slope is still the one over all the report's orders
    g = np.asarray(doc["objectives"]["accuracy"]["curves"]["curves"]["random"]["gain"])
    k = np.arange(1, len(g) + 1)
    assert gs["slope"] == pytest.approx(np.polyfit(k, g, 1)[0], rel=1e-9, abs=1e-12)
    dr = rep["dr"]
    assert {"mean_difference_ci", "significant_violation_rate", "mean_difference_ci_fixed_fit",
            "significant_violation_rate_fixed_fit", "n_resamples"} <= set(dr)
    assert len(dr["p_values"]) == dr["n_triples"] == 10       # the report's own triples
    assert dr["mean_difference_ci"][0] <= 0 <= dr["mean_difference_ci"][1]
    assert dr["significant_violation_rate"] == 0.0
    assert rep["verdicts"]["diminishing_returns"]["detected"] is False
    div = rep["diversity"]
    assert div["beta_ci"][0] <= 0 <= div["beta_ci"][1] and "beta_null" in div
    sel = doc["selection"]["inference"]
    assert sel["n_resamples"] == 20 and sel["n_null"] == 20
    assert set(sel["verdicts"]) == {"greedy_beats_random", "greedy_beats_prefix"}
    for v in sel["verdicts"].values():   # the engine's records
        assert v["interval"][0] <= v["estimate"] <= v["interval"][1]
        assert v["n_bootstrap"] == 20 and v["detected"] is False
    info = rep["information_inference"]["joint"]
    assert info["corrected_ci"][0] <= 0 <= info["corrected_ci"][1]


def test_markdown_leads_with_corrected_values_flags_and_a_final_summary(shuffled_doc):
    _, md, _ = shuffled_doc
    assert "null-corrected" in md and "Monte-Carlo error" in md
    # power on by default: a negative verdict says how often a matched case is detected
    assert ("verdict diminishing returns**: not detected; a matched submodular case (members "
            "permuted independently within each class, same n) is detected with probability"
            in md)
    assert "with shuffled labels it fires with probability" in md
    assert "diversity regression beta" in md
    # the inferential, null-corrected values lead: before the descriptive lines
    body = md.split("## accuracy")[1]
    assert body.index("null-corrected") < body.index("f(empty)")
    assert body.index("verdict") < body.index("submodularity ratio")
    assert md.rstrip().splitlines()[-1].startswith(("Flags", "- "))
    assert "## Flags" in md


def test_decomposition_report_leads_with_null_corrected_terms_and_flags(tmp_path):
    from infodiv.reports.decomposition import decomposition_report

    run = shuffled_labels(dependent_ensemble(200, 5, signal=0.5, rho=0.4, random_state=2),
                          random_state=0)
    doc = decomposition_report(run, tmp_path / "a", info_methods=("gaussian",), inference=30,
                               every_variant=True)
    joint = doc["information_inference"]["methods"]["gaussian"]["joint"]
    assert joint["corrected_ci"][0] <= 0 <= joint["corrected_ci"][1]
    assert joint["n_bootstrap"] == 30 and "null_mean" in joint
    md = (tmp_path / "a" / "decompositions.md").read_text()
    assert md.index("Null-corrected") < md.index("Observed (plug-in)")
    # Figures 3/5/7 in every variant, the paper's Eq. 14 included, variant in the file/title
    fig = doc["figures_every_variant"]
    assert {r["variant"] for r in fig["rows"]} == {"logit/mean", "logit/sum", "probability/mean",
                                                   "probability/sum", "paper_eq14/mean",
                                                   "paper_eq14/sum"}
    for name in fig["files"]:
        assert (tmp_path / "a" / name).stat().st_size > 1000, name
    assert "junction_curves_paper_eq14_mean.png" in fig["files"]
    assert all(1 / 31 <= r["p_bootstrap"] <= 1 for r in fig["rows"])
    assert "Figure 3 in every variant" in md and "paper_eq14/mean" in md
    depth = doc["depth"]["measures"]["accuracy"]
    assert set(depth) == {"truncated_model", "member_subsets", "truncated_minus_subsets"}
    assert "truncated" in doc["depth"]["labels"]["truncated_model"]
    assert "direct effect" in doc["depth"]["labels"]["member_subsets"]
    s = depth["truncated_model"]["increment_slope"]
    assert {"value", "ci", "p", "corrected", "corrected_ci"} <= set(s)
    assert "Depth: truncated model vs member subsets" in md
    # D = 20 dimensions for 30 examples per class: flagged in the row and in the summary
    wide = dependent_ensemble(60, 20, signal=0.5, rho=0.4, random_state=3)
    wide.labels[:] = np.repeat([0, 1], 30)
    doc = decomposition_report(wide, tmp_path / "b", info_methods=("gaussian",), inference=20)
    codes = {f["code"] for f in doc["information_inference"]["flags"]}
    assert "dimension_too_large" in codes
    md = (tmp_path / "b" / "decompositions.md").read_text()
    assert "| joint [FLAG dimension_too_large]" in md.replace("gaussian | ", "| ")
    assert "Flags (" in md


def test_pipeline_diversity_regression_equals_the_reports_on_the_same_triples():
    from infodiv.inference import CurvePipeline
    from infodiv.submodularity import submodularity_report

    run = dependent_ensemble(300, 6, signal=0.5, rho=0.3, random_state=1)
    rep = submodularity_report(run, objective="accuracy", n_triples=30, n_bootstrap=200,
                               n_permutations=40, random_state=0, info_method=None)
    triples = [(t["A"], t["B"], t["x"]) for t in rep.dr["triples"]]
    out = CurvePipeline("accuracy", n_orders=3, triples=triples, information=False)(
        run, np.random.default_rng(0))
    assert out["diversity_beta"] == pytest.approx(rep.diversity["beta_diversity"], rel=1e-9)
    assert out["diversity_partial_r"] == pytest.approx(rep.diversity["partial_r"], rel=1e-9)
    np.testing.assert_allclose(out["dr_differences"], rep.dr["differences"], atol=1e-12)
