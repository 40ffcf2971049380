"""Option choices shared by the commands (a leaf module: commands import it, it imports none
of them)."""

from __future__ import annotations

__all__ = ["info_method_names", "claim_names"]


def info_method_names() -> tuple[str, ...]:
    """Estimator names accepted by the information terms (those that estimate MI with a label;
    not ``lnc``, which covers continuous MI/TC only)."""
    from estimators._dispatch import LABEL_METHODS

    return LABEL_METHODS


def claim_names() -> tuple[str, ...]:
    """The registered claims (:data:`infodiv.claims.CLAIMS`), in report order."""
    from infodiv.claims import CLAIMS

    return tuple(CLAIMS)
