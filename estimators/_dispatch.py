"""One dispatch from ``method=`` to a backend module (internal to :mod:`estimators.api`).

Every backend module exposes the same five functions on validated, prepared data (float64
``(n, d)`` arrays, int64 1-D labels; values in nats)::

    entropy(x, **kw)                       mutual_information(x, y, **kw)
    mixed_mutual_information(x, labels, **kw)
    conditional_mutual_information(x, y, z, **kw)
    total_correlation(blocks, **kw)

``method`` selects the module, an optional pooled transform applied once to every continuous
input before any stratification (rank-to-normal for ``"copula"``, binning for ``"binned"``) and the
keyword arguments ``kw``. Integer inputs are discrete and always go to :mod:`estimators.discrete`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

import numpy as np

from estimators import binned, copula, discrete
from estimators.validation import check_k, is_discrete

__all__ = ["METHODS", "LABEL_METHODS", "Estimator", "resolve"]


@dataclass(frozen=True)
class _Spec:
    module: str
    transform: object = None
    options: dict = field(default_factory=dict)   # option -> default
    backend_options: tuple = ()                    # options passed to the backend functions
    transform_options: tuple = ()                  # options passed to the transform
    uses_k: bool = False
    uses_rng: bool = False                         # the backend functions take ``rng``
    transform_uses_rng: bool = False               # the transform takes ``rng``
    labels: bool = True                            # estimates MI with a label (mixed MI)


METHODS = {
    "knn": _Spec("estimators.knn", options={"preprocess": None}, backend_options=("preprocess",),
                 uses_k=True, uses_rng=True),
    "chain": _Spec("estimators.chain", options={"preprocess": None},
                   backend_options=("preprocess",), uses_k=True, uses_rng=True),
    "lnc": _Spec("estimators.lnc", options={"preprocess": None, "alpha": None},
                 backend_options=("preprocess", "alpha"), uses_k=True, uses_rng=True,
                 labels=False),
    "gaussian": _Spec("estimators.gaussian", options={"bias_correction": True},
                      backend_options=("bias_correction",), uses_rng=True),
    "copula": _Spec("estimators.gaussian", transform=copula.transform,
                    options={"bias_correction": True}, backend_options=("bias_correction",),
                    transform_options=("bias_correction",), uses_rng=True,
                    transform_uses_rng=True),
    "binned": _Spec("estimators.discrete", transform=binned.transform,
                    options={"bins": 8, "binning": "uniform", "estimator": "plugin"},
                    backend_options=("estimator",), transform_options=("bins", "binning")),
}
#: the methods that estimate MI with a label, i.e. the information terms of a classifier
LABEL_METHODS = tuple(m for m, spec in METHODS.items() if spec.labels)


class Estimator:
    """A resolved method: backend module, keyword arguments, pooled transform, RNG."""

    def __init__(self, method: str, k, rng: np.random.Generator, options: dict):
        if method not in METHODS:
            raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
        spec = METHODS[method]
        unknown = set(options) - set(spec.options)
        if unknown:
            allowed = ", ".join(sorted(spec.options)) or "no extra options"
            raise TypeError(f"method={method!r} does not take {sorted(unknown)}; it takes "
                            f"{allowed}")
        opts = {**spec.options, **options}
        if opts.get("estimator", "plugin") not in discrete.ESTIMATORS:
            raise ValueError(f"estimator must be one of {discrete.ESTIMATORS}, "
                             f"got {opts['estimator']!r}")
        self.method, self.k, self.rng, self.spec = method, k, rng, spec
        self.estimator = opts.get("estimator", "plugin")
        self.backend_kw = {name: opts[name] for name in spec.backend_options}
        if spec.uses_k:
            self.backend_kw["k"] = k
        if spec.uses_rng:
            self.backend_kw["rng"] = rng
        self.transform_kw = {name: opts[name] for name in spec.transform_options}
        if spec.transform_uses_rng:
            self.transform_kw["rng"] = rng
        self._module = None

    @property
    def module(self):
        if self._module is None:  # every backend ships with the package
            self._module = importlib.import_module(self.spec.module)
        return self._module

    def check_n(self, n: int) -> None:
        """Validate ``k`` against the sample size (kNN only)."""
        if self.spec.uses_k:
            check_k(self.k, n)

    def prepare(self, x: np.ndarray, *, with_jacobian: bool = False):
        """Pooled transform of one continuous input; returns ``(array, log_jacobian)``."""
        if is_discrete(x) or self.spec.transform is None:
            return x, 0.0
        return self.spec.transform(x, with_jacobian=with_jacobian, **self.transform_kw)

    def _backend(self, args):
        flat = [a for arg in args for a in (arg if isinstance(arg, list) else [arg])]
        if all(is_discrete(a) for a in flat):
            return discrete, {"estimator": self.estimator}
        return self.module, self.backend_kw

    def call(self, name: str, *args):
        """Backend function ``name``; all-integer arguments go to the discrete estimators."""
        module, kw = self._backend(args)
        return getattr(module, name)(*args, **kw)

    def provides(self, name: str, *args) -> bool:
        """Whether the backend for ``args`` has the optional function ``name``.

        The optional ``conditional_total_correlation(blocks, labels, **kw)`` lets a backend
        compute ``sum_y p(y) TC(U|Y=y)`` in one pass (kNN shares its distance matrices);
        otherwise the API stratifies generically.
        """
        return hasattr(self._backend(args)[0], name)

    def min_class_size(self, dim: int) -> int:
        """Smallest stratum the method can estimate within (``dim`` = total dimension)."""
        if self.spec.uses_k:
            return self.k + 1
        if self.spec.module == "estimators.gaussian":
            return dim + 1
        return 1

    def check_strata(self, labels: np.ndarray, dim: int, name: str) -> None:
        """ValueError naming the class and the numbers when a stratum is too small."""
        classes, counts = np.unique(labels, return_counts=True)
        need = self.min_class_size(dim)
        small = counts < need
        if small.any():
            c, m = classes[small][0], counts[small][0]
            rule = (f"k+1={need} for k={self.k}" if self.spec.uses_k
                    else f"{need} (more samples than the {dim} dimensions)")
            raise ValueError(f"class {c} of {name} has {m} samples; method={self.method!r} "
                             f"needs at least {rule} in every class")


def resolve(method: str, k, rng: np.random.Generator, options: dict) -> Estimator:
    """Build the :class:`Estimator` for ``method`` with its extra ``options``."""
    return Estimator(method, k, rng, options)
