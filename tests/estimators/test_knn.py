"""kNN backend (estimators.knn): analytic truth, exact reference counts, determinism, bad input.

Accuracy tests average S seeds and accept ``|mean - truth| <= 4 s.e. + bias budget``; the s.e. is
the measured seed-to-seed spread / sqrt(S). The bias budget is stated per case: 0 where the truth
is 0, 1% of |H| for entropies, 5% of the truth for MI/TC (KSG's documented finite-sample bias;
the largest measured is the XOR case, -0.029 nats = -4% at n = 4000, a boundary effect of the
Ross estimator where the class-conditional density jumps to zero on the axes).
Exactness of the neighbour counts (which an off-by-one would break) is checked separately against
naive O(n^2) implementations of each formula, to 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import digamma

from estimators import _neighbors, knn
from estimators.groundtruth import capacity  # C(a) in nats, by quadrature
from estimators.validation import jitter

S = 10          # seeds per accuracy test
N = 4000        # samples per seed


def logdet(a):
    return np.linalg.slogdet(a)[1]


def gaussian(cov, n, seed):
    cov = np.asarray(cov, dtype=float)
    return np.random.default_rng(seed).multivariate_normal(np.zeros(len(cov)), cov, size=n)


def label_model(n, seed, mu=0.5, n_vars=1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return mu * (2 * y - 1)[:, None] + rng.standard_normal((n, n_vars)), y


def xor_model(n, seed):
    u = np.random.default_rng(seed).standard_normal((n, 2))
    return u, (u[:, 0] * u[:, 1] > 0).astype(np.int64)


def over_seeds(estimate):
    return np.array([estimate(s, np.random.default_rng(1000 + s)) for s in range(S)])


def assert_mean_close(values, truth, bias_budget=0.0):
    se = values.std(ddof=1) / np.sqrt(len(values))
    tol = 4 * se + bias_budget
    err = values.mean() - truth
    assert abs(err) <= tol, f"mean {values.mean():.4f} vs truth {truth:.4f}: |err| {abs(err):.4f}" \
        f" > 4 s.e. ({4 * se:.4f}) + bias budget ({bias_budget:.4f})"


C3 = np.array([[1, .6, .3], [.6, 2, .5], [.3, .5, 1.5]])
C4 = np.array([[1, .3, .5, .2], [.3, 1, .1, .4], [.5, .1, 1, .3], [.2, .4, .3, 1]])
C_CMI = np.array([[1, 1, 1], [1, 4, 1], [1, 1, 9.0]])
C6 = np.eye(6)
for _i, _j, _v in [(0, 2, .4), (1, 3, .3), (2, 4, .35), (0, 5, .3), (1, 4, -.3)]:
    C6[_i, _j] = C6[_j, _i] = _v


# ----------------------------------------------------------------------------- analytic truth
def test_entropy_1d_gaussian():
    truth = 0.5 * np.log(2 * np.pi * np.e * 4.0)  # sd 2: checks the sum(log std) add-back
    v = over_seeds(lambda s, r: knn.entropy(gaussian([[4.0]], N, s), k=3, rng=r))
    assert_mean_close(v, truth, 0.01 * abs(truth))


def test_entropy_3d_correlated_gaussian():
    truth = 0.5 * (3 * np.log(2 * np.pi * np.e) + logdet(C3))
    v = over_seeds(lambda s, r: knn.entropy(gaussian(C3, N, s), k=3, rng=r))
    assert_mean_close(v, truth, 0.01 * abs(truth))


def test_mi_between_2d_blocks():
    truth = 0.5 * (logdet(C4[:2, :2]) + logdet(C4[2:, 2:]) - logdet(C4))
    v = over_seeds(lambda s, r: knn.mutual_information(
        *np.split(gaussian(C4, N, s), 2, axis=1), k=3, rng=r))
    assert_mean_close(v, truth, 0.05 * truth)


def test_cmi_dependent_conditioner():
    c = C_CMI
    truth = 0.5 * (logdet(c[np.ix_([0, 2], [0, 2])]) + logdet(c[1:, 1:]) - np.log(c[2, 2])
                   - logdet(c))
    assert truth > 0.1  # z explains part of the x-y dependence but not all of it
    v = over_seeds(lambda s, r: knn.conditional_mutual_information(
        *np.split(gaussian(c, N, s), 3, axis=1), k=3, rng=r))
    assert_mean_close(v, truth, 0.05 * truth)


def test_tc_over_vector_blocks():
    truth = 0.5 * (logdet(C6[:2, :2]) + logdet(C6[2:4, 2:4]) + logdet(C6[4:, 4:]) - logdet(C6))
    v = over_seeds(lambda s, r: knn.total_correlation(
        np.split(gaussian(C6, N, s), 3, axis=1), k=3, rng=r))
    assert_mean_close(v, truth, 0.05 * truth)


def test_label_model_mixed_mi_tc_and_conditional_tc():
    c1, c2 = capacity(0.5), capacity(1.0)
    v = over_seeds(lambda s, r: knn.mixed_mutual_information(*label_model(N, s), k=3, rng=r))
    assert_mean_close(v, c1, 0.05 * c1)
    v = over_seeds(lambda s, r: knn.mixed_mutual_information(
        *label_model(N, s, n_vars=4), k=3, rng=r))
    assert_mean_close(v, c2, 0.05 * c2)                       # I(U;Y) = C(2 mu)
    def tc_pair(s, r):
        u, y = label_model(N, s, n_vars=4)
        return knn.total_correlation_with_conditional(np.split(u, 4, axis=1), y, k=3, rng=r)

    pairs = over_seeds(tc_pair)
    assert_mean_close(pairs[:, 0], 4 * c1 - c2, 0.05 * (4 * c1 - c2))  # TC(U)
    assert_mean_close(pairs[:, 1], 0.0)                                 # TC(U|Y) = 0


def test_xor_synergy():
    one_bit = np.log(2)
    v = over_seeds(lambda s, r: knn.mixed_mutual_information(*xor_model(N, s), k=3, rng=r))
    assert_mean_close(v, one_bit, 0.05 * one_bit)
    for i in (0, 1):
        v = over_seeds(lambda s, r, i=i: knn.mixed_mutual_information(
            xor_model(N, s)[0][:, [i]], xor_model(N, s)[1], k=3, rng=r))
        assert_mean_close(v, 0.0)
    pairs = over_seeds(lambda s, r: knn.total_correlation_with_conditional(
        np.split(xor_model(N, s)[0], 2, axis=1), xor_model(N, s)[1], k=3, rng=r))
    assert_mean_close(pairs[:, 0], 0.0)
    assert_mean_close(pairs[:, 1], one_bit, 0.05 * one_bit)


def test_null_shuffled_labels_within_two_se_and_negative_kept():
    def mixed(s, r):
        u, y = label_model(1000, s)
        return knn.mixed_mutual_information(u, np.random.default_rng(s).permutation(y), k=3, rng=r)

    def ksg(s, r):  # shuffled rows of y: KSG on 2+2 dims under independence
        x, y = np.split(gaussian(C4, 1000, s), 2, axis=1)
        return knn.mutual_information(x, np.random.default_rng(s).permutation(y), k=3, rng=r)

    for estimate in (mixed, ksg):
        v = over_seeds(estimate)
        assert abs(v.mean()) <= 2 * v.std(ddof=1) / np.sqrt(S)
        assert v.min() < 0  # negative estimates come back as they are, not clamped


# ------------------------------------------------------------ exact counts vs naive reference
def _dist(*arrays):
    """Max-norm distance matrix of the concatenated arrays, diagonal = inf."""
    a = np.hstack(arrays)
    d = np.abs(a[:, None, :] - a[None, :, :]).max(axis=2)
    np.fill_diagonal(d, np.inf)
    return d


def _kth(d, k):
    return np.sort(d, axis=1)[:, k - 1]


def _ksg_ref(blocks, k):
    eps = _kth(_dist(*blocks), k)
    counts = np.stack([(_dist(b) < eps[:, None]).sum(1) for b in blocks], axis=1)
    n, m = len(eps), len(blocks)
    return digamma(k) + (m - 1) * digamma(n) - digamma(counts + 1).sum(1).mean()


@pytest.fixture(scope="module")
def small():
    x = gaussian(C6, 150, 7)
    labels = np.random.default_rng(3).integers(0, 3, 150)
    return x, labels


def _brute(monkeypatch):
    monkeypatch.setattr(_neighbors, "TREE_MAX_DIMS", 0)
    monkeypatch.setattr(_neighbors, "CHUNK_BYTES", 8 * 3 * 150 * 7)  # 7-row chunks, threads


@pytest.mark.parametrize("path", ["tree", "brute"])
def test_formulas_match_naive_reference(small, path, monkeypatch):
    if path == "brute":
        _brute(monkeypatch)
    x, labels = small
    k = 4
    rng = lambda: np.random.default_rng(11)  # noqa: E731

    r = rng()
    z = jitter(x[:, :3], r)
    ref = (digamma(150) - digamma(k) + 3 * np.mean(np.log(2 * _kth(_dist(z), k)))
           + np.log(x[:, :3].std(0)).sum())
    assert knn.entropy(x[:, :3], k=k, rng=rng()) == pytest.approx(ref, rel=1e-12)

    prep = knn.prepare  # the default preprocessing of MI / CMI / TC (entropy: jitter)
    r = rng()
    a, b = prep(x[:, :2], r), prep(x[:, 2:], r)
    assert knn.mutual_information(x[:, :2], x[:, 2:], k=k, rng=rng()) == pytest.approx(
        _ksg_ref([a, b], k), rel=1e-12)

    parts = np.split(x, 3, axis=1)
    r = rng()
    jit = [prep(p, r) for p in parts]
    assert knn.total_correlation(parts, k=k, rng=rng()) == pytest.approx(
        _ksg_ref(jit, k), rel=1e-12)

    ctc_ref = sum(np.mean(labels == c) * _ksg_ref([j[labels == c] for j in jit], k)
                  for c in np.unique(labels))
    tc, ctc = knn.total_correlation_with_conditional(parts, labels, k=k, rng=rng())
    assert tc == pytest.approx(_ksg_ref(jit, k), rel=1e-12)
    assert ctc == pytest.approx(ctc_ref, rel=1e-12)
    assert knn.conditional_total_correlation(parts, labels, k=k, rng=rng()) == pytest.approx(
        ctc_ref, rel=1e-12)

    r = rng()
    jx, jy, jz = prep(x[:, :1], r), prep(x[:, 1:2], r), prep(x[:, 2:4], r)
    eps = _kth(_dist(jx, jy, jz), k)[:, None]
    n_xz, n_yz, n_z = ((_dist(*s) < eps).sum(1) for s in ((jx, jz), (jy, jz), (jz,)))
    ref = digamma(k) - np.mean(digamma(n_xz + 1) + digamma(n_yz + 1) - digamma(n_z + 1))
    assert knn.conditional_mutual_information(
        x[:, :1], x[:, 1:2], x[:, 2:4], k=k, rng=rng()) == pytest.approx(ref, rel=1e-12)

    lab = labels.copy()
    lab[:2] = 9  # a class of 2 samples: k_i = min(k, 1)
    z = jitter(x[:, :2], rng())  # mixed MI: knn.LABELS_PREPROCESS (standardize)
    d = _dist(z)
    radius, k_i, n_y = np.empty(150), np.empty(150), np.empty(150)
    for c in np.unique(lab):
        idx = lab == c
        k_i[idx] = min(k, idx.sum() - 1)
        n_y[idx] = idx.sum()
        radius[idx] = _kth(d[np.ix_(idx, idx)], int(k_i[idx][0]))
    m_i = (d <= radius[:, None]).sum(1)
    ref = digamma(150) - digamma(n_y).mean() + digamma(k_i).mean() - digamma(m_i).mean()
    assert knn.mixed_mutual_information(x[:, :2], lab, k=k, rng=rng()) == pytest.approx(
        ref, rel=1e-12)


def test_brute_and_tree_paths_bit_identical(small, monkeypatch):
    x, labels = small
    parts = np.split(x, 3, axis=1)
    calls = [
        lambda: knn.entropy(x[:, :3], k=3, rng=np.random.default_rng(5)),
        lambda: knn.mutual_information(x[:, :2], x[:, 2:], k=3, rng=np.random.default_rng(5)),
        lambda: knn.conditional_total_correlation(parts, labels, k=3,
                                                  rng=np.random.default_rng(5)),
        lambda: knn.mixed_mutual_information(x, labels, k=3, rng=np.random.default_rng(5)),
    ]
    tree = [f() for f in calls]
    _brute(monkeypatch)
    assert [f() for f in calls] == tree


# ---------------------------------------------------------------- determinism and bad input
def test_same_seed_bit_identical_different_seed_different_jitter(small):
    x, labels = small
    tied = np.round(x, 1)  # many ties: only the jitter separates them
    parts = np.split(tied, 3, axis=1)
    calls = [
        lambda r: knn.entropy(x[:, :2], k=3, rng=r),
        lambda r: knn.mutual_information(tied[:, :2], tied[:, 2:], k=3, rng=r),
        lambda r: knn.total_correlation(parts, k=3, rng=r),
        lambda r: knn.conditional_total_correlation(parts, labels, k=3, rng=r),
        lambda r: knn.conditional_mutual_information(tied[:, :1], tied[:, 1:2], tied[:, 2:],
                                                     k=3, rng=r),
        lambda r: knn.mixed_mutual_information(tied[:, :1], labels, k=3, rng=r),
    ]
    for f in calls:
        assert f(np.random.default_rng(1)) == f(np.random.default_rng(1))
        values = {f(np.random.default_rng(s)) for s in range(6)}
        assert len(values) > 1


def test_bad_input_messages(small):
    x, labels = small
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="k=150 needs more than 150 samples"):
        knn.entropy(x, k=150, rng=rng)
    with pytest.raises(ValueError, match="k=200"):
        knn.mutual_information(x[:, :1], x[:, 1:], k=200, rng=rng)
    with pytest.raises(ValueError, match="k=150"):
        knn.total_correlation([x[:, :1], x[:, 1:]], k=150, rng=rng)
    with pytest.raises(TypeError, match="integer"):
        knn.conditional_mutual_information(x[:, :1], x[:, 1:2], x[:, 2:], k=2.5, rng=rng)
    lab = labels.copy()
    lab[0] = 42
    with pytest.raises(ValueError, match="class 42 has 1"):
        knn.mixed_mutual_information(x, lab, k=3, rng=rng)
    lab[1:3] = 42  # class 42 now has 3 samples: fewer than k+1 = 4
    with pytest.raises(ValueError, match=r"k=3 needs more than 3 samples within class 42"):
        knn.conditional_total_correlation([x[:, :1], x[:, 1:]], lab, k=3, rng=rng)
