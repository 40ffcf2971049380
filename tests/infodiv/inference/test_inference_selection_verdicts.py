"""Selection comparisons as verdicts: the claims greedy vs best-of-random and vs the depth
prefix (infodiv.claims.greedy_vs_random / greedy_vs_prefix), one budget-averaged held-out
difference each, through the engine (example-bootstrap interval, label-permutation null and
the power of a matched case where greedy must win), as the curves report runs them
(infodiv.study.curves.selection_verdicts).

Seeded; rates judged with binomial tolerances (floor: rate minus two binomial sd; ceiling:
0.05 plus two).
"""

import numpy as np
import pytest
from _binomial import ceiling

from infodiv.claims import CLAIMS
from infodiv.claims._selection import budget_statistics, quick
from infodiv.inference import dependent_ensemble
from infodiv.inference.claim import Design, Replicate
from infodiv.inference.surrogates import concentrated_late
from infodiv.selection import held_out_scores, subset_selection
from infodiv.study import StudySettings
from infodiv.study.curves import selection_verdicts


@pytest.fixture(scope="module")
def verdicts():
    run = dependent_ensemble(600, 16, signal=0.5, rho=0.3, random_state=1)
    return selection_verdicts(run, "accuracy", StudySettings().with_settings(
        n_bootstrap=39, power_replicates=12, seed=1))


def test_greedy_must_win_case_is_detected_and_shuffled_labels_fire_at_most_alpha(verdicts):
    """Concentrated signal placed last in depth order: greedy beats the prefix in 12 of 12
    and best-of-random in 12 of 12 surrogates (measured); shuffled labels within the binomial
    ceiling of 0.05."""
    floor = 12 * (0.8 - 2 * np.sqrt(0.16 / 12))
    for test in ("greedy_beats_random", "greedy_beats_prefix"):
        v = verdicts["verdicts"][test]
        assert v["power"]["n"] == 12 and f"{v['power']['rate']:.2f}" in v["text"]
        assert "greedy must win" in v["text"]
        assert v["power"]["n_detected"] >= floor
        assert v["false_positive"]["n_detected"] <= 12 * ceiling(0.05, 12)
    v = verdicts["verdicts"]["greedy_beats_prefix"]
    assert v["interval"][0] <= v["estimate"] <= v["interval"][1]
    assert v["corrected"] == pytest.approx(v["estimate"] - v["null_mean"])
    assert v["n_permutations"] == verdicts["sizes"]["n_permutations"] == 39


def test_concentrated_late_puts_the_strongest_members_last_and_the_rest_label_free():
    run = dependent_ensemble(600, 16, signal=0.5, rho=0.3, random_state=1)
    sur = concentrated_late(run, 4, random_state=0)
    strongest = sur.meta["surrogate"]["informative"]
    assert np.array_equal(sur.u[:, 12:], run.u[:, strongest])
    # every other position: a member's own values, permuted across examples
    rest = np.setdiff1d(np.arange(16), strongest)
    assert np.allclose(np.sort(sur.u[:, 0, 0]), np.sort(run.u[:, rest[0], 0]))
    y = 2.0 * run.labels - 1
    assert abs(np.corrcoef(sur.u[:, :12, 0].sum(axis=1), y)[0, 1]) < 0.12
    with pytest.raises(ValueError, match="n_informative"):
        concentrated_late(run, 16)


def test_the_power_shortcut_and_the_statistic_compute_the_same_budget_average():
    """Same seed: the power shortcut's Δ (per-example held-out scores, selected once) is the
    claims' statistic, and the per-example means are subset_selection's held-out values up to
    the halves' unequal sizes (exactly equal for equal halves)."""
    run = dependent_ensemble(200, 6, signal=0.5, random_state=2)
    sel = subset_selection(run, objective="accuracy", n_random=10, random_state=4)
    sc = held_out_scores(run, objective="accuracy", n_random=10, random_state=4)
    for k in ("greedy", "prefix", "best_random"):
        assert np.allclose(sc[k].mean(axis=1), sel[k], atol=0.01)
    design = Design("accuracy", n_random=10)
    stat = budget_statistics(Replicate(run, design, np.random.default_rng(7)))
    det = quick(Replicate(run, design, np.random.default_rng(0)), np.random.default_rng(7), 50)
    for name, value in stat.items():
        assert det[name]["value"] == pytest.approx(value, abs=1e-12)
        assert det[name]["ci"][0] <= det[name]["value"] <= det[name]["ci"][1]
    for claim in ("greedy_beats_random", "greedy_beats_prefix"):
        rep = Replicate(run, design, np.random.default_rng(7))
        assert CLAIMS[claim].statistic(rep) in stat.values()
    with pytest.raises(ValueError, match="n_permutations"):
        from infodiv.inference.engine import evaluate

        evaluate(run, [CLAIMS["greedy_beats_prefix"]], design, n_permutations=10)
