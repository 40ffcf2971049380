"""Report (not a test): Theorem 8's Eq. 12 bounds from the valid I(U;Y), next to the measured
error of the best readout.

Eq. 12 (bits; :func:`infodiv.information.error_bounds`):
(H(Y) − I − 1)/log2|Y| ≤ P_e* ≤ (H(Y) − I)/2, with P_e* the Bayes error of the best
classifier of U = all members, not the model's own argmax error. I comes from
:func:`estimators.usable_information` on the whole member vectors with the run's constant logit
offset (the ``own`` family reads the model's output) and the folds of
:func:`infodiv.information.valid_terms` (``random_state`` :data:`FOLD_SEED`): on the unchanged
rows it is the very fit of the decompositions' I(U;Y), so a page that prints both prints one
value with one interval. Its bracket [lower, upper] holds I, so the bounds are
:func:`infodiv.information.bracket_error_bounds` (the lower error bound at the upper end of I,
the upper error bound at the lower end). Beside them: the held-out argmax error of the readout
the nested selection chose (the best of the usable-information families, e.g. the members' own
summed logits or a calibrated or regularised readout), an upper estimate of P_e* up to its
sampling error. A held-out error below the lower bound would contradict the bracket; it is
reported as ``consistent`` = False. Nothing here is a finding: :func:`decide` never detects,
and the record's extra carries ``report_only``.

The fold seed is part of the estimator (as in the decompositions), not a replicate's draw: the
engine's reruns on the unchanged rows all give the one fit (no Monte-Carlo spread), and each
example-bootstrap replicate splits its own resampled rows with it.
"""

from __future__ import annotations

import numpy as np

from ..inference.claim import Claim
from ._control import needs_members

__all__ = ["CLAIM", "bounds", "decide", "report", "FIELDS", "FOLD_SEED"]

#: the statistic's entries, in order
FIELDS = ("mi", "mi_interval_low", "mi_interval_high", "mi_lower", "mi_upper",
          "error_lower_bound", "error_upper_bound", "best_readout_error", "h_y")


#: the folds' seed: that of :func:`infodiv.information.valid_terms` (module docstring)
FOLD_SEED = 0


def bounds(u, labels, *, bias=None, n_classes: int | None = None,
           random_state=FOLD_SEED) -> np.ndarray:
    """:data:`FIELDS` of the member array ``u`` ``[N, M, C]`` (bits; module docstring);
    ``bias`` the run's constant logit offset ``[C]`` (``own`` family), ``n_classes`` |Y| of
    Eq. 12 (default C)."""
    from estimators import usable_information

    from ..information import bracket_error_bounds

    u = np.asarray(u, dtype=np.float64)
    k = u.shape[2] if n_classes is None else int(n_classes)
    ui = usable_information(u, labels, bias=bias, random_state=random_state)
    lower, upper = bracket_error_bounds(ui.lower, ui.upper, ui.h_y, k)
    return np.array([ui.estimate, *ui.interval, ui.lower, ui.upper, lower, upper, ui.error,
                     ui.h_y])


def statistic(rep) -> np.ndarray:
    from ..inference.information_terms import member_bias

    run = rep.run
    return bounds(run.u, run.labels, bias=member_bias(run), n_classes=run.n_options)


def decide(value, se, null, alpha) -> tuple[bool, dict]:
    """Never detected (a report); the estimate is the best readout's held-out error."""
    doc = dict(zip(FIELDS, (float(v) for v in np.asarray(value, dtype=np.float64))))
    doc["consistent"] = bool(doc["best_readout_error"] >= doc["error_lower_bound"])
    return False, {"estimate": doc["best_readout_error"], "p": None, "extra": {
        "report_only": True, **doc, "report_text": report(doc),
        "estimate_meaning": "held-out argmax error of the best usable-information readout",
        "bounds_are_about": "the Bayes error of the best classifier of all members' vectors "
                            "U, not the model's own argmax error"}}


def report(extra: dict) -> str:
    """The report's sentence (``extra["report_text"]``, which the markdown prints): the Eq. 12
    bounds beside the best readout's held-out error."""
    verdict = "consistent" if extra["consistent"] else "below the lower bound: contradicts " \
        "the bracket on I"
    below = (" (an estimate below 0, which I cannot be: no usable information; the "
             "cross-fitted estimate scatters around 0)") if extra["mi"] < 0 else ""
    return (f"a report, not a test: {extra['error_lower_bound']:.3g} ≤ P_e* ≤ "
            f"{extra['error_upper_bound']:.3g} (Eq. 12, the Bayes error given all members, "
            f"from I(U;Y) = {extra['mi']:.3g} bits{below}, bracket [{extra['mi_lower']:.3g}, "
            f"{extra['mi_upper']:.3g}]); the best readout's held-out error "
            f"{extra['best_readout_error']:.3g} is {verdict}")


#: the claim in words, as every record and page prints it
WORDS = {
    "theorem": "Theorem 8 / Eq. 12: error bounds from I(U;Y) (a report, not a test)",
    "statistic_name": "Eq. 12 bounds on the Bayes error given U from the usable-information "
                      "bracket of I(U;Y), beside the best readout's held-out error",
    "sentence": "the Bayes error of the best classifier of all members lies between the Eq. 12 "
                "bounds (they are about that error, not the model's argmax error); the best "
                "readout's held-out error is shown beside them",
}

CLAIM = Claim(
    name="theorem8",
    statistic=statistic, direction="less", surrogate="shuffled_labels",
    matched_case="none (a report: the bounds are printed, nothing is tested)",
    rule="report only: never a detection (Eq. 12 bounds from the bracket of I; alpha "
         "{alpha} unused)",
    decide=decide, applies=needs_members, units="error rate (fraction of examples)",
    group="report", short="Theorem 8 bounds", default=False, **WORDS)
