"""ennemi's analytic unit-test cases (tests/ennemi_cases.py) through infodiv, at ennemi's own
seeds, sizes, k and tolerances.

``preprocess="none"`` is ennemi's raw-data setting of those tests: every case passes (68 of
68; ``I(X;Y|Y) = 0`` needs identical inputs to get identical tie-breaking noise,
:func:`estimators.knn.prepare_all`). The discrete-conditioned CMI cases, which failed through
the chain rule ``I(X,Z;Y) - I(Z;Y)``, pass with the direct per-class estimator under every
preprocessing.
"""

from __future__ import annotations

import warnings

import pytest
from ennemi_cases import cases  # tests/ is on sys.path (tests/conftest.py)

CASES = cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_within_ennemi_tolerance(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = case.value("none")
    assert case.passes(value), f"{value:.4f} vs {case.expected:.4f} +- {case.delta}"


@pytest.mark.parametrize("preprocess", ["standardize", "rank", "none"])
def test_discrete_conditioned_cmi_cases_pass_with_direct_estimator(preprocess):
    names = ["mixed cmi/independent 2 levels n=400 k=1", "mixed cmi/multiple levels: I(W;Y|Z)"]
    for case in (c for c in CASES if c.name in names):
        assert case.passes(case.value(preprocess)), case.name
