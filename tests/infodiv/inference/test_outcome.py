"""What a verdict concludes (infodiv.inference.outcome): holds / opposite / absent /
inconclusive / untestable, the margins δ, the minimal detectable effect and the n that would
decide — each computed here independently of the module, and through the engine on runs where
the conclusion is known."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest
from _paths import ROOT
from scipy.stats import norm

from infodiv.claims import CLAIMS, get_claims
from infodiv.controls import conditionally_independent_ensemble
from infodiv.inference.claim import Claim, Design
from infodiv.inference.engine import evaluate
from infodiv.inference.outcome import Margin, decide_outcome, min_detectable_effect, n_for_power

BASE = dict(direction="greater", detected=False, opposite=False, calibrated=True, n=400,
            alpha=0.05)


def test_holds_and_opposite_come_from_the_rule_only_when_calibrated():
    assert decide_outcome(**{**BASE, "detected": True}, interval=[0.1, 0.3],
                          corrected_interval=[0.1, 0.3], margin=0.05)["outcome"] == "holds"
    assert decide_outcome(**{**BASE, "opposite": True}, interval=[-0.3, -0.1],
                          corrected_interval=[-0.3, -0.1], margin=0.05)["outcome"] == "opposite"
    out = decide_outcome(**{**BASE, "detected": True, "calibrated": False}, interval=[0.1, 0.3],
                         corrected_interval=[0.1, 0.3], margin=0.05)
    assert out["outcome"] == "inconclusive" and "shuffled labels" in out["reason"]


@pytest.mark.parametrize("direction, interval, absent", [
    ("greater", [-0.2, 0.04], True),     # claim side is high: 0.04 < δ = 0.05
    ("greater", [-0.2, 0.06], False),    # reaches beyond δ
    ("less", [-0.04, 0.2], True),        # claim side is low: -0.04 > -δ
    ("less", [-0.06, 0.2], False),
])
def test_absent_is_an_equivalence_bound_on_the_claims_side(direction, interval, absent):
    out = decide_outcome(**{**BASE, "direction": direction}, interval=interval,
                         corrected_interval=interval, margin=0.05)
    assert (out["outcome"] == "absent") is absent
    # the null-corrected interval must agree too
    shifted = [interval[0] - 0.03, interval[1] + 0.03]
    out = decide_outcome(**{**BASE, "direction": direction}, interval=interval,
                         corrected_interval=shifted, margin=0.05)
    assert out["outcome"] != "absent"


def test_inconclusive_gives_the_detectable_effect_and_the_n_that_decides():
    iv = [-0.02, 0.06]
    out = decide_outcome(**BASE, interval=iv, corrected_interval=iv, margin=0.01)
    se = 0.08 / (2 * norm.ppf(0.975))
    mde = (norm.ppf(0.975) + norm.ppf(0.8)) * se
    assert out["outcome"] == "inconclusive"
    assert out["mde"] == pytest.approx(mde, rel=1e-12)
    assert out["n_needed"] == math.ceil(400 * (mde / 0.01) ** 2)
    assert min_detectable_effect(iv) == pytest.approx(mde) and n_for_power(400, mde, None) is None
    # no margin, no interval: still a reason, never a bare "not detected"
    for kw in (dict(interval=iv, corrected_interval=iv, margin=None),
               dict(interval=None, corrected_interval=None, margin=0.01)):
        out = decide_outcome(**BASE, **kw)
        assert out["outcome"] == "inconclusive" and out["reason"]
    assert decide_outcome(**BASE, interval=iv, corrected_interval=iv, margin=0.01,
                          untestable="no label")["outcome"] == "untestable"


def test_no_n_is_offered_where_more_examples_would_not_decide():
    """A narrow interval beyond δ that the label null does not confirm: n₈₀ = ⌈n (MDE/δ)²⌉
    is below the run's n (here ⌈400 (0.0029/0.1)²⌉ = 1), so no n would decide it."""
    iv = [0.987, 0.995]
    out = decide_outcome(**BASE, interval=iv, corrected_interval=iv, margin=0.1)
    mde = (norm.ppf(0.975) + norm.ppf(0.8)) * 0.008 / (2 * norm.ppf(0.975))
    assert math.ceil(400 * (mde / 0.1) ** 2) <= 400
    assert out["outcome"] == "inconclusive" and out["n_needed"] is None
    assert "label null does not confirm" in out["reason"]


def test_margins_are_shares_of_the_members_gain():
    m = Margin(0.25, "gain_slope", "x")
    assert m.value(0.4, 5) == pytest.approx(0.25 * 0.4 / 5 / 4)
    assert Margin(0.25, "mean_gain", "x").value(0.4, 5) == pytest.approx(0.02)
    assert Margin(0.05, "total_gain", "x").value(0.4, 5) == pytest.approx(0.02)
    assert Margin(0.1, "absolute", "x").value(None, 1) == 0.1
    assert m.value(0.0, 5) is None and m.value(-0.1, 5) is None
    with pytest.raises(ValueError, match="scale"):
        Margin(0.25, "per_layer", "x")
    # the bend of a linear g(k) at the margin's slope is M/(32(M - 1)) of the total gain
    n_members, total = 12, 1.0
    slope = m.value(total, n_members)
    g = total / n_members + slope * (np.arange(1, n_members + 1) - (n_members + 1) / 2)
    f = np.concatenate([[0.0], np.cumsum(g)])
    chord = np.arange(n_members + 1) * f[-1] / n_members
    assert np.abs(f - chord).max() == pytest.approx(n_members / (32 * (n_members - 1)))


def test_docs_state_every_claims_margin_as_the_registry_does():
    text = (ROOT / "docs" / "claims.md").read_text()
    text = text.split("### The margins δ", 1)[1].split("\n## ", 1)[0]   # that section's table
    rows = [ln for ln in text.splitlines() if ln.startswith("| `") and "δ" not in ln[:4]]
    for name, claim in CLAIMS.items():
        row = next((r for r in rows if f"`{name}`" in r.split("|")[1]
                    and re.search(r"Δ|none|\(partial r\)|\(excess", r)), None)
        assert row is not None, f"docs/claims.md has no margin row for {name}"
        cell = row.split("|")[2]
        mg = claim.margin
        if mg is None:
            assert "none" in cell, name
        elif mg.scale == "gain_slope":
            assert "Δ/(M(M − 1))" in cell and "¼" in cell and mg.fraction == 0.25, name
        elif mg.scale == "mean_gain":
            assert "Δ/M" in cell and "M − 1" not in cell and mg.fraction == 0.25, name
        elif mg.scale == "total_gain":
            assert "1/20 · Δ" in cell and mg.fraction == 0.05, name
        else:
            assert f"{mg.fraction:g}" in cell, name


def _label_lean(rep) -> float:
    """mean over the replicate's rows of (2y − 1)·(u_0[1] − u_0[0]): how far member 0 leans
    towards the right option (0 in expectation once the labels are shuffled)."""
    u = np.asarray(rep.run.u, dtype=np.float64)
    sign = 2.0 * np.asarray(rep.run.labels) - 1.0
    return float((sign * (u[:, 0, 1] - u[:, 0, 0])).mean())


LEAN = Claim(name="lean", theorem="t", statistic_name="label lean", statistic=_label_lean,
             direction="greater", surrogate="conditionally_independent",
             matched_case="m", sentence="member 0 leans to the right option",
             rule="three-part rule at {alpha}", margin=Margin(0.1, "absolute", "test"),
             conclusions={"holds": "it leans right", "opposite": "it leans wrong"})


def test_the_engine_concludes_opposite_absent_and_inconclusive_on_known_runs():
    """A statistic whose value is known: −0.5 (opposite), 0 with a tight interval (absent),
    0 with a wide one (inconclusive, n₈₀ from the record's own interval)."""
    run = conditionally_independent_ensemble(400, 3, mu=0.5, random_state=0)
    u = np.asarray(run.u, dtype=np.float64)
    sign = 2.0 * np.asarray(run.labels) - 1.0
    kw = dict(n_bootstrap=40, n_permutations=39, n_mc=2, n_power=0, random_state=0)
    design = Design("accuracy", n_orders=2, n_triples=0)

    def with_member0(lean, noise):
        v = u.copy()
        rng = np.random.default_rng(1)
        e = rng.standard_normal(len(v))
        e -= sign * (sign * e).mean()    # no lean in the noise: the statistic is exactly `lean`
        v[:, 0, 1] = v[:, 0, 0] + lean * sign + noise * e
        return dataclasses.replace(run, u=v)

    opp = evaluate(with_member0(-0.5, 0.5), [LEAN], design, **kw)["records"]["lean"]
    assert opp.opposite and opp.outcome == "opposite" and opp.interval[1] < 0
    assert opp.p_opposite < 0.05 and not opp.detected
    near = evaluate(with_member0(0.0, 0.05), [LEAN], design, **kw)["records"]["lean"]
    assert near.outcome == "absent" and near.interval[1] < 0.1
    wide = evaluate(with_member0(0.0, 4.0), [LEAN], design, **kw)["records"]["lean"]
    assert wide.outcome == "inconclusive" and wide.n_needed > 400
    se = (wide.interval[1] - wide.interval[0]) / (2 * norm.ppf(0.975))
    mde = (norm.ppf(0.975) + norm.ppf(0.8)) * se
    assert wide.n_needed == math.ceil(400 * (mde / 0.1) ** 2)
    assert "n ≈" in wide.text() and "inconclusive" in wide.text()


def test_conditionally_independent_members_make_the_premise_absent():
    """The premise claim's δ = 0.01 on the excess r²: members permuted within class have
    population excess 0, so with n = 300 the interval stays within δ."""
    run = conditionally_independent_ensemble(300, 5, mu=0.5, random_state=0)
    rec = evaluate(run, get_claims(["premise"]), Design("accuracy", n_orders=2, n_triples=0),
                   n_bootstrap=20, n_permutations=20, n_mc=2, n_power=0,
                   random_state=0)["records"]["premise"]
    assert rec.outcome == "absent" and rec.interval[1] < 0.01 and rec.margin["value"] == 0.01
