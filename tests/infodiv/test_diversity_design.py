"""x's non-redundancy with the nested sets of a DR chain from one factorisation equals the
separate solves (well-conditioned and singular member covariances)."""

import numpy as np
import pytest

from infodiv import diversity
from infodiv.submodularity import sample_triple


def _direct(cov, d, x, s):
    """1 − tr(Σ_xS Σ_SS⁺ Σ_Sx) / tr Σ_xx with a pseudo-inverse (independent of the module)."""
    if len(s) == 0:
        return 1.0
    dx = np.arange(x * d, (x + 1) * d)
    ds = (np.asarray(s)[:, None] * d + np.arange(d)).ravel()
    sxs = cov[np.ix_(dx, ds)]
    return 1.0 - np.trace(sxs @ np.linalg.pinv(cov[np.ix_(ds, ds)]) @ sxs.T) / np.trace(
        cov[np.ix_(dx, dx)])


@pytest.mark.parametrize("singular", [False, True, "wide"])
def test_chain_non_redundancy_equals_separate_solves(singular):
    rng = np.random.default_rng(0)
    m, d = 10, 3
    x = rng.normal(size=(300, m * d)) @ rng.normal(size=(m * d, m * d))
    if singular is True:   # member 4 is an exact copy of member 1: Σ_BB singular with both in B
        x[:, 12:15] = x[:, 3:6]
    if singular == "wide":   # a resample of 24 rows (fewer distinct rows than coordinates, as
        # a head run's bootstrap): every large B is singular and predicts x exactly
        x = x[rng.integers(0, 24, 24)]
    cov = np.cov(x, rowvar=False)
    n_fallback = 0
    for _ in range(150):
        a, b, j = sample_triple(m, rng)
        na, nb = diversity._chain_non_redundancy(cov, d, j, a, b)
        assert nb == pytest.approx(_direct(cov, d, j, b), abs=1e-8)
        if len(a):
            assert na == pytest.approx(_direct(cov, d, j, a), abs=1e-8)
        n_fallback += ({1, 4} <= set(b.tolist()) if singular is True
                       else singular == "wide" and len(b) * d >= 24)
    assert not singular or n_fallback > 10   # the singular branch was exercised


def test_design_uses_every_nonempty_set():
    rng = np.random.default_rng(1)
    m, d = 8, 2
    cov = np.cov(rng.normal(size=(200, m * d)), rowvar=False)
    triples = []
    for _ in range(30):
        a, b, j = sample_triple(m, rng)
        triples.append({"A": a, "B": b, "x": j})
    design = diversity.diversity_design(triples, np.arange(m, dtype=float), cov, d)
    expect = [(i, col) for i, t in enumerate(triples) for col, k in enumerate("AB") if len(t[k])]
    assert design["index"].tolist() == [list(e) for e in expect]
    for (i, col), v in zip(design["index"], design["diversity"]):
        t = triples[i]
        assert v == pytest.approx(_direct(cov, d, t["x"], t["AB"[col]]), abs=1e-8)
