"""The first screen's information lines: Theorems 5–6 measured along the depth order
(infodiv.information.prefix_information), I(U;Y) and Theorem 8's bounds beside the best readout's
error (infodiv.reports.answer_information), and the decompositions' --info-null."""

from __future__ import annotations

import json

import numpy as np
import pytest

from estimators import usable_information
from infodiv.cli import main
from infodiv.information import prefix_information, prefix_sizes
from infodiv.reports.answer_information import information_answer, information_rows_html


def _members(n=600, m=6, seed=0):
    """Members that each add label signal: the information of the depth prefixes grows."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    onehot = np.eye(3)[y]
    u = np.stack([0.6 * onehot + rng.normal(size=(n, 3)) for _ in range(m)], axis=1)
    return u, y


def test_prefix_sizes_double_and_end_at_all_members():
    assert prefix_sizes(61) == [1, 2, 4, 8, 16, 32, 61]
    assert prefix_sizes(8) == [1, 2, 4, 8] and prefix_sizes(1) == [1]
    with pytest.raises(ValueError, match="n_members must be >= 1, got 0"):
        prefix_sizes(0)


def test_prefix_information_is_the_estimator_on_each_prefix_and_the_identity():
    u, y = _members()
    rel = np.linspace(0.01, 0.06, u.shape[1])
    p = prefix_information(u, y, relevancies=rel, random_state=3)
    assert p["sizes"] == [1, 2, 4, 6]
    for k, joint, ci, err in zip(p["sizes"], p["joint"], p["joint_ci"], p["error"]):
        ui = usable_information(u[:, :k], y, random_state=3, bracket=False)
        assert joint == pytest.approx(ui.estimate, abs=1e-12)
        assert ci == pytest.approx(list(ui.interval), abs=1e-12) and err == ui.error
        assert ci[0] <= joint <= ci[1]
    want_r = [rel[:k].sum() for k in p["sizes"]]
    assert p["relevancy"] == pytest.approx(want_r, abs=1e-12)
    assert p["diversity"] == pytest.approx(np.subtract(p["joint"], want_r), abs=1e-12)
    # members that each add signal: the estimate grows, as the chain rule says the truth does
    falls = -np.diff(p["joint"])
    assert p["steps"] == {"n_steps": 3, "n_falls": int((falls > 0).sum()),
                          "largest_fall": float(max(falls.max(), 0.0)),
                          "n_falls_beyond_intervals": 0}
    assert p["joint"][-1] > p["joint"][0] + 0.1
    with pytest.raises(ValueError, match=r"one value per member \(6\), got shape \(5,\)"):
        prefix_information(u, y, relevancies=rel[:5])


def _usable_entry(best, low_bound=0.1):
    prefix = {"sizes": [1, 2], "joint": [0.2, 0.5], "joint_ci": [[0.1, 0.3], [0.4, 0.6]],
              "error": [0.5, best], "relevancy": [0.2, 0.6], "diversity": [0.0, -0.1],
              "steps": {"n_steps": 1, "n_falls": 0, "largest_fall": 0.0,
                        "n_falls_beyond_intervals": 0}, "units": "bits"}
    return {"information_inference": {"methods": {"usable": {
        "joint": {"value": 0.5, "ci": [0.4, 0.6], "bracket": [0.4, 1.0], "upper_kind": "H(Y)",
                  "families": ["own", "calibrated", "own"]},
        "relevancy": {"value": 0.6, "ci": [0.5, 0.7]},
        "diversity": {"value": -0.1, "ci": [-0.2, 0.0]},
        "bound_lower": {"value": low_bound}, "bound_upper": {"value": 0.25},
        "prefix": prefix, "h_y": 1.0}}}}


def test_theorem8_is_consistent_unless_an_error_lies_below_the_lower_bound():
    ok = information_answer(_usable_entry(0.2), 400, 0.3)
    assert ok["consistent"] and ok["families"] == ["calibrated", "own"]
    lo, hi = ok["best_readout_error_ci"]
    assert lo <= 0.2 <= hi and hi - lo < 0.1          # Wilson interval at n = 400
    # a held-out error far below the Eq. 12 lower bound contradicts the bracket on I
    bad = information_answer(_usable_entry(0.02, low_bound=0.2), 400, 0.3)
    assert not bad["consistent"] and "contradicts the bracket" in information_rows_html(bad)
    # ... and so does the model's own error (its logits are a classifier of the members)
    assert not information_answer(_usable_entry(0.3, low_bound=0.2), 400, 0.02)["consistent"]
    # within its Wilson interval of the bound: no contradiction
    assert information_answer(_usable_entry(0.19, low_bound=0.2), 400, 0.3)["consistent"]
    assert information_answer({}, 400, 0.3) is None


def test_the_rows_say_present_a_fact_and_the_bounds():
    html = information_rows_html(information_answer(_usable_entry(0.2), 400, 0.3))
    for needle in ("I(U;Y)", "present", "0.5 [0.4, 0.6]", "Theorems 5–6", "a fact; estimates "
                   "agree", "0 of 1 steps fall, 0 beyond their intervals", "Theorem 8",
                   "0.1 ≤ P(error) ≤ 0.25", "consistent", "label null not run"):
        assert needle in html, needle
    entry = _usable_entry(0.2)
    entry["information_inference"]["methods"]["usable"]["prefix"]["steps"].update(
        n_falls=1, n_falls_beyond_intervals=1)
    assert "a fact; estimates fall" in information_rows_html(information_answer(entry, 400, 0.3))


@pytest.mark.slow
def test_decompose_info_null_sets_the_label_permutations(tmp_path):
    from infodiv.inference import dependent_ensemble

    run = dependent_ensemble(160, 4, signal=0.6, rho=0.4, random_state=1)
    run.save(tmp_path / "c")
    for k, out in ((0, "none"), (3, "three")):
        assert main(["decompose", str(tmp_path / "c"), "--out", str(tmp_path / out),
                     "--info-null", str(k), "--inference", "20", "--no-every-variant"]) == 0
        doc = json.loads((tmp_path / out / "decompositions.json").read_text())
        inf = doc["information_inference"]
        assert inf["settings"]["n_null"] == k
        joint = inf["methods"]["usable"]["joint"]
        assert ("p" in joint) == bool(k) and joint.get("n_permutations", 0) == k
        prefix = inf["methods"]["usable"]["prefix"]
        assert prefix["sizes"] == [1, 2, 4] and prefix["joint"][-1] == pytest.approx(
            joint["value"], abs=1e-12)     # the last prefix is all members, on the same folds
