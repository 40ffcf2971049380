"""The paper's claims, one module each, and their registry (DESIGN.md 2.8).

A claim module defines ``CLAIM``, an :class:`infodiv.inference.claim.Claim`: the theorem it
tests, its statistic (a function of one replicate's fitted set function and run), the
direction that is a finding, its matched surrogate, its words, its group (``curve``,
``control``, ``selection``, ``report``), its table label and whether a study judges it by
default. :func:`infodiv.inference.engine.evaluate` turns claims into verdict records.

Every list of claims anywhere (the command line's choices, a study's defaults, the claims of
a group, an experiment's claims) is read from the registry :data:`CLAIMS` through
:func:`claim_names`; adding a claim is one module here plus one :func:`register` row below
(``docs/claims.md``).
"""

from __future__ import annotations

from ..inference.claim import GROUPS, Claim
from . import (
    diminishing_returns,
    diversity_effect,
    dr_mean,
    gains_vs_control,
    greedy_vs_prefix,
    greedy_vs_random,
    marginal_gain,
    premise,
    redundancy_cost,
    theorem8,
    violations,
)

__all__ = ["CLAIMS", "register", "claim_names", "get_claims", "get_claim", "claims_table"]

#: name -> Claim, in report order (the order of :func:`register`)
CLAIMS: dict[str, Claim] = {}


def register(claim: Claim) -> Claim:
    """Add ``claim`` to :data:`CLAIMS` (after the registered ones); a second claim under a
    registered name is a ``ValueError`` naming it."""
    if not isinstance(claim, Claim):
        raise TypeError(f"claim must be an infodiv.inference.claim.Claim, got "
                        f"{type(claim).__name__}")
    if claim.name in CLAIMS:
        raise ValueError(f"a claim named {claim.name!r} is already registered")
    CLAIMS[claim.name] = claim
    return claim


for _module in (diminishing_returns, dr_mean, violations, diversity_effect, greedy_vs_random,
                greedy_vs_prefix, premise, redundancy_cost, gains_vs_control, marginal_gain,
                theorem8):
    register(_module.CLAIM)


def claim_names(groups=GROUPS, *, default: bool | None = None) -> tuple[str, ...]:
    """The registered claims of ``groups`` (a group name or several), in report order;
    ``default=True`` keeps those a study judges without ``--claims``, ``False`` the others."""
    groups = (groups,) if isinstance(groups, str) else tuple(groups)
    bad = [g for g in groups if g not in GROUPS]
    if bad:
        raise ValueError(f"unknown claim groups {bad}; choose from {list(GROUPS)}")
    return tuple(name for name, c in CLAIMS.items()
                 if c.group in groups and (default is None or c.default == default))


def get_claims(names) -> tuple:
    """The registered claims ``names`` (an unknown name: ValueError naming the choices)."""
    bad = [n for n in names if n not in CLAIMS]
    if bad:
        raise ValueError(f"unknown claims {bad}; choose from {list(CLAIMS)}")
    return tuple(CLAIMS[n] for n in names)


def get_claim(name: str) -> Claim:
    """The registered claim ``name``."""
    return get_claims([name])[0]


def claims_table() -> str:
    """Markdown: every registered claim (name, group, how pages name it, what it tests, the side
    that is a finding, its matched case, whether ``infodiv run`` judges it without ``--claims``:
    the default claims, and the selection claims through the selection stage) —
    ``docs/claims.md`` holds it."""
    rows = ["| claim | group | on pages | tests | finding | matched case | default |",
            "|---|---|---|---|---|---|---|"]
    for name, c in CLAIMS.items():
        side = {"less": "below 0", "greater": "above 0"}.get(c.direction, c.direction)
        judged = "yes" if c.default or c.group == "selection" else "no"
        rows.append(f"| `{name}` | {c.group} | {c.short} | {c.theorem} | {side} | "
                    f"{c.matched_case or '–'} | {judged} |")
    return "\n".join(rows)
