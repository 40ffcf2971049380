"""Input validation, randomness and unit helpers shared by every estimator module.

All estimators work in float64 and in nats internally; the public functions convert to the
requested ``base`` at the very end with :func:`to_base`. Randomness (tie-breaking jitter,
permutations, bootstrap) always comes from a :class:`numpy.random.Generator` built by
:func:`check_random_state`; the global NumPy RNG is never touched.

Convention: every public function that draws random numbers takes ``random_state`` with the
default ``0``, so a call without it is reproducible (same input, same estimate); pass an int or
a Generator to choose the stream, or ``None`` for a fresh unpredictable one.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

__all__ = [
    "check_array",
    "check_labels",
    "check_same_length",
    "check_k",
    "check_random_state",
    "check_seed_sequence",
    "check_variables",
    "check_base",
    "to_base",
    "unit_name",
    "is_discrete",
    "jitter",
    "log_scale",
]


def check_base(base) -> float:
    """Return the logarithm base as a float (``"e"`` or ``None`` mean nats)."""
    if base is None or base == "e":
        return float(np.e)
    if isinstance(base, bool) or not isinstance(base, numbers.Real) or not base > 1:
        raise ValueError(f"base must be a real number > 1 or 'e', got {base!r}")
    return float(base)


def to_base(value_nats, base):
    """Convert a quantity in nats to ``base`` (2 gives bits)."""
    return value_nats / np.log(check_base(base))


def unit_name(base) -> str:
    """Name of the unit of ``base``: "bits", "nats" or "log base b"."""
    b = check_base(base)
    return "nats" if b == np.e else ("bits" if b == 2 else f"log base {b:g}")


def check_random_state(random_state) -> np.random.Generator:
    """Turn ``None``, an int, a SeedSequence or a Generator into a Generator.

    ``None`` gives a fresh, unpredictable generator (never the global RNG); an int gives a
    reproducible one.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    raise ValueError(
        f"random_state must be None, an int or a numpy Generator, got {random_state!r}"
    )


def check_seed_sequence(random_state) -> np.random.SeedSequence:
    """A :class:`numpy.random.SeedSequence` from ``None``, an int >= 0, a SeedSequence or a
    Generator, for spawning independent per-task streams (``.spawn(n)``).

    A Generator is consumed once (one 63-bit draw), so passing the same Generator twice gives
    different, but reproducible, streams.
    """
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(int(random_state.integers(0, 2**63 - 1)))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be >= 0, got {random_state}")
        return np.random.SeedSequence(int(random_state))
    raise ValueError(f"random_state must be None, an int, a SeedSequence or a Generator, "
                     f"got {random_state!r}")


def is_discrete(x) -> bool:
    """True when ``x`` holds integer (or boolean) data, which estimators treat as discrete."""
    dtype = np.asarray(x).dtype
    return np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.bool_)


def check_array(x, name: str, *, allow_discrete: bool = True) -> np.ndarray:
    """Validate one variable and return it as a 2-D ``(n, d)`` array.

    Continuous data becomes float64; integer data keeps an integer dtype when ``allow_discrete``
    (so it is handled exactly by the discrete estimators). 1-D input is one column.

    Raises
    ------
    ValueError
        If the array is empty, has more than two dimensions, or holds NaN or inf (the message
        names ``name`` and counts the bad entries).
    """
    arr = np.asarray(x)
    if arr.dtype == object:
        raise TypeError(f"{name} must be a numeric array, got dtype object")
    if arr.ndim == 0:
        raise ValueError(f"{name} must be 1-D or 2-D, got a scalar")
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D (n_samples, n_dims), got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape})")
    if is_discrete(arr) and allow_discrete:
        return arr.astype(np.int64, copy=False)
    if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)
            or np.issubdtype(arr.dtype, np.bool_)):
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=False)
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(
            f"{name} contains {int(np.isnan(arr).sum())} NaN and "
            f"{int(np.isinf(arr).sum())} infinite values; estimators need finite data"
        )
    return arr


def check_labels(y, name: str = "labels") -> np.ndarray:
    """Validate a 1-D array of discrete labels and return it as int64.

    Raises
    ------
    TypeError
        If the labels are not integers (floats are refused even when integral-valued, so a
        continuous variable is never silently treated as discrete).
    ValueError
        If the labels are not 1-D (a column vector ``(n, 1)`` is accepted) or are empty.
    """
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of integer labels, got shape {arr.shape}")
    if not is_discrete(arr):
        raise TypeError(f"{name} must hold integer labels, got dtype {arr.dtype}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    return arr.astype(np.int64, copy=False)


def check_same_length(**arrays) -> int:
    """Check that all arrays share their first dimension; return it.

    The error names every argument with its length, e.g. ``x has 100 samples but y has 99``.
    """
    lengths = {name: len(a) for name, a in arrays.items()}
    values = set(lengths.values())
    if len(values) > 1:
        items = list(lengths.items())
        first_name, first_len = items[0]
        others = ", ".join(f"{n} has {m}" for n, m in items[1:] if m != first_len)
        raise ValueError(f"length mismatch: {first_name} has {first_len} samples but {others}")
    return values.pop()


def check_k(k, n: int, name: str = "k", *, context: str = "") -> int:
    """Validate a neighbour count: an integer with 1 <= k < n."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {k!r}")
    k = int(k)
    if k < 1:
        raise ValueError(f"{name} must be >= 1, got {k}")
    if k >= n:
        where = f" {context}" if context else ""
        raise ValueError(f"{name}={k} needs more than {k} samples{where}, got n={n}")
    return k


def check_variables(variables, name: str = "variables") -> list[np.ndarray]:
    """Return a list of validated ``(n, d_i)`` blocks, one per variable.

    ``variables`` is a list of arrays (each 1-D or 2-D: one possibly multi-dimensional variable)
    or one ``(n, M, d)`` array (M variables of d dimensions) or ``(n, M)`` array (M scalars).
    """
    if isinstance(variables, np.ndarray):
        if variables.ndim == 2:
            blocks = [variables[:, i] for i in range(variables.shape[1])]
        elif variables.ndim == 3:
            blocks = [variables[:, i, :] for i in range(variables.shape[1])]
        else:
            raise ValueError(
                f"{name} as an array must be (n, M) or (n, M, d), got shape {variables.shape}"
            )
    elif isinstance(variables, Sequence):
        blocks = list(variables)
    else:
        raise TypeError(f"{name} must be a list of arrays or an (n, M, d) array")
    if len(blocks) == 0:
        raise ValueError(f"{name} is empty: need at least one variable")
    out = [check_array(b, f"{name}[{i}]") for i, b in enumerate(blocks)]
    check_same_length(**{f"{name}[{i}]": b for i, b in enumerate(out)})
    return out


def jitter(x: np.ndarray, rng: np.random.Generator, *, noise: float = 1e-10) -> np.ndarray:
    """Standardise each column and add seeded Gaussian noise of relative size ``noise``.

    kNN estimators assume continuous data without ties. Each column is centred and divided by
    its standard deviation (constant columns are only centred), then ``noise`` times a standard
    normal draw from ``rng`` is added, which breaks ties and duplicated rows/columns without
    changing any estimate beyond that order. Mutual information and total correlation are
    invariant under the per-column scaling; differential entropy is not, so entropy estimators
    must add back :func:`log_scale` of the input themselves.
    """
    x = np.asarray(x, dtype=np.float64)
    centred = x - x.mean(axis=0)
    std = centred.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    return centred / std + noise * rng.standard_normal(x.shape)


def log_scale(x: np.ndarray) -> float:
    """``sum_j log std(x_j)`` over the columns of ``x``, constant columns counting as std 1.

    The log-volume that :func:`jitter` divides out; entropy estimators add it back.
    """
    std = np.asarray(x, dtype=np.float64).std(axis=0)
    return float(np.sum(np.log(np.where(std > 0, std, 1.0))))
