"""Whether a run can test the paper's claims: do its members carry the label?

The claims are about how members combine information about the label, so a run is testable
when its members carry some: the cross-fitted usable information of all members
(:func:`estimators.usable.usable_information`: H(Y) − held-out cross-entropy of the best
readout family, chosen by nested cross-validation) has a 95% interval whose lower end lies
above 0. Under labels independent of the members the held-out cross-entropy is at least H(Y)
in expectation, so the lower end passes 0 with probability at most 2.5% (one-sided).

The model's own readout — the argmax of its option logits, i.e. of the summed members — is
a different question (does this prompt read the answer out?). It is always reported, with
its Wilson 95% interval against the majority-class rate, but it does not decide testability:
a prompt whose options are mapped to the wrong answers reads out below chance while its
members carry the label in full (the readout of the members then reaches what the prompt
does not). Only the raw readout objectives of such a run (:data:`RAW_OBJECTIVES`: the summed
logits scored as they are) are untestable (:func:`untestable_reason`): their curves measure
the prompt's mislabelling.
"""

from __future__ import annotations

import numpy as np

from .power import wilson_interval

__all__ = ["testability", "raw_readout", "raw_readout_of", "untestable_reason", "RAW_OBJECTIVES"]

#: the objectives that score the model's own summed logits as they are (no calibration)
RAW_OBJECTIVES = ("accuracy", "cross_entropy", "brier")


def raw_readout(run) -> dict:
    """Accuracy of the model's own option logits (the argmax of the summed members) with its
    Wilson 95% interval, the majority-class rate and where the accuracy lies against it
    (``"above"``, ``"at"``, ``"below"`` chance)."""
    return raw_readout_of(run.labels, np.asarray(run.logits).argmax(axis=1))


def raw_readout_of(labels, predictions) -> dict:
    """:func:`raw_readout` from the labels and the model's argmax predictions."""
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    if labels.shape != predictions.shape or labels.ndim != 1 or labels.size == 0:
        raise ValueError(f"labels and predictions must be two 1-d arrays of one length > 0, "
                         f"got shapes {labels.shape} and {predictions.shape}")
    n = int(labels.size)
    acc = float(np.mean(labels == predictions))
    majority = float(np.bincount(labels).max() / n)
    lo, hi = wilson_interval(round(acc * n), n)
    where = "above" if lo > majority else ("below" if hi < majority else "at")
    return {"accuracy": acc, "accuracy_interval": [lo, hi], "majority_rate": majority, "n": n,
            "chance": where}


def testability(run, *, random_state=0) -> dict:
    """Whether ``run``'s members carry information about the label (module docstring).

    Returns
    -------
    dict with ``testable`` (bool), ``raw`` (:func:`raw_readout`), ``members`` (None, with a
    ``reason``, where a class has fewer than 4 examples: nothing is measured and the run
    counts as testable; else the usable
    information of all members in bits: ``value``, ``interval``, ``h_y``, the chosen readout
    ``families`` and its held-out ``error`` with a Wilson interval) and ``sentence``: the
    finding in words, the same on every page and on the command line.
    """
    from estimators.usable import usable_information

    raw = raw_readout(run)
    n = raw["n"]
    folds = _folds(np.bincount(np.asarray(run.labels)))
    if folds is None:
        return {"testable": True, "raw": raw, "members": None,
                "reason": "too few examples per class to measure what the members carry (at "
                          "least 4 per class): the claims are tested, and their own nulls "
                          "guard them"}
    ui = usable_information(run.u, run.labels, bias=getattr(run, "bias", None), bracket=False,
                            random_state=random_state, n_splits=folds[0],
                            inner_splits=folds[1])
    members = {"value": ui.estimate, "interval": [float(v) for v in ui.interval],
               "h_y": ui.h_y, "units": "bits", "families": sorted(set(ui.folds)),
               "error": ui.error,
               "error_interval": list(wilson_interval(round(ui.error * n), n))}
    testable = bool(members["interval"][0] > 0)
    return {"testable": testable, "raw": raw, "members": members}


def _folds(counts) -> tuple | None:
    """(outer, inner) cross-fitting folds the smallest class allows: (5, 3) from 15 examples
    per class, (2, 2) from 4, None below."""
    least = int(np.min(counts[counts > 0])) if np.any(counts > 0) else 0
    if least >= 15:
        return 5, 3
    if least >= 4:
        return 2, 2
    return None


def untestable_reason(test: dict | None, objective: str) -> str | None:
    """Why the claims cannot be tested on ``objective`` of a run with testability ``test``
    (None: they can). The members must carry the label; and a raw readout objective
    (:data:`RAW_OBJECTIVES`) of a prompt that reads out below chance measures the prompt's
    mislabelling, not how members combine (its calibrated and information objectives do not)."""
    if test is None:
        return None
    if not test["testable"]:
        return "the members carry no detectable information about the label"
    if objective in RAW_OBJECTIVES and test["raw"]["chance"] == "below":
        return ("the raw readout is below chance (the prompt maps the members to the wrong "
                "options): judge the calibrated or information objectives")
    return None
