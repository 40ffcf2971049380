"""Surrogate controls built from a run's own arrays (DESIGN.md 2.8, "Power").

Each surrogate keeps the run's size (N examples, M members, C options) and as much of its
structure as the control allows, so that a test passed through the same pipeline at the same n
has the power it would have on the real run:

- :func:`conditionally_independent` — every member's rows are permuted independently *within
  each class*. Each member's class-conditional distribution is kept exactly (the same multiset
  of values per class), while the joint dependence between members given Y is destroyed:
  TC(U | Y) = 0 in population, so Theorem 7's premise holds and I(U_S; Y) is submodular.
- :func:`planted_synergy` — ``n_pairs`` pairs of members are replaced by synergistic pairs
  at the run's own signal level: t(y) = ±1 by the parity of the class, w the unit sum-zero
  option contrast, a the between-class spread of the run's strongest (``level="max"``) or
  typical (``"median"``) member, and ε the member's own within-class residuals permuted over
  all examples. ``style="xor"``: with s_j = ±1 uniform, u_j = ū_j + a·s_j·w + ε_j and
  u_k = ū_k + a·s_j·t(y)·w + ε_k — each alone is independent of Y, together they determine
  t(Y) through the product of their signs. ``style="cancel"`` (a noise-cancelling pair): with
  η ~ N(0, (noise·a)²) per example, u_j = ū_j + (a·t(y) + η)·w + ε_j and
  u_k = ū_k − η·w + ε_k — u_k alone is independent of Y, u_j alone carries t(Y) under noise
  ``noise`` times its size, their sum carries a·t(Y)·w without η. Either way adding one after
  the other gains more than adding it first (a diminishing-returns violation). A summed
  *linear* readout (accuracy / cross-entropy / Brier of Σ u_m, a linear probe) cannot read a
  product, so an XOR pair is no positive control for it — measured on SmolLM2-135M SST-2,
  calibrated cross-entropy: ρ_j(∅) = −0.0015, ρ_j({k}) = −0.0016 bits for an XOR pair, versus
  ρ_k(∅) = 0.000, ρ_k({j}) = 0.82 bits for a cancelling pair (noise 2); :func:`planted_style`
  names the style that each objective can see.
- :func:`planted_redundancy` — ``n_copies`` members replaced by noisy copies of the run's
  strongest members (the diversity regression's positive control; derivation in its
  docstring).
- :func:`planted_redundancy_ci` — the same copies planted on the conditionally independent
  members: the positive control of the claims that compare the members with that control
  (redundancy cost, gains against the control), where the real run's own dependence would
  otherwise decide the sign.
- :func:`concentrated_late` — the signal kept in the run's few strongest members, placed last
  in the depth order, every other member made label-independent: the selection comparisons'
  positive control (greedy must beat best-of-random and the depth prefix).
- :func:`shuffled_labels` — the labels permuted: nothing is to be found.

All take ``random_state`` (default 0; one seeded stream per replicate) and return a new
:class:`~extraction.contributions.Contributions` whose ``meta["surrogate"]`` records what was
done. The model logits are replaced by the readout of the new members; ``scale`` is kept, so
logit-lens readouts of a surrogate are not meaningful (surrogates are for member-set tests).
"""

from __future__ import annotations

import numpy as np

from extraction.contributions import Contributions

__all__ = ["SURROGATES", "conditionally_independent", "planted_synergy", "shuffled_labels",
           "signal_level", "planted_style", "planted_redundancy", "planted_redundancy_ci",
           "XOR_OBJECTIVES", "CURVE_SURROGATES", "concentrated_late",
           "PLANTED_STYLES",
           "make_surrogate", "with_arrays", "within_class_permutation", "class_permutations"]

#: (a kind's seeds are the kind's own child of the power's SeedSequence, by its index here:
#: appending a kind leaves the others' surrogates unchanged)
SURROGATES = ("conditionally_independent", "planted_synergy", "shuffled_labels",
              "planted_redundancy", "concentrated_late", "planted_redundancy_ci")
#: the kinds the curve verdicts' power runs (the selection verdicts use concentrated_late)
CURVE_SURROGATES = SURROGATES[:4]


def _rng(random_state):
    return np.random.default_rng(random_state)


def with_arrays(run, *, u=None, labels=None, bias=None, surrogate=None) -> Contributions:
    """A copy of ``run`` with ``u``, ``labels`` or ``bias`` replaced (logits recomputed)."""
    u = run.u if u is None else np.asarray(u, dtype=np.float32)
    labels = run.labels if labels is None else np.asarray(labels)
    bias = run.bias if bias is None else np.asarray(bias, dtype=np.float32)
    logits = u.astype(np.float64).sum(axis=1) + bias
    meta = dict(run.meta)
    if surrogate is not None:
        meta["surrogate"] = surrogate
    return Contributions(u, bias, labels, logits.astype(np.float32), run.scale,
                         list(run.members), list(run.options), run.option_ids, meta)


def class_permutations(labels, n_columns: int, random_state=0) -> list:
    """Per class, in label order, ``(rows, perm)``: the class's rows ``[n_y]`` and
    ``perm`` ``[n_columns, n_y]``, each row an independent permutation of them (the draws of
    :func:`within_class_permutation`, laid out column by column)."""
    y = np.asarray(labels)
    rng = _rng(random_state)
    out = []
    for c in np.unique(y):
        rows = np.flatnonzero(y == c)
        out.append((rows, rng.permuted(np.tile(rows, (n_columns, 1)), axis=1)))
    return out


def within_class_permutation(labels, n_columns: int, random_state=0) -> np.ndarray:
    """Row indices ``[N, n_columns]``: column m is an independent permutation of the rows
    inside each class (row i of column m comes from a row of the same class)."""
    idx = np.empty((np.asarray(labels).size, n_columns), dtype=np.int64)
    for rows, perm in class_permutations(labels, n_columns, random_state):
        idx[rows] = perm.T
    return idx


def _member_rows(u, rows) -> np.ndarray:
    """``out[i, m] = u[rows[i, m], m]`` of ``u`` ``[N, M, C]``: one gather of whole option
    vectors from the rows flattened to ``[N·M, C]`` (the values of the fancy index
    ``u[rows, arange(M)]``, at a tenth of its cost)."""
    n, m, c = u.shape
    flat = np.ascontiguousarray(u).reshape(n * m, c)
    return flat.take((rows * m + np.arange(m)).ravel(), axis=0).reshape(rows.shape + (c,))


def conditionally_independent(run, random_state=0) -> Contributions:
    """Each member's contributions permuted independently within each class (module docstring).

    A per-example constant member (``bias`` ``[N, C]``) is permuted as one more member.
    """
    n, m, _ = run.u.shape
    per_example_bias = run.bias.ndim == 2
    idx = within_class_permutation(run.labels, m + per_example_bias, random_state)
    u = _member_rows(run.u, idx[:, :m])
    bias = run.bias[idx[:, m]] if per_example_bias else None
    return with_arrays(run, u=u, bias=bias, surrogate={
        "kind": "conditionally_independent", "random_state": _seed_repr(random_state)})


def _class_stats(u, y):
    """Class means ``[K, M, C]``, class frequencies ``[K]`` and within-class residuals."""
    classes, inv = np.unique(y, return_inverse=True)
    means = np.stack([u[inv == k].mean(axis=0) for k in range(classes.size)])
    p = np.bincount(inv) / y.size
    return means, p, u - means[inv]


def _spreads(u, labels) -> np.ndarray:
    """√(Σ_y p(y)‖μ_{m,y} − μ_m‖²) of every member ``[M]``."""
    means, p, _ = _class_stats(np.asarray(u, dtype=np.float64), np.asarray(labels))
    centre = (p[:, None, None] * means).sum(axis=0)
    return np.sqrt((p[:, None, None] * (means - centre) ** 2).sum(axis=(0, 2)))


def signal_level(u, labels, level="max") -> float:
    """Between-class spread of the members' contributions: √(Σ_y p(y)‖μ_{m,y} − μ_m‖²) per
    member, then its maximum (``"max"``) or median (``"median"``) over members, or a float."""
    if not isinstance(level, str):
        if not level > 0:
            raise ValueError(f"level must be 'max', 'median' or a positive float, got {level}")
        return float(level)
    spread = _spreads(u, labels)
    if level == "max":
        return float(spread.max())
    if level == "median":
        return float(np.median(spread))
    raise ValueError(f"level must be 'max', 'median' or a positive float, got {level!r}")


#: objectives whose estimator reads a product of two members (class-conditional covariances,
#: nearest neighbours): the XOR pair is their positive control; every other objective gets
#: the noise-cancelling pair
XOR_OBJECTIVES = ("mi_gaussian", "mi_copula", "mi_knn")
PLANTED_STYLES = ("xor", "cancel")


def planted_style(objective: str) -> str:
    """``"xor"`` for objectives that can read an XOR pair, ``"cancel"`` otherwise."""
    return "xor" if objective in XOR_OBJECTIVES else "cancel"


def planted_synergy(run, n_pairs: int = 2, *, level="max", style: str = "xor",
                    noise: float = 2.0, random_state=0) -> Contributions:
    """Replace ``n_pairs`` random member pairs by synergistic pairs (module docstring):
    ``style`` "xor" (default) or "cancel" (noise-cancelling, η of sd ``noise``·a)."""
    n, m, c = run.u.shape
    if n_pairs < 1 or 2 * n_pairs > m:
        raise ValueError(f"n_pairs must lie in [1, M/2] = [1, {m // 2}], got {n_pairs}")
    if style not in PLANTED_STYLES:
        raise ValueError(f"style must be one of {PLANTED_STYLES}, got {style!r}")
    if not noise > 0:
        raise ValueError(f"noise must be > 0, got {noise}")
    rng = _rng(random_state)
    u64 = run.u.astype(np.float64)
    amp = signal_level(u64, run.labels, level)
    _, _, resid = _class_stats(u64, run.labels)
    w = np.zeros(c)
    w[0], w[1] = 1.0 / np.sqrt(2.0), -1.0 / np.sqrt(2.0)
    _, inv = np.unique(run.labels, return_inverse=True)
    t = np.where(inv % 2 == 0, 1.0, -1.0)
    chosen = rng.permutation(m)[: 2 * n_pairs].reshape(n_pairs, 2)
    out = u64.copy()
    for j, k in chosen:
        if style == "xor":
            s = rng.choice([-1.0, 1.0], size=n)
            states = ((j, amp * s), (k, amp * s * t))
        else:
            eta = noise * amp * rng.standard_normal(n)
            states = ((j, amp * t + eta), (k, -eta))
        for member, state in states:
            resid_m = resid[rng.permutation(n), member]
            out[:, member] = u64[:, member].mean(axis=0) + state[:, None] * w + resid_m
    return with_arrays(run, u=out, surrogate={
        "kind": "planted_synergy", "style": style, "pairs": chosen.tolist(), "amplitude": amp,
        "level": level, "noise": noise if style == "cancel" else None,
        "random_state": _seed_repr(random_state)})


def planted_redundancy(run, n_copies: int = 4, *, noise: float = 0.5,
                       random_state=0) -> Contributions:
    """Replace ``n_copies`` random members by noisy copies of the run's ``n_copies`` strongest.

    The positive control of the diversity regression (:mod:`infodiv.diversity`): β > 0, a
    member gains less from a set that already explains it. Sources j_1..j_c are the members
    with the largest between-class spread (:func:`signal_level`'s per-member spread); targets
    k_1..k_c are drawn at random from the others and replaced by

        u_k = u_j + noise · ε_j,   ε_j = j's within-class residuals permuted over all examples,

    so the copy carries j's signal and j's noise, plus a label-free noise at the run's own
    scale (N, M, C and every other member unchanged).

    Derivation. Write u_j = μ_j(y) + e_j with within-class variance σ² (per contrast) and let
    T ∈ {j, k} be the planted pair. (i) Non-redundancy: 1 − R²(u_k | u_S) is
    noise²σ²/(var u_j + noise²σ²) ≤ noise²/(1 + noise²) = 0.2 at noise 0.5 when j ∈ S, and
    close to 1 when S holds neither (ε_j is independent of every member; the real members'
    mutual redundancy is what it was). (ii) Gain: for an information objective,
    ρ_k(S ∋ j) = I(u_k; Y | u_S) = I(ε-part; Y | u_S) = 0 up to estimation, while ρ_k(S ∌ j)
    is j's own conditional information, > 0 for the strongest member. For a summed readout
    (accuracy, cross-entropy, Brier of Σ_{m∈S} u_m, calibrated or not) adding k adds the
    class signal μ_j(y) either way, but its noise adds coherently to e_j when j ∈ S: the
    within-class variance of the sum grows by var(2e_j + noise·ε) − var(e_j) = (3 + noise²)σ²
    instead of (1 + noise²)σ² when j ∉ S (ignoring e_j's covariance with the rest of S,
    which also counts twice), so the signal-to-noise ratio of the sum — and every
    monotone score of it — rises less: ρ_k(S ∋ j) < ρ_k(S ∌ j). The same holds with j and k
    swapped. So among the (S, x) pairs with x in a planted pair, those with the partner in S
    have both low non-redundancy and low gain, at the same |S| and ρ_x(∅): the partial
    regression coefficient of gain on non-redundancy is positive by construction. The size of
    the effect is that of the strongest members' gains, so the detection rate is the power
    at the run's own signal level (checked on the SmolLM2 and stories260K runs:
    benchmarks/results/inference.json, key ``added_verdicts``).
    """
    n, m, _ = run.u.shape
    if n_copies < 1 or 2 * n_copies > m:
        raise ValueError(f"n_copies must lie in [1, M/2] = [1, {m // 2}], got {n_copies}")
    if not noise > 0:
        raise ValueError(f"noise must be > 0, got {noise}")
    rng = _rng(random_state)
    u64 = run.u.astype(np.float64)
    sources = np.argsort(-_spreads(u64, run.labels), kind="stable")[:n_copies]
    rest = np.setdiff1d(np.arange(m), sources)
    targets = rng.permutation(rest)[:n_copies]
    _, _, resid = _class_stats(u64, run.labels)
    out = u64.copy()
    for j, k in zip(sources, targets):
        out[:, k] = u64[:, j] + noise * resid[rng.permutation(n), j]
    return with_arrays(run, u=out, surrogate={
        "kind": "planted_redundancy", "pairs": np.column_stack([sources, targets]).tolist(),
        "noise": noise, "random_state": _seed_repr(random_state)})


def planted_redundancy_ci(run, n_copies: int = 4, *, noise: float = 0.5,
                          random_state=0) -> Contributions:
    """:func:`planted_redundancy` on :func:`conditionally_independent` members of ``run``.

    The matched case of a claim whose statistic compares the members with their own
    conditionally independent control (f(all) or the gain profile of the real members against
    the members permuted within class). On the real run that comparison carries the members'
    whole dependence given Y, whatever its sign (on SmolLM2-135M / SST-2 the real members reach
    0.645 calibrated accuracy, their control 0.594: their dependence helps), so copies planted
    on top of it need not make the claim true. Here the base is the control itself (the
    statistic's population value is 0) and the only dependence given Y is the planted one:
    the copies' within-class noise adds coherently to the sum, u_j + u_k = 2μ_j + 2e_j + noise·ε
    against 2μ_j + e_j + e_j' + noise·ε for the control's independent draw e_j', so f(all)
    falls below the control's and the copy's gain shrinks once its source is in the set.
    One stream: its first draw seeds the within-class permutation, its second the copies.
    """
    ci_seed, copy_seed = (int(v) for v in _rng(random_state).integers(0, 2**63 - 1, size=2))
    base = conditionally_independent(run, random_state=ci_seed)
    out = planted_redundancy(base, n_copies, noise=noise, random_state=copy_seed)
    out.meta["surrogate"] = dict(out.meta["surrogate"], kind="planted_redundancy_ci",
                                 random_state=_seed_repr(random_state))
    return out


def concentrated_late(run, n_informative: int = 4, *, random_state=0) -> Contributions:
    """Keep the ``n_informative`` strongest members, move them to the end of the depth order
    and make every other member label-independent.

    Positions 0..M−s−1 (s = ``n_informative``) receive the other members in their order, each
    with its rows permuted independently across all examples (its marginal kept, its
    dependence on Y and on the other members destroyed); positions M−s..M−1 receive the s
    members with the largest between-class spread (:func:`signal_level`'s per-member spread),
    unchanged, so the surrogate's signal is the run's own strongest signal.

    Derivation. Held-out (selected on one half, scored on the other) f of a set S depends on
    S only through S ∩ I, I the s informative positions, up to label-free noise members.
    (i) Depth prefix: for k ≤ M − s the prefix holds no informative member, f ≈ f(∅); it
    reaches I only at k > M − s. (ii) Best-of-random: a random size-k prefix holds
    Hypergeometric(M, s, k) informative members, mean k·s/M < min(k, s) for 0 < k < M, and
    the best of R such prefixes holds all min(k, s) only with probability
    ≤ R·C(M−s, k−s)/C(M, k) for k ≥ s. (iii) Greedy adds the member with the largest
    gain on the selection half: an informative one as long as one is left and its gain
    exceeds the noise members' selection-half gains. So for every budget 0 < k < M greedy's
    held-out value is at least the others' up to selection noise, strictly above for most k:
    the budget-averaged held-out differences greedy − best-of-random and greedy − prefix are
    positive by construction.
    """
    n, m, _ = run.u.shape
    if n_informative < 1 or n_informative >= m:
        raise ValueError(f"n_informative must lie in [1, M - 1] = [1, {m - 1}], "
                         f"got {n_informative}")
    rng = _rng(random_state)
    strongest = np.argsort(-_spreads(run.u, run.labels), kind="stable")[:n_informative]
    rest = np.setdiff1d(np.arange(m), strongest)
    noise = np.stack([run.u[rng.permutation(n), j] for j in rest], axis=1)
    u = np.concatenate([noise, run.u[:, strongest]], axis=1)
    return with_arrays(run, u=u, surrogate={
        "kind": "concentrated_late", "informative": strongest.tolist(),
        "positions": list(range(m - n_informative, m)),
        "random_state": _seed_repr(random_state)})


def shuffled_labels(run, random_state=0) -> Contributions:
    """The run with its labels permuted (class counts kept)."""
    labels = _rng(random_state).permutation(run.labels)
    return with_arrays(run, labels=labels, surrogate={
        "kind": "shuffled_labels", "random_state": _seed_repr(random_state)})


def make_surrogate(run, kind: str, random_state=0, **kwargs) -> Contributions:
    """Dispatch on ``kind`` in :data:`SURROGATES`."""
    makers = {"conditionally_independent": conditionally_independent,
              "planted_synergy": planted_synergy, "shuffled_labels": shuffled_labels,
              "planted_redundancy": planted_redundancy, "concentrated_late": concentrated_late,
              "planted_redundancy_ci": planted_redundancy_ci}
    if kind not in makers:
        raise ValueError(f"unknown surrogate {kind!r}; choose from {SURROGATES}")
    return makers[kind](run, random_state=random_state, **kwargs)


def _seed_repr(random_state):
    return random_state if isinstance(random_state, (int, type(None))) else repr(random_state)
