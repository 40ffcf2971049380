"""Adapters from a Contributions run to the arrays ``estimators`` takes (and its labels)."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["run_names", "ensemble_arrays"]


def run_names(meta) -> tuple[str, str]:
    """``(model, task)`` labels of a run from its meta (``meta["model"]`` may be a record with
    ``name`` or ``model_id``)."""
    meta = meta or {}
    model = meta.get("model", "")
    if isinstance(model, Mapping):
        model = model.get("name") or model.get("model_id") or ""
    return str(model), str(meta.get("task", ""))


def ensemble_arrays(contrib) -> dict:
    """Keyword arguments of :func:`estimators.bias_diversity` / ``paper_eq14`` /
    ``bias_variance_covariance`` for a run: member logits ``u``, ``labels``, the constant
    member ``bias`` and the member kinds as ``groups``."""
    return {"u": contrib.u, "labels": contrib.labels, "bias": contrib.bias,
            "groups": list(contrib.kinds)}
