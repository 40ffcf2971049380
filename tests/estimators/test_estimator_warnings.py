"""Warnings instead of silent mode switches (estimators.diagnostics), with the numbers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from estimators import conditional_mutual_information, mutual_information, total_correlation
from estimators.diagnostics import EstimatorWarning


def _gauss(n, rho, seed=0):
    return np.random.default_rng(seed).multivariate_normal([0, 0], [[1, rho], [rho, 1]], n)


def test_integer_coded_measurement_warns_and_float_is_right():
    d = np.round(_gauss(1000, 0.9) * 1000).astype(np.int64)
    with pytest.warns(EstimatorWarning, match=r"x: integer array with \d+ distinct values in "
                                              r"n=1000 .* treated as DISCRETE"):
        as_int = mutual_information(d[:, 0], d[:, 1], base="e")
    truth = -0.5 * np.log(1 - 0.81)
    assert as_int > 5.0  # plug-in of almost-unique values: near log n
    with pytest.warns(EstimatorWarning, match="repeat another row") as record:  # 12.5% ties
        as_float = mutual_information(d[:, 0].astype(float), d[:, 1].astype(float), base="e")
    assert not any("DISCRETE" in str(w.message) for w in record)
    assert abs(as_float - truth) < 0.1


def test_float_labels_as_given_warn():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 500)
    u = rng.standard_normal((500, 3)) + y[:, None]
    with pytest.warns(EstimatorWarning, match=r"given: float array with only 2 distinct values"
                                              r".*CONTINUOUS.*given.astype\(int\)"):
        total_correlation(u, given=y.astype(float))
    with pytest.warns(EstimatorWarning, match=r"z: float array with only 2 distinct"):
        conditional_mutual_information(u[:, 0], u[:, 1], y.astype(float))


def test_duplicated_rows_warn_with_counts():
    d = np.repeat(_gauss(1000, 0.6), 5, axis=0)
    with pytest.warns(EstimatorWarning, match=r"x: 4000 of 5000 rows \(80.0%\) repeat"):
        value = mutual_information(d[:, 0], d[:, 1], base="e")
    assert value > 5.0  # vs 0.22: the copies are each other's neighbours
    with warnings.catch_warnings():  # the Gaussian estimator is not affected: no warning
        warnings.simplefilter("error", EstimatorWarning)
        mutual_information(d[:, 0], d[:, 1], method="gaussian")


def test_repeated_variable_in_tc_warns():
    u = np.random.default_rng(2).standard_normal((1000, 2))
    with pytest.warns(EstimatorWarning, match=r"variables\[0\] and variables\[2\] are identical"):
        total_correlation([u[:, 0], u[:, 1], u[:, 0]])


def test_knn_dimension_warning_names_the_advice():
    u = np.random.default_rng(3).standard_normal((300, 12))
    with pytest.warns(EstimatorWarning, match=r"total correlation over 12 joint continuous "
                                              r"dimensions.*method='gaussian' or 'copula'"):
        total_correlation(u)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EstimatorWarning)
        total_correlation(u, method="gaussian")
        total_correlation(u[:, :10])


def test_clean_inputs_do_not_warn():
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((800, 2)), rng.integers(0, 3, 800)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EstimatorWarning)
        mutual_information(x, y)
        conditional_mutual_information(x[:, 0], y, x[:, 1])
        total_correlation([x[:, 0], x[:, 1]], given=y)


# ------------------------------------------- library cases that would otherwise be silent
def _x(n=500, d=1, seed=5):
    return np.random.default_rng(seed).standard_normal((n, d))


@pytest.mark.parametrize("method", ["gaussian", "knn"])
def test_exact_linear_dependence_warns_with_the_argument_names(method):
    x = _x()
    with pytest.warns(EstimatorWarning, match=r"y is an exact linear function of x \(R\^2 = 1"):
        mutual_information(x[:, 0], 2 * x[:, 0], method=method)
    with pytest.warns(EstimatorWarning, match=r"variables\[1\] is an exact linear function of "
                                              r"variables\[0\].*total correlation"):
        total_correlation([x[:, 0], 2 * x[:, 0]], method=method)
    u = _x(d=2)
    with pytest.warns(EstimatorWarning, match=r"variables\[2\] is an exact linear function of "
                                              r"variables\[0\] and variables\[1\]"):
        total_correlation([u[:, 0], u[:, 1], u[:, 0] + u[:, 1]], method=method)


def test_near_singular_covariance_warns():
    x = _x()[:, 0]
    noise = 1e-6 * np.random.default_rng(6).standard_normal(len(x))
    with pytest.warns(EstimatorWarning, match=r"y is almost a linear function of x "
                                              r"\(R\^2 = 1 - [0-9.e-]+, n=500\).*near-singular"):
        mutual_information(x, x + noise, method="gaussian")


def test_overflowing_scale_warns_and_mi_is_rescaled():
    u = _gauss(2000, 0.6, seed=7)
    reference = mutual_information(u[:, 0], u[:, 1], method="gaussian")
    for scale in (1e200, 1e-200):
        with pytest.warns(EstimatorWarning, match=r"x: column 0 has magnitude .*beyond about "
                                                  r"1e±154.*rescaled by a power of two"):
            value = mutual_information(u[:, 0] * scale, u[:, 1] * scale, method="gaussian")
        assert abs(value - reference) < 1e-9, (scale, value, reference)


@pytest.mark.parametrize("args, kwargs, needle", [
    (lambda: (np.array([0.1, 0.9]), np.array([0.2, 0.7])), {"method": "binned"},
     r"x and y: the joint of the 2 variables takes 2 distinct values in n=2"),
    (lambda: ([np.random.default_rng(8).standard_normal(5) for _ in range(10)],), {"method":
     "binned"}, r"variables: the joint of the 10 variables takes \d+ distinct values in n=5"),
])
def test_binned_estimates_check_n(args, kwargs, needle):
    fn = mutual_information if len(args()) == 2 else total_correlation
    with pytest.warns(EstimatorWarning, match=needle):
        fn(*args(), **kwargs)


def test_well_conditioned_inputs_still_do_not_warn():
    rng = np.random.default_rng(9)
    u = _gauss(3000, 0.95, seed=9)
    y = rng.integers(0, 2, 3000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EstimatorWarning)
        for method in ("gaussian", "knn"):
            mutual_information(u[:, 0], u[:, 1], method=method)
            total_correlation([u[:, 0], u[:, 1], rng.standard_normal(3000)], method=method)
        mutual_information(u[:, 0], y, method="binned")
        total_correlation([u[:, 0], u[:, 1]], method="binned")
