"""Public estimators: entropy, mutual information, conditional MI and total correlation.

All functions share the keywords ``method`` (``"knn"``, ``"chain"``, ``"lnc"``, ``"binned"``,
``"gaussian"``, ``"copula"``; :func:`mutual_information` with a label also ``"usable"``, its
default there), ``k`` (kNN neighbours), ``base`` (2 = bits, the default;
``"e"`` = nats) and ``random_state`` (seeds every random choice: tie-breaking jitter, copula
tie order; default 0, see :mod:`estimators.validation`), plus method options passed as
keywords:

``method="knn"``: ``preprocess=None | "standardize" | "rank" | "none"`` (see
:func:`estimators.knn.prepare`; ``None`` is the measured default, docs/estimators.md).
``method="chain"``: kNN over scalar pieces through the chain rule (:mod:`estimators.chain`), on
normal scores; ``preprocess`` as for knn.
``method="lnc"``: KSG with the local non-uniformity correction of Gao, Ver Steeg & Galstyan
(2015) for MI and TC of continuous variables (:mod:`estimators.lnc`; needs ``k >=`` the joint
dimension); ``alpha=None`` (the threshold calibrated per ``k`` and dimension) or a number in
(0, 1); ``preprocess`` as for knn but ``None`` means ``"standardize"``. Opt-in: measured
in docs/estimators.md.

``method="binned"``: ``bins=8``, ``binning="uniform" | "quantile"``,
``estimator="plugin" | "miller_madow" | "james_stein"`` (see :mod:`estimators.discrete`).
``method="gaussian" | "copula"``: ``bias_correction=True`` (see :mod:`estimators.gaussian`).

Integer arrays are discrete variables and are handled exactly, by the plug-in estimator on the
empirical distribution (or the ``estimator`` chosen with ``method="binned"``), whatever the
method. A 1-D integer array passed where a continuous variable could be is a *label*: mutual
information with a label uses the mixed estimator of the method (Ross 2014 for kNN; for the other
methods the exact decomposition ``H(X) - sum_y p(y) H(X|Y=y)``), and conditioning on a label is
exact stratification ``sum_z p(z) I(X;Y|Z=z)``.

Continuous data are prepared inside the kNN backend (marginal normal scores by default, see
:func:`estimators.knn.prepare`) and standardised with seeded jitter in the Gaussian backend, so
constant or duplicated columns never crash an estimator; duplicated columns then give
(correctly) very large dependence. Negative estimates are returned as they are. Inputs that an
estimator would handle in a way the caller probably did not intend (integer-coded measurements,
float-coded labels, repeated rows for kNN, a variable repeated in a TC, kNN over more than 10
joint dimensions) raise :class:`estimators.diagnostics.EstimatorWarning` with the numbers.

References: Kraskov, Stoegbauer & Grassberger (2004), Phys. Rev. E 69, 066138 (KSG);
Frenzel & Pompe (2007), Phys. Rev. Lett. 99, 204101 (CMI); Ross (2014), PLoS ONE 9, e87357
(mixed MI); Watanabe (1960), IBM J. Res. Dev. 4 (total correlation).
"""

from __future__ import annotations

import warnings

import numpy as np

from estimators import diagnostics, discrete
from estimators._checks import check_bin_counts, check_entropy_input
from estimators._dispatch import Estimator, resolve
from estimators.validation import (
    check_array,
    check_random_state,
    check_same_length,
    check_variables,
    is_discrete,
    to_base,
)

__all__ = [
    "entropy",
    "mutual_information",
    "conditional_mutual_information",
    "total_correlation",
]


def _as_label(x: np.ndarray) -> np.ndarray:
    """A discrete (n, d) array as 1-D codes of its rows."""
    return x[:, 0] if x.shape[1] == 1 else discrete.joint_codes(x)[0]


def _setup(method, k, random_state, options, **arrays):
    """Validate arrays, build the estimator, check k against n."""
    est = resolve(method, k, check_random_state(random_state), options)
    checked = {name: check_array(a, name) for name, a in arrays.items()}
    n = check_same_length(**checked)
    est.check_n(n)
    diagnostics.check_inputs(checked, knn=est.spec.uses_k)
    return est, checked


def _check_dimension(est: Estimator, arrays, what: str) -> None:
    """kNN: warn above :data:`estimators.diagnostics.KNN_MAX_DIMS` continuous dimensions."""
    if est.spec.uses_k:
        dim = sum(a.shape[1] for a in arrays if not is_discrete(a))
        diagnostics.check_knn_dimension(dim, len(arrays[0]), what, est.method)


# ---- internal estimators on prepared arrays (nats) -------------------------------------------

def _mi(est: Estimator, x: np.ndarray, y: np.ndarray) -> float:
    """I(X;Y) for prepared (n, d) arrays of any kinds."""
    dx, dy = is_discrete(x), is_discrete(y)
    if dx and dy:
        return est.call("mutual_information", x, y)
    if dy:
        return est.call("mixed_mutual_information", x, _as_label(y))
    if dx:
        return est.call("mixed_mutual_information", y, _as_label(x))
    return est.call("mutual_information", x, y)


def _stratified(est: Estimator, labels: np.ndarray, dim: int, name: str, fn, *arrays) -> float:
    """``sum_c p(c) fn(arrays restricted to class c)`` (exact stratification)."""
    labels = _as_label(labels)
    est.check_strata(labels, dim, name)
    n = len(labels)
    total = 0.0
    for c in np.unique(labels):
        mask = labels == c
        restricted = [[b[mask] for b in a] if isinstance(a, list) else a[mask] for a in arrays]
        total += mask.sum() / n * fn(est, *restricted)
    return total


def _cmi(est: Estimator, x: np.ndarray, y: np.ndarray, z: np.ndarray) -> float:
    """I(X;Y|Z) for prepared arrays of any kinds."""
    dx, dy, dz = is_discrete(x), is_discrete(y), is_discrete(z)
    if dz:
        if dx and dy:
            return est.call("conditional_mutual_information", x, y, z)
        dim = (0 if dx else x.shape[1]) + (0 if dy else y.shape[1])
        return _stratified(est, z, dim, "z", _mi, x, y)
    if not dx and not dy:
        return est.call("conditional_mutual_information", x, y, z)
    if dx and dy:  # I(X;Y) - I(X;Z) - I(Y;Z) + I(XY;Z), all with discrete X, Y
        xy = discrete.joint_codes(x, y)[0][:, None]
        return _mi(est, x, y) - _mi(est, z, x) - _mi(est, z, y) + _mi(est, z, xy)
    if dx:
        x, y = y, x
    # X, Z continuous, Y discrete: direct (kNN, per-class search) where the backend has it,
    # otherwise the chain rule I(X;Y|Z) = I(X,Z;Y) - I(Z;Y)
    if est.provides("conditional_mixed_mutual_information", x, z):
        return est.call("conditional_mixed_mutual_information", x, _as_label(y), z)
    return _mi(est, np.concatenate([x, z], axis=1), y) - _mi(est, z, y)


def _tc(est: Estimator, blocks: list[np.ndarray], given=None) -> float:
    """TC(blocks) or TC(blocks | given) for prepared arrays."""
    kinds = {is_discrete(b) for b in blocks}
    if len(kinds) > 1:
        raise ValueError("total correlation of a mix of integer (discrete) and float "
                         "(continuous) variables is not supported; cast them to one kind")
    if given is None:
        return est.call("total_correlation", blocks)
    if is_discrete(given):
        dim = 0 if kinds == {True} else sum(b.shape[1] for b in blocks)
        if est.provides("conditional_total_correlation", blocks):
            labels = _as_label(given)
            est.check_strata(labels, dim, "given")
            return est.call("conditional_total_correlation", blocks, labels)
        return _stratified(est, given, dim, "given", _tc, blocks)
    # TC(U|Z) = TC(U_1, ..., U_m, Z) - sum_i I(U_i; Z)
    return _tc(est, [*blocks, given]) - sum(_mi(est, b, given) for b in blocks)


def _tc_and_conditional(est: Estimator, blocks: list[np.ndarray], labels: np.ndarray):
    """``(TC(U), TC(U|Y))``; in one pass when the backend offers it (kNN shares its distance
    matrices through ``total_correlation_with_conditional``)."""
    if est.provides("total_correlation_with_conditional", blocks):
        labels = _as_label(labels)
        est.check_strata(labels, sum(b.shape[1] for b in blocks), "labels")
        return est.call("total_correlation_with_conditional", blocks, labels)
    return _tc(est, blocks), _tc(est, blocks, labels)


def _prepare_all(est: Estimator, arrays):
    return [est.prepare(a)[0] for a in arrays]


# ---- public functions -------------------------------------------------------------------------

def entropy(x, *, method="knn", k=3, base=2, random_state=0, **options) -> float:
    """Entropy ``H(X)`` (differential for continuous ``x``, Shannon for integer ``x``).

    Parameters
    ----------
    x : array-like, shape (n,) or (n, d)
        One variable. Integer data is discrete (plug-in entropy of the empirical pmf).
    method : {"knn", "chain", "lnc", "binned", "gaussian", "copula"}
        kNN (and chain): Kozachenko-Leonenko (1987); lnc has no entropy (ValueError).
        binned: histogram, ``H(codes) + E log vol(cell)``.
        gaussian: ``(d log(2 pi e) + log det Sigma) / 2`` with the bias-corrected log det.
        copula: Gaussian entropy of the normal scores plus the per-column change of variables
        (m-spacing marginal entropies).
    k : int
        Neighbours for kNN (``1 <= k < n``).
    base : float or "e"
        Logarithm base of the result; 2 gives bits.
    random_state : None, int or numpy Generator, default 0
        Seeds the jitter / tie breaking (the same input and seed give the same estimate;
        ``None`` draws a fresh, unpredictable seed).
    **options
        Method options (``bins``, ``binning``, ``estimator``, ``bias_correction``).

    Returns
    -------
    float
        The estimate in units of ``base``. Exactly ``-inf`` (with an
        :class:`~estimators.diagnostics.EstimatorWarning` naming the column) for continuous
        ``x`` with a constant column or a column that is an exact linear function of the others:
        such a distribution lives on a lower-dimensional set, whose differential entropy is
        −∞ whatever the method (``entropy(np.c_[x, x], method="gaussian")`` is ``log det
        Sigma = −∞``). Integer ``x`` that is constant has Shannon entropy exactly 0. A binned
        entropy with fewer than 10 samples per occupied bin warns (plug-in bias about
        ``(K - 1) / (2 n)`` nats for ``K`` occupied bins).
    """
    est, a = _setup(method, k, random_state, options, x=x)
    x = a["x"]
    if is_discrete(x):
        return to_base(discrete.entropy(x, estimator=est.estimator), base)
    if check_entropy_input(x, "x"):
        return -np.inf
    z, log_jacobian = est.prepare(x, with_jacobian=True)
    if method == "binned":
        check_bin_counts(z, "x")
    return to_base(est.call("entropy", z) + log_jacobian, base)


def _label_pair(x, y):
    """``(features, labels)`` when exactly one argument is a 1-D integer label and the other
    continuous (any dimension, member arrays ``(n, M, C)`` included); else ``None``."""
    def is_label(a):
        a = np.asarray(a)
        return is_discrete(a) and (a.ndim == 1 or (a.ndim == 2 and a.shape[1] == 1))

    for feats, lab in ((x, y), (y, x)):
        if is_label(lab) and not is_discrete(feats):
            return feats, lab
    return None


def warn_above_label_entropy(value: float, labels: np.ndarray, method: str, base, *,
                             what: str = "I") -> None:
    """Warn (:class:`~estimators.diagnostics.EstimatorWarning`, at the caller's caller) when
    ``value``, an estimate of an information term about the label, exceeds the plug-in
    ``H(Y) = -sum_y p(y) log p(y)`` of ``labels``, the largest value any such term can take;
    ``what`` names the term in the message."""
    h_y = to_base(discrete.entropy(labels[:, None] if labels.ndim == 1 else labels), base)
    if value > h_y:
        warnings.warn(f"method={method!r} gives {what} = {value:.4g} above H(Y) = {h_y:.4g}, the "
                      f"largest possible value: the model behind {method!r} does not fit these "
                      f"data (e.g. near-deterministic or non-Gaussian members), so this is no "
                      f"estimate of I; the default (method=None, usable information) is valid",
                      diagnostics.EstimatorWarning, stacklevel=3)


def mutual_information(x, y, *, method=None, k=3, base=2, random_state=0,
                       **options) -> float:
    """Mutual information ``I(X;Y) = H(X) + H(Y) - H(X,Y)``.

    ``method=None`` (default): with one continuous argument (any dimension, or a member array
    ``(n, M, C)``) and one 1-D integer label, ``"usable"``: the cross-fitted usable information
    ``H(Y) - CE`` with nested family selection (:func:`estimators.usable.usable_information`,
    which also returns its interval and bracket; options ``families``, ``n_splits``,
    ``inner_splits``, ``confidence``), never above ``H(Y)``; otherwise ``"knn"``.
    Both continuous: KSG algorithm 1 (kNN) or log-determinants (gaussian / copula) or binned
    plug-in. One side integer (a label) with a named method: the mixed estimator (Ross 2014 for
    kNN, with ``k_c = min(k, n_c - 1)`` per class), or ``H(X) - sum_y p(y) H(X|Y=y)`` for the
    other methods, with an :class:`~estimators.diagnostics.EstimatorWarning` when the result
    exceeds ``H(Y)`` (then it is no estimate of ``I``). Both integer: discrete plug-in (exact on
    the empirical distribution).
    See :func:`entropy` for the parameters; returns the estimate in units of ``base``.
    """
    if method in (None, "usable"):
        pair = _label_pair(x, y)
        if pair is not None:
            from estimators.usable import usable_information

            return usable_information(*pair, base=base, random_state=random_state,
                                      **options).estimate
        if method == "usable":
            raise ValueError("method='usable' needs one continuous argument and one 1-D "
                             "integer label")
        method = "knn"
    est, a = _setup(method, k, random_state, options, x=x, y=y)
    _check_dimension(est, [a["x"], a["y"]], "mutual information")
    x, y = _prepare_all(est, [a["x"], a["y"]])
    value = to_base(_mi(est, x, y), base)
    if is_discrete(x) != is_discrete(y):
        warn_above_label_entropy(value, x if is_discrete(x) else y, method, base)
    return value


def conditional_mutual_information(x, y, z, *, method="knn", k=3, base=2, random_state=0,
                                   **options) -> float:
    """Conditional mutual information ``I(X;Y|Z) = H(X,Z) + H(Y,Z) - H(X,Y,Z) - H(Z)``.

    Continuous ``z``: Frenzel-Pompe (kNN) or log-determinants (gaussian / copula); with a
    discrete ``x`` or ``y``, kNN searches within each class of it
    (:func:`estimators.knn.conditional_mixed_mutual_information`) and the other methods use the
    chain rule ``I(X;Y|Z) = I(X,Z;Y) - I(Z;Y)``. Integer
    ``z``: exact stratification ``sum_z p(z) I(X;Y|Z=z)``; with kNN every stratum needs at
    least ``k + 1`` samples (ValueError otherwise). See :func:`entropy` for the parameters.
    """
    est, a = _setup(method, k, random_state, options, x=x, y=y, z=z)
    _check_dimension(est, [a["x"], a["y"], a["z"]], "conditional mutual information")
    x, y, z = _prepare_all(est, [a["x"], a["y"], a["z"]])
    return to_base(_cmi(est, x, y, z), base)


def _setup_variables(variables, given, method, k, random_state, options):
    est = resolve(method, k, check_random_state(random_state), options)
    blocks = check_variables(variables)
    arrays = {f"variables[{i}]": b for i, b in enumerate(blocks)}
    if given is not None:
        given = check_array(given, "given")
        arrays["given"] = given
    est.check_n(check_same_length(**arrays))
    diagnostics.check_inputs(arrays, knn=est.spec.uses_k)
    diagnostics.check_repeated_variables(blocks)
    _check_dimension(est, list(arrays.values()), "total correlation")
    blocks = _prepare_all(est, blocks)
    if given is not None:
        given = est.prepare(given)[0]
    return est, blocks, given


def total_correlation(variables, *, given=None, method="knn", k=3, base=2, random_state=0,
                      **options) -> float:
    """Total correlation ``TC(U) = sum_i H(U_i) - H(U_1, ..., U_m)`` (Watanabe 1960).

    Parameters
    ----------
    variables : list of (n, d_i) arrays, or an (n, M, d) or (n, M) array
        Each entry is ONE variable, possibly multi-dimensional.
    given : None, 1-D integer labels, or a continuous (n, d_z) array
        Labels give the conditional TC ``TC(U|Y) = sum_y p(y) TC(U | Y=y)`` (with kNN each class
        needs at least ``k + 1`` samples: ValueError otherwise). A continuous conditioner gives
        ``TC(U|Z) = TC(U_1, ..., U_m, Z) - sum_i I(U_i; Z)``.
    method, k, base, random_state, **options
        As in :func:`entropy`. kNN uses the KSG multi-information estimator from one joint
        neighbour search; gaussian / copula one covariance matrix with bias-corrected log dets.

    Returns
    -------
    float
        The estimate in units of ``base`` (negative values are returned as they are).
    """
    est, blocks, given = _setup_variables(variables, given, method, k, random_state, options)
    return to_base(_tc(est, blocks, given), base)
