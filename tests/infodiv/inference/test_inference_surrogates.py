"""Surrogate controls built from a run's own arrays (what the power of a test is measured on)."""

import numpy as np
import pytest

from infodiv.inference import (
    conditionally_independent,
    dependent_ensemble,
    make_surrogate,
    planted_synergy,
    shuffled_labels,
)
from infodiv.inference.surrogates import signal_level, within_class_permutation


@pytest.fixture(scope="module")
def run():
    return dependent_ensemble(300, 7, n_options=3, signal=0.5, rho=0.4, random_state=3)


def test_within_class_permutation_keeps_each_members_class_conditional_values(run):
    sur = conditionally_independent(run, random_state=1)
    assert sur.u.shape == run.u.shape
    np.testing.assert_array_equal(sur.labels, run.labels)
    for c in np.unique(run.labels):
        rows = run.labels == c
        for m in range(run.n_members):
            # the same multiset of C-vectors per class and member, exactly
            a = run.u[rows, m]
            b = sur.u[rows, m]
            np.testing.assert_array_equal(a[np.lexsort(a.T)], b[np.lexsort(b.T)])
    # ... but rows were moved, independently for each member
    assert not np.array_equal(sur.u, run.u)
    idx = within_class_permutation(run.labels, 4, random_state=1)
    assert (run.labels[idx] == run.labels[:, None]).all()
    assert len({tuple(idx[:, j]) for j in range(4)}) == 4
    # the readout is recomputed from the new members
    np.testing.assert_allclose(sur.logits, sur.u.sum(axis=1) + sur.bias, atol=1e-5)


def test_conditionally_independent_surrogate_destroys_dependence_given_y(run):
    def within_class_corr(c):
        x = c.u[:, :, 0] - c.u[:, :, 1]
        rs = []
        for k in np.unique(c.labels):
            r = np.corrcoef(x[c.labels == k], rowvar=False)
            rs.append(np.abs(r[np.triu_indices_from(r, 1)]).mean())
        return np.mean(rs)

    assert within_class_corr(run) > 0.25            # shared latent factor
    sur = conditionally_independent(run, random_state=0)
    assert within_class_corr(sur) < 0.1             # ~ 1/sqrt(100) noise level


def test_surrogates_are_seeded_per_replicate(run):
    for kind in ("conditionally_independent", "planted_synergy", "shuffled_labels"):
        a = make_surrogate(run, kind, random_state=5)
        b = make_surrogate(run, kind, random_state=5)
        c = make_surrogate(run, kind, random_state=6)
        np.testing.assert_array_equal(a.u, b.u)
        np.testing.assert_array_equal(a.labels, b.labels)
        assert not (np.array_equal(a.u, c.u) and np.array_equal(a.labels, c.labels))
        assert a.meta["surrogate"]["kind"] == kind
    with pytest.raises(ValueError, match="unknown surrogate"):
        make_surrogate(run, "nope")


def test_shuffled_labels_keep_class_counts_and_members(run):
    sur = shuffled_labels(run, random_state=2)
    np.testing.assert_array_equal(np.bincount(sur.labels), np.bincount(run.labels))
    np.testing.assert_array_equal(sur.u, run.u)
    assert (sur.labels != run.labels).mean() > 0.4


def test_planted_xor_pairs_are_marginally_uninformative_and_jointly_informative():
    base = dependent_ensemble(4000, 6, signal=0.5, rho=0.3, random_state=0)
    sur = planted_synergy(base, n_pairs=1, random_state=0)
    (j, k), = sur.meta["surrogate"]["pairs"]
    amp = sur.meta["surrogate"]["amplitude"]
    assert amp == pytest.approx(signal_level(base.u, base.labels, "max"))
    y = sur.labels
    xj = sur.u[:, j, 0] - sur.u[:, j, 1]
    xk = sur.u[:, k, 0] - sur.u[:, k, 1]
    se = 4 / np.sqrt(len(y) / 2)  # 4 standard errors of a class mean of unit-variance noise
    for x in (xj, xk):  # each member alone: the same mean in both classes
        assert abs(x[y == 0].mean() - x[y == 1].mean()) < 2 * se
    # together: the product flips sign with the class (XOR)
    prod = xj * xk
    assert prod[y == 0].mean() > 0.5 * amp ** 2 > 0 > prod[y == 1].mean()
    untouched = [m for m in range(6) if m not in (j, k)]
    np.testing.assert_array_equal(sur.u[:, untouched], base.u[:, untouched])
    with pytest.raises(ValueError, match="n_pairs"):
        planted_synergy(base, n_pairs=4)


def test_noise_cancelling_pairs_are_synergy_a_linear_readout_can_read():
    """style="cancel": u_k alone has the same mean in both classes, u_j's class difference is
    buried under noise 2x its size, their sum carries the class without that noise; the
    calibrated cross-entropy of the summed readout gains from k only once j is in (a
    diminishing-returns violation), while for an XOR pair neither order gains. The XOR stream
    is unchanged by the new option (same seed, same arrays)."""
    from infodiv.inference.surrogates import planted_style
    from infodiv.setfunctions import make_set_function

    base = dependent_ensemble(2000, 6, signal=1.0, rho=0.3, random_state=0)
    sur = planted_synergy(base, n_pairs=1, style="cancel", random_state=0)
    (j, k), = sur.meta["surrogate"]["pairs"]
    assert sur.meta["surrogate"]["style"] == "cancel" and sur.meta["surrogate"]["noise"] == 2.0
    y = sur.labels
    xj, xk = (sur.u[:, m, 0] - sur.u[:, m, 1] for m in (j, k))
    se = 4 / np.sqrt(len(y) / 2)
    assert abs(xk[y == 0].mean() - xk[y == 1].mean()) < 2 * se
    sep = [abs(x[y == 0].mean() - x[y == 1].mean()) / x.std() for x in (xj, xj + xk)]
    assert sep[1] > 1.3 * sep[0]        # the pair separates the classes better than j (0.85, 1.25)
    gains = {}
    for style in ("cancel", "xor"):
        s = planted_synergy(base, n_pairs=1, style=style, random_state=0)
        f = make_set_function(s, "cross_entropy_calibrated", random_state=0)

        def rho(a, x, f=f):
            return -(f.value(np.array(sorted(a + [x]))) - f.value(np.array(sorted(a), dtype=int)))
        gains[style] = (rho([], k), rho([j], k))
    assert gains["cancel"][1] - gains["cancel"][0] > 0.1           # bits: a violation (0.21)
    assert abs(gains["xor"][1] - gains["xor"][0]) < 0.02            # invisible to the readout
    xor = planted_synergy(base, n_pairs=1, random_state=0)
    np.testing.assert_array_equal(xor.u, planted_synergy(base, n_pairs=1, style="xor",
                                                         random_state=0).u)
    assert planted_style("mi_gaussian") == "xor"
    assert planted_style("cross_entropy_calibrated") == planted_style("mi_probe") == "cancel"
    with pytest.raises(ValueError, match="style"):
        planted_synergy(base, style="and")
