"""The decomposition report's information terms come from the valid estimators
(infodiv.inference.information_terms): usable I(U;Y) with its bracket, per-member relevancies on
the whole member vectors, D by the identity with its paired bootstrap and label null; Gaussian /
copula only by name, labelled model-based and flagged above H(Y)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from infodiv.inference import dependent_ensemble, shuffled_labels
from infodiv.inference.information_terms import information_inference
from infodiv.study.decompose import decomposition_report


def _entropy_bits(labels) -> float:
    p = np.bincount(labels) / len(labels)
    p = p[p > 0]
    return float(-(p * np.log2(p)).sum())


def _own_cross_entropy_bits(run) -> float:
    """CE of softmax(Σ_m u_m + bias), by hand."""
    z = run.u.astype(np.float64).sum(axis=1) + run.bias
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-logp[np.arange(len(z)), run.labels].mean() / np.log(2))


@pytest.fixture(scope="module")
def signal_doc(tmp_path_factory):
    run = dependent_ensemble(240, 5, signal=0.6, rho=0.4, random_state=2)
    out = tmp_path_factory.mktemp("dec")
    doc = decomposition_report(run, out, info_methods=("usable", "gaussian"), inference=20,
                               every_variant=False)
    return run, doc, (out / "decompositions.md").read_text()


@pytest.mark.slow
def test_the_default_is_the_valid_estimator_and_its_terms_add_up(signal_doc, tmp_path):
    run, doc, md = signal_doc
    import inspect

    assert inspect.signature(decomposition_report).parameters["info_methods"].default == (
        "usable",)
    h_y = _entropy_bits(run.labels)
    v = doc["information_inference"]["methods"]["usable"]
    t = doc["information"]["usable"]
    assert doc["information"]["H(Y)_bits"] == pytest.approx(h_y, abs=1e-12)
    j, r, d = v["joint"], v["relevancy"], v["diversity"]
    # never above H(Y); the bracket's upper end at most H(Y); every interval holds its estimate
    assert j["value"] <= h_y and j["bracket"][1] <= h_y + 1e-12 and j["ci"][1] <= h_y + 1e-12
    for term in (j, r, d):
        assert term["ci"][0] <= term["value"] <= term["ci"][1]
    assert d["corrected_ci"][0] <= d["corrected"] <= d["corrected_ci"][1]
    # the identity, and relevancy = the sum of the members' own terms
    assert d["value"] == pytest.approx(j["value"] - r["value"], abs=1e-12)
    assert r["value"] == pytest.approx(sum(r["per_member"]), abs=1e-9)
    assert len(r["per_member"]) == run.n_members and max(r["per_member"]) <= h_y
    # the own logits are a candidate: I is at least H(Y) - CE(own logits) up to its interval
    own = h_y - _own_cross_entropy_bits(run)
    assert j["value"] >= own - (j["value"] - j["ci"][0]) - 0.02
    # label null: the whole procedure rerun; this run carries signal
    assert j["n_permutations"] == d["n_permutations"] == 19 and j["p"] == pytest.approx(0.05)
    assert j["null_mean"] < 0.05 < j["value"]
    assert t["joint"] == j["value"] and t["diversity"] == d["value"]
    # the markdown leads with the valid terms; Gaussian ones come labelled after them
    assert md.index("Usable information (valid for a discrete label)") < md.index(
        "Model-based terms")
    assert f"I(U;Y) = {j['value']:.3g} bits" in md
    assert "not valid for a discrete label" in md and "Eq. 12:" in md


def test_decompose_command_defaults_to_usable(tmp_path):
    from infodiv.cli import main

    run = dependent_ensemble(120, 3, signal=0.6, rho=0.3, random_state=4)
    run.save(tmp_path / "run")
    assert main(["decompose", str(tmp_path / "run"), "--out", str(tmp_path / "d"),
                 "--inference", "0", "--no-every-variant"]) == 0
    doc = json.loads((tmp_path / "d" / "decompositions.json").read_text())
    assert set(doc["information"]) == {"H(Y)_bits", "model_error", "usable"}
    assert doc["information"]["usable"]["joint"] <= doc["information"]["H(Y)_bits"]
    assert "p" not in doc["information_inference"]["methods"]["usable"]["joint"]   # no null


@pytest.mark.slow
def test_shuffled_labels_give_nothing():
    run = shuffled_labels(dependent_ensemble(240, 5, signal=0.6, rho=0.4, random_state=2),
                          random_state=0)
    inf = information_inference(run, n_null=19)
    v = inf["methods"]["usable"]
    assert v["joint"]["ci"][0] <= 0.02 and v["joint"]["bracket"][0] <= 0.05
    assert v["diversity"]["corrected_ci"][0] <= 0 <= v["diversity"]["corrected_ci"][1]
    assert v["joint"]["p"] > 0.05


@pytest.mark.slow
def test_model_based_terms_are_flagged_above_entropy_and_at_large_dimension(tmp_path):
    """Classes that differ only in the members' scale (true I(U;Y) <= H(Y) = 1 bit): the
    Gaussian I is far above H(Y), flagged in its row and in the summary; the usable I stays
    below H(Y). D = 20 dimensions for 30 examples per class: dimension_too_large."""
    from infodiv.inference.surrogates import with_arrays

    base = dependent_ensemble(200, 6, signal=0.5, rho=0.4, random_state=3)
    rng = np.random.default_rng(0)
    scale = np.where(base.labels == 1, 1.0, 0.01)
    run = with_arrays(base, u=scale[:, None, None] * rng.standard_normal((200, 6, 2)))
    doc = decomposition_report(run, tmp_path / "b", info_methods=("usable", "gaussian"),
                               inference=20, every_variant=False)
    inf = doc["information_inference"]
    h_y = _entropy_bits(run.labels)
    assert inf["methods"]["gaussian"]["joint"]["value"] > h_y + 5
    assert "information_exceeds_entropy" in {f["code"] for f in inf["flags"]}
    md = (tmp_path / "b" / "decompositions.md").read_text()
    assert "| gaussian | joint [FLAG information_exceeds_entropy] |" in md
    assert "Flags (" in md
    assert inf["methods"]["usable"]["joint"]["value"] <= h_y
    assert inf["methods"]["usable"]["joint"]["bracket"][1] <= h_y + 1e-12
    wide = dependent_ensemble(60, 20, signal=0.5, rho=0.4, random_state=3)
    wide.labels[:] = np.repeat([0, 1], 30)
    wide_inf = information_inference(wide, ("gaussian",), n_resamples=20, n_null=0)
    assert "dimension_too_large" in {f["code"] for f in wide_inf["flags"]}


@pytest.mark.slow
def test_decomposition_report_keeps_every_variant_and_the_depth_estimand(tmp_path):
    run = shuffled_labels(dependent_ensemble(200, 5, signal=0.5, rho=0.4, random_state=2),
                          random_state=0)
    doc = decomposition_report(run, tmp_path / "a", info_methods=(), inference=30,
                               every_variant=True)
    fig = doc["figures_every_variant"]
    assert {r["variant"] for r in fig["rows"]} == {"logit/mean", "logit/sum", "probability/mean",
                                                   "probability/sum", "paper_eq14/mean",
                                                   "paper_eq14/sum"}
    for name in fig["files"]:
        assert (tmp_path / "a" / name).stat().st_size > 1000, name
    assert all(1 / 31 <= r["p_bootstrap"] <= 1 for r in fig["rows"])
    depth = doc["depth"]["measures"]["accuracy"]
    assert set(depth) == {"truncated_model", "member_subsets", "truncated_minus_subsets"}
    assert "direct effect" in doc["depth"]["labels"]["member_subsets"]
    s = depth["truncated_model"]["increment_slope"]
    assert {"value", "ci", "p", "corrected", "corrected_ci"} <= set(s)
    md = (tmp_path / "a" / "decompositions.md").read_text()
    assert "Depth: truncated model vs member subsets" in md and "paper_eq14/mean" in md


def test_model_based_terms_on_shuffled_labels_and_label_free_terms():
    """By name only: the Gaussian terms under the refitted bootstrap and the label null; the
    null-corrected joint covers 0 on shuffled labels; TC does not involve Y, so no null."""
    run = shuffled_labels(dependent_ensemble(200, 5, signal=0.5, rho=0.4, random_state=2),
                          random_state=0)
    doc = information_inference(run, ("gaussian",), n_resamples=20, n_null=19)
    assert set(doc["methods"]) == {"gaussian"}
    terms = doc["methods"]["gaussian"]
    joint = terms["joint"]
    assert joint["corrected_ci"][0] <= 0 <= joint["corrected_ci"][1]
    assert joint["n_bootstrap"] == 20 and joint["n_permutations"] == 19
    assert joint["corrected"] == pytest.approx(joint["value"] - joint["null_mean"])
    assert joint["ci"][0] <= joint["value"] <= joint["ci"][1]
    assert "p" not in terms["redundancy"] and "does not involve Y" in terms["redundancy"][
        "null_note"]
    assert "not an estimate" in terms["validity"]
    with pytest.raises(ValueError, match="unknown"):
        information_inference(run, ("knn",))
