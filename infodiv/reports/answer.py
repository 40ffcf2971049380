"""The answer first: what this run says about the paper, read from its records.

:func:`answer` reads a run folder and returns what a reader meets before anything else: the
run's testability (:mod:`infodiv.inference.testability`: the model's raw readout against
chance, always shown, and whether its members carry the label), Theorem 1 as the identity it
is (the model's own cross-entropy = bias − diversity, with the residual), the information
facts (:mod:`infodiv.reports.answer_information`: I(U;Y), Theorems 5–6, Theorem 8), one line
per verdict record of the engine (:class:`infodiv.inference.record.VerdictRecord`) with its
conclusion, and the answer paragraph generated from all of these
(:func:`infodiv.reports.answer_text.answer_paragraph`). :mod:`infodiv.reports.answer_page`
renders it; the command line prints the same paragraph.

Every verdict line carries the record's conclusion (:mod:`infodiv.inference.outcome`):
*holds*, *opposite*, *absent* (within the claim's margin δ), *inconclusive* (with the n that
would decide), *untestable* or *report*. A record written before conclusions were recorded
is read through the same :func:`~infodiv.inference.outcome.decide_outcome` without a margin
(so it can hold, be opposite or be inconclusive, never absent).
"""

from __future__ import annotations

from pathlib import Path

from ..claims import CLAIMS
from ..inference.outcome import decide_outcome
from ..inference.power import wilson_interval as wilson
from ..outputs import stage_document
from .answer_information import information_answer
from .answer_text import answer_paragraph, verdict_list

__all__ = ["answer", "answer_of", "answer_document", "find_records", "outcome_of"]

_RECORD_KEYS = {"claim", "estimate", "interval", "detected", "calibrated"}


def find_records(doc, objective: str | None = None) -> list[dict]:
    """Every verdict record in a curves report (a dict with the :class:`VerdictRecord`
    fields), each with the objective it was judged on."""
    out = []
    if isinstance(doc, dict):
        if _RECORD_KEYS <= doc.keys():
            return [{**doc, "objective": doc.get("objective") or objective}]
        for k, value in doc.items():
            if k == "objectives" and isinstance(value, dict):
                for name, entry in value.items():
                    out += find_records(entry, name)
            else:
                out += find_records(value, objective)
    elif isinstance(doc, list):
        for item in doc:
            out += find_records(item, objective)
    return out


def outcome_of(rec: dict) -> dict:
    """``{"outcome", "reason", "margin", "mde", "n_needed"}`` of a record dict: its own
    conclusion, or for a record without one the same rule without a margin."""
    if rec.get("outcome"):
        margin = rec.get("margin") or {}
        return {"outcome": rec["outcome"], "reason": rec.get("outcome_reason", ""),
                "margin": margin.get("value"), "mde": rec.get("mde"),
                "n_needed": rec.get("n_needed")}
    return decide_outcome(direction=rec.get("direction", "greater"),
                          detected=bool(rec.get("detected")), opposite=False,
                          calibrated=bool(rec.get("calibrated", True)),
                          interval=rec.get("interval"),
                          corrected_interval=rec.get("corrected_interval"), margin=None,
                          n=int(rec.get("n_examples") or 0), alpha=rec.get("alpha", 0.05),
                          report_only=bool((rec.get("extra") or {}).get("report_only")),
                          no_margin="its record predates margins (no δ), so it cannot be "
                                    "called absent")


def _line(rec: dict) -> dict:
    """One verdict line: the record's numbers, its conclusion and its claim's words."""
    claim = CLAIMS.get(rec["claim"])
    power, fp = rec.get("power"), rec.get("false_positive")
    return {"claim": rec["claim"], "short": claim.short if claim else rec["claim"],
            "members_only": bool(claim and claim.members_only),
            "theorem": rec.get("theorem", ""), "objective": rec.get("objective"),
            **outcome_of(rec),
            "conclusions": dict(claim.conclusions) if claim else {},
            "statistic": rec.get("statistic", ""), "estimate": rec.get("estimate"),
            "interval": rec.get("interval"), "units": rec.get("units", ""),
            "power": power.get("rate") if isinstance(power, dict) else power,
            "power_interval": power.get("ci") if isinstance(power, dict) else None,
            "matched_case": rec.get("matched_case", ""),
            "false_positive": fp.get("rate") if isinstance(fp, dict) else fp,
            "false_positive_interval": fp.get("ci") if isinstance(fp, dict) else None,
            "n_bootstrap": rec.get("n_bootstrap"), "n_permutations": rec.get("n_permutations"),
            "sentence": rec.get("sentence", ""), "extra": rec.get("extra") or {}}


def _raw_readout(root: Path) -> dict | None:
    """The raw readout of a curves report made before testability was recorded, read from
    the run's contributions (:func:`~infodiv.inference.testability.raw_readout`)."""
    from extraction.contributions import Contributions

    from ..inference.testability import raw_readout

    try:
        return raw_readout(Contributions.load(root / "contributions"))
    except (OSError, ValueError):
        return None


def answer_of(dec: dict, cur: dict, raw: dict | None = None) -> dict:
    """The answer block of a run's decompositions document ``dec`` and curves report ``cur``
    (module docstring); ``raw`` (:func:`~infodiv.inference.testability.raw_readout`) stands in
    for a curves report made before testability was recorded."""
    test = cur.get("testability")
    raw = test["raw"] if test else raw
    n = raw["n"] if raw else None
    theorem1 = next((r for r in (dec.get("ensemble") or {}).get("bias_diversity", [])
                     if r.get("loss") == "cross_entropy" and r.get("scale") == "sum"), None)
    lines = [_line(rec) for rec in find_records(cur)]
    out = {"testability": test, "raw": raw, "n": n,
           "accuracy": raw["accuracy"] if raw else None,
           "majority_rate": raw["majority_rate"] if raw else None,
           "accuracy_wilson95": list(wilson(round(raw["accuracy"] * n), n)) if raw else None,
           "theorem1": theorem1,
           "information": information_answer(dec, n, None if raw is None
                                              else 1.0 - raw["accuracy"]),
           "verdicts": lines}
    out["paragraph"] = answer_paragraph(out)
    return out


def answer(root) -> dict:
    """The answer block of one run folder (module docstring), its stage documents read only
    when their folders' manifests list them with this sha256
    (:func:`infodiv.outputs.stage_document`: UserError otherwise)."""
    root = Path(root)
    dec = stage_document(root, "decompose")
    cur = stage_document(root, "curves")
    return answer_of(dec, cur, None if cur.get("testability") else _raw_readout(root))


def answer_document(dec: dict, cur: dict, raw: dict | None = None) -> dict:
    """What a results page quotes of one run: the answer paragraph (``text``, and its
    ``paragraph`` sentences), the verdict list in markdown (``list``,
    :func:`~infodiv.reports.answer_text.verdict_list`) and every line's conclusion keyed
    ``claim|objective`` (``outcomes``), all from :func:`answer_of` — a page's prose states no
    verdict its records do not hold. ``raw`` as in :func:`answer_of`."""
    said = answer_of(dec, cur, raw)
    return {"text": " ".join(said["paragraph"]), "paragraph": said["paragraph"],
            "list": verdict_list(said),
            "outcomes": {f"{v['claim']}|{v['objective']}": v["outcome"]
                         for v in said["verdicts"]}}
