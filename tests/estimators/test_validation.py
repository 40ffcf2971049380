import numpy as np
import pytest

from estimators import validation as v


def test_nan_named():
    with pytest.raises(ValueError, match="x contains 1 NaN"):
        v.check_array([1.0, np.nan], "x")


def test_length_mismatch_names_both():
    with pytest.raises(ValueError, match="x has 3 samples but y has 2"):
        v.check_same_length(x=np.zeros(3), y=np.zeros(2))


def test_labels_must_be_integers():
    with pytest.raises(TypeError, match="integer labels"):
        v.check_labels(np.array([0.0, 1.0]))


def test_k_too_large():
    with pytest.raises(ValueError, match="k=5 needs more than 5 samples"):
        v.check_k(5, 5)


def test_jitter_is_seeded():
    x = np.ones((4, 2))
    a = v.jitter(x, v.check_random_state(1))
    b = v.jitter(x, v.check_random_state(1))
    c = v.jitter(x, v.check_random_state(2))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_bits():
    assert v.to_base(np.log(2), 2) == pytest.approx(1.0)


def test_unit_name():
    assert [v.unit_name(b) for b in (2, 2.0, "e", None, np.e, 10)] == [
        "bits", "bits", "nats", "nats", "nats", "log base 10"]
