"""What a claim is to the engine: a :class:`Claim` record, and the :class:`Replicate` its
statistic reads.

A claim (DESIGN.md 2.8) states the theorem it tests, its statistic — a function of one
:class:`Replicate`, i.e. of the set function fitted on the replicate's rows and the run's
arrays — the direction that counts as a finding, the matched surrogate on which it must fire
(its power) and its plain-language sentence. :mod:`infodiv.inference.engine` turns any claim
into a :class:`~infodiv.inference.record.VerdictRecord`; the paper's claims live in
:mod:`infodiv.claims`, one module each.

A :class:`Replicate` is what the engine hands a statistic on every example resample, label
permutation, Monte-Carlo rerun and surrogate: the run it was given (resampled rows, permuted
labels, ...), the fixed :class:`Design` (objective, orders per replicate, the DR chains) and
the replicate's own random stream. Its set function is fitted on that run on first use
(calibration, covariances, cross-fitting split: ``random_state`` = the stream's first draw),
so a statistic that reads ``rep.f`` is refitted on every resample by construction. Whatever
several claims share within one replicate (the random orders, the chains' set values) is
computed once (:meth:`Replicate.cached`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .outcome import Margin

__all__ = ["Claim", "Design", "Replicate", "DIRECTIONS", "GROUPS"]

DIRECTIONS = ("less", "greater")
#: what a claim is about, in report order: the curves of one objective; the real members
#: against their conditionally independent control (Theorem 7's mechanism); held-out greedy
#: selection; a report that prints bounds and never detects
GROUPS = ("curve", "control", "selection", "report")


@dataclass(frozen=True)
class Design:
    """What every replicate of one engine run shares.

    Parameters
    ----------
    objective : set-function name (``infodiv.setfunctions.OBJECTIVES``)
    objective_kwargs : passed to ``make_set_function`` (e.g. ``{"ridge": 0.0}``)
    n_orders : random member orders per replicate (the inner level of the two-level bootstrap)
    triples : the nested chains ``(A, B, x)`` of the DR claims, fixed for every replicate (each
        triple's difference gets its own distribution); ``None``: ``n_triples`` chains drawn
        from ``triple_seed`` (:func:`infodiv.submodularity.sample_triple`)
    n_random : random orders of the selection claims' best-of-random rule
    """

    objective: str = "accuracy_calibrated"
    objective_kwargs: dict = field(default_factory=dict)
    n_orders: int = 20
    n_triples: int = 100
    triple_seed: int = 0
    triples: tuple | None = None
    n_random: int = 50

    def __post_init__(self):
        if self.n_orders < 2:
            raise ValueError(f"n_orders must be >= 2, got {self.n_orders}")
        if self.n_triples < 0:
            raise ValueError(f"n_triples must be >= 0, got {self.n_triples}")
        if self.n_random < 1:
            raise ValueError(f"n_random must be >= 1, got {self.n_random}")
        if self.triples is not None:
            chains = tuple((np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64), int(x))
                           for a, b, x in self.triples)
            object.__setattr__(self, "triples", chains)
            object.__setattr__(self, "n_triples", len(chains))

    @property
    def interval(self) -> str:
        """The bootstrap interval of the objective: ``"centred"`` (shifted by the bootstrap
        bias) for the information objectives, which duplicated rows bias, else
        ``"percentile"``."""
        return "centred" if self.objective.startswith("mi_") else "percentile"

    def chains(self, n_members: int) -> tuple:
        """The fixed DR chains for a ground set of ``n_members``."""
        if self.triples is not None:
            return self.triples
        from ..submodularity import sample_triple

        rng = np.random.default_rng(self.triple_seed)
        return tuple(sample_triple(n_members, rng) for _ in range(self.n_triples))


class Replicate:
    """One replicate's run, its set function (fitted on first use) and its stream (module
    docstring). ``seed`` is the stream's first draw: the set function's ``random_state`` and
    the selection's split seed."""

    def __init__(self, run, design: Design, rng: np.random.Generator):
        self.run, self.design, self.rng = run, design, rng
        self.seed = int(rng.integers(0, 2**31 - 1))
        self._cache: dict = {}

    @classmethod
    def of_fit(cls, run, design: Design, f) -> Replicate:
        """A replicate around the already fitted set function ``f`` of ``run``, without a
        stream (for statistics that draw nothing, e.g. a claim's power shortcut given its own
        generator)."""
        rep = cls.__new__(cls)
        rep.run, rep.design, rep.rng, rep.seed = run, design, None, None
        rep._cache = {"f": f}
        return rep

    def cached(self, key, compute: Callable):
        """``compute()`` once per replicate under ``key``."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    @property
    def f(self):
        """The set function of ``design.objective`` fitted on this replicate's run."""
        def fit():
            from ..setfunctions import make_set_function

            d = self.design
            return make_set_function(self.run, d.objective, random_state=self.seed,
                                     **d.objective_kwargs)
        return self.cached("f", fit)

    @property
    def chains(self) -> tuple:
        return self.cached("chains", lambda: self.design.chains(self.run.n_members))


@dataclass(frozen=True)
class Claim:
    """One claim of the paper as the engine reads it (module docstring).

    Parameters
    ----------
    name : registry key (``infodiv.claims.CLAIMS``)
    theorem : what of the paper it tests
    statistic_name : what the statistic is, in words
    statistic : ``statistic(rep) -> float`` (or ``[T]`` array with ``decide``), refitted on
        every replicate through ``rep.f``
    direction : ``"less"`` or ``"greater"``: the side of 0 (and of the null) that is a finding
    surrogate : the matched surrogate kind (``infodiv.inference.surrogates.SURROGATES``) on
        which a detection is the claim's power
    matched_case : how a reader names that surrogate
    sentence : the claim in plain language (what a detection says about the model)
    rule : the decision rule in words (``{alpha}`` is filled in)
    quick : optional power shortcut ``quick(rep, rng, n_bootstrap) -> {"value", "ci"}``
        (``{"value", "se"}`` with ``decide``): the statistic's example bootstrap on one fit,
        examples reweighted, for per-example set functions; without it a surrogate gets the
        refitted bootstrap
    decide : optional rule for a vector statistic, ``decide(value, se, null, alpha) ->
        (detected, summary dict)``; default the three-part rule of a scalar
    null_statistic : optional ``null_statistic(rep)``: the statistic as far as ``decide``
        reads its label-null draws (the entries it never reads NaN), drawing from the
        replicate's stream exactly as ``statistic`` does (the claims after it see the same
        stream); the label-permutation replicates call it instead of ``statistic``
    surrogate_kwargs : optional ``surrogate_kwargs(run, design) -> dict`` for the surrogate
    applies : optional ``applies(run, design) -> str | None``: why the claim cannot be tested
        on this run (None: it can)
    units : the units of the estimate; ``{units}`` is filled with the objective's
        (``"{units} per member"`` for a slope over set sizes, ``"dimensionless"`` for a
        correlation)
    group : one of :data:`GROUPS`: which part of a study judges the claim (the curves of every
        objective, the control comparisons, the held-out selection, a report)
    short : the claim's name in a table column (a few words)
    default : judged by ``infodiv run`` / ``infodiv demo`` / ``infodiv curves`` without
        ``--claims``
    objectives : the objectives the claim can be judged on (None: any); on any other the
        study lists it under ``not_tested`` with the reason
    margin : the smallest effect worth detecting, δ, as a rule fixed before looking
        (:class:`~infodiv.inference.outcome.Margin`); None for a statistic without an interval
        (no equivalence test: a miss is *inconclusive*, never *absent*)
    members_only : the statistic reads the member vectors, not the objective (the premise): one
        quantity per run, which a page states once (from the record with the most resamples)
    conclusions : what each outcome says about the model, in words
        (``{"holds": ..., "opposite": ..., "absent": ...}``; an outcome a claim cannot reach is
        left out): the answer paragraph's clauses (:mod:`infodiv.reports.answer_text`)
    """

    name: str
    theorem: str
    statistic_name: str
    statistic: Callable[[Replicate], float | np.ndarray]
    direction: str
    surrogate: str
    matched_case: str
    sentence: str
    rule: str
    quick: Callable[[Replicate, np.random.Generator, int], dict | None] | None = None
    decide: Callable[..., tuple[bool, dict]] | None = None
    null_statistic: Callable[[Replicate], float | np.ndarray] | None = None
    surrogate_kwargs: Callable[[Any, Design], dict] | None = None
    applies: Callable[[Any, Design], str | None] | None = None
    units: str = "{units}"
    group: str = "curve"
    short: str = ""
    default: bool = False
    objectives: tuple | None = None
    margin: Margin | None = None
    members_only: bool = False
    conclusions: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.direction not in DIRECTIONS:
            raise ValueError(f"direction of claim {self.name!r} must be one of {DIRECTIONS}, "
                             f"got {self.direction!r}")
        if self.group not in GROUPS:
            raise ValueError(f"group of claim {self.name!r} must be one of {GROUPS}, "
                             f"got {self.group!r}")
        if not self.short:
            object.__setattr__(self, "short", self.name.replace("_", " "))
