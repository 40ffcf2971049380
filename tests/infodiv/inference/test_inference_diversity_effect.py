"""The diversity-effect claim (infodiv.claims.diversity_effect): beta > 0 through the three-part
rule, its matched power control (planted redundancy) and its shuffled-label rate.

Judged over seeded surrogate replicates with binomial tolerances (floor: rate minus two
binomial sd; ceiling: 0.05 plus two).
"""

import numpy as np
import pytest
from _binomial import ceiling
from _shortcut import label_null, shortcut_detects

from infodiv.claims import CLAIMS
from infodiv.inference import dependent_ensemble, surrogate_power
from infodiv.inference.claim import Design
from infodiv.inference.engine import evaluate
from infodiv.inference.surrogates import planted_redundancy, with_arrays

CLAIM = CLAIMS["diversity_effect"]


def equal_signal(n=300, m=10, mu=0.6, seed=1):
    """Conditionally independent members with the same signal: non-redundancy varies with |S|
    only, so the run has no diversity effect of its own (its verdict: not detected)."""
    base = dependent_ensemble(n, m, random_state=seed)
    rng = np.random.default_rng(seed)
    target = np.eye(2)[base.labels] - 0.5
    return with_arrays(base, u=mu * target[:, None, :] + rng.standard_normal((n, m, 2)))


@pytest.fixture(scope="module")
def power():
    """The claim's shortcut rule on 12 surrogates of each kind, against the run's label null
    (K = 39, the whole regression rerun); every kind is judged (not only the matched one)."""
    run = equal_signal()
    design = Design("accuracy", n_orders=4, n_triples=30, triple_seed=1)
    null = label_null(run, CLAIM, design, 39, 1)

    def det(sur, rng):
        return {CLAIM.name: shortcut_detects(CLAIM, design, sur, null, rng, 200)}

    res = surrogate_power(run, det, kinds=("planted_redundancy", "shuffled_labels",
                                           "conditionally_independent"),
                          n_replicates=12, surrogate_kwargs={"planted_redundancy":
                                                             {"n_copies": 2}},
                          random_state=1, progress=False)
    return {k: res[k]["diversity_effect"] for k in res if k != "n_replicates"}


def test_planted_redundancy_is_detected_and_shuffled_labels_fire_at_most_alpha(power):
    """Copies of the strongest members (beta > 0 by construction) are detected in most
    surrogates (11 of 12 measured); shuffled labels fire within the binomial ceiling of 0.05;
    the same run re-permuted within classes without copies stays near the null (0 of 12
    measured): the detections come from the planted redundancy."""
    assert power["planted_redundancy"]["n_detected"] >= 12 * (0.8 - 2 * np.sqrt(0.16 / 12))
    assert power["shuffled_labels"]["n_detected"] <= 12 * ceiling(0.05, 12)
    assert power["conditionally_independent"]["n_detected"] <= 3


def test_planted_redundancy_copies_the_strongest_members_with_label_free_noise():
    run = equal_signal()
    sur = planted_redundancy(run, 2, noise=0.5, random_state=3)
    pairs = np.asarray(sur.meta["surrogate"]["pairs"])
    for j, k in pairs:
        assert np.corrcoef(sur.u[:, k, 0], run.u[:, j, 0])[0, 1] > 0.85  # 1/sqrt(1.25) ~ 0.89
        assert j != k
    untouched = np.setdiff1d(np.arange(10), pairs[:, 1])
    assert np.array_equal(sur.u[:, untouched], run.u[:, untouched])
    with pytest.raises(ValueError, match="n_copies"):
        planted_redundancy(run, 6)


def test_power_runs_on_a_gaussian_information_objective():
    """mi_gaussian (a per-example set function without set_scores) gets the diversity power
    through the engine: the shortcut scores it set by set."""
    run = equal_signal(n=200, m=5, seed=3)
    rec = evaluate(run, [CLAIM], Design("mi_gaussian", n_orders=3, n_triples=12),
                   n_bootstrap=20, n_permutations=20, n_mc=2, n_power=2,
                   random_state=0)["records"]["diversity_effect"]
    assert rec.power["n"] == 2 and rec.false_positive["n"] == 2
    assert "planted redundancy" in rec.matched_case and np.isfinite(rec.estimate)
