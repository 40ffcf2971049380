"""The answer first: what holds for this model and task, claim by claim.

:func:`answer` reads a run folder and returns the block a reader meets before anything else:
whether the model solves its task at all (accuracy of its own option logits against the
majority-class rate, Wilson 95% interval), Theorem 1 as the identity it is (the model's own
cross-entropy = bias − diversity, with the residual), the information facts
(:mod:`infodiv.reports.answer_information`: I(U;Y), Theorems 5–6, Theorem 8), and one line
per verdict record of the engine (:class:`infodiv.inference.record.VerdictRecord`): the
verdict in words, the estimate with its interval, the power of its matched control and the
shuffled-label rate, and a one-line reason when the verdict is "no test" or "not a finding".
:func:`answer_html` renders it and :data:`DEFINITIONS` says what the words mean.

Verdict words (one rule, :func:`verdict_word`):

- **holds**: detected by the claim's rule (interval, null-corrected interval and null p agree)
  and the rule is calibrated (it does not fire on shuffled labels beyond its level);
- **not a finding**: the rule fires on shuffled labels beyond its level on this run;
- **no test**: the model is at chance (the Wilson interval of its accuracy reaches the
  majority-class rate), or the claim's power on its matched case is near 0 (Wilson upper bound
  below 1/2);
- **not detected**: the rule did not fire although it has power;
- **not detected (power not measured)**: no surrogates were run.
"""

from __future__ import annotations

from pathlib import Path

from ..inference.power import wilson_interval as wilson
from .answer_information import _e, _interval, information_answer, information_rows_html
from .summary import _read, fmt

__all__ = ["answer", "answer_html", "verdict_word", "find_records", "model_at_chance",
           "DEFINITIONS"]

_RECORD_KEYS = {"claim", "estimate", "interval", "detected", "calibrated"}

DEFINITIONS = (
    ("member", "one write to the residual stream (the embedding, an attention or MLP "
               "execution, or a head): its contribution u_m to the option logits; the members "
               "sum exactly to the model's logits"),
    ("bias", "the mean loss of the members on their own (each member scaled by M, so that the "
             "members' mean is the model's logits)"),
    ("diversity", "how far the members are from their ensemble: mean KL(q̄ ‖ q_m) for the "
                  "cross-entropy; loss = bias − diversity holds exactly, per example. The "
                  "headline variant is the cross-entropy at scale \"sum\", because it "
                  "decomposes the model's real loss; the other variants are in the details"),
    ("usable information", "H(Y) minus the held-out cross-entropy of a probabilistic readout "
                           "of the members, in bits: a lower bound on I(U;Y), which is at "
                           "most H(Y) ≤ log2 C"),
    ("relevancy", "Σ_m I(U_m;Y): what the members know about the label one at a time"),
    ("redundancy", "what the members know in common: relevancy − I(U;Y) when positive; the "
                   "diversity D = I(U;Y) − relevancy is its negative"),
    ("power", "how often the claim's rule fires on a surrogate built from this run on which it "
              "must fire (its matched case), with a Wilson 95% interval"),
    ("shuffled-label rate", "how often the rule fires when the labels are shuffled: a rule that "
                            "fires beyond its level is not calibrated, and its verdict is no "
                            "finding"),
)


def model_at_chance(accuracy: float, n: int, majority: float) -> bool:
    """Whether the Wilson 95% interval of ``accuracy`` over ``n`` examples reaches the
    majority-class rate (the accuracy of always answering the commonest class)."""
    return wilson(round(accuracy * n), n)[0] <= majority


def find_records(doc, objective: str | None = None) -> list[dict]:
    """Every verdict record in a curves report (a dict with the :class:`VerdictRecord`
    fields), each with the objective it was judged on."""
    out = []
    if isinstance(doc, dict):
        if _RECORD_KEYS <= doc.keys():
            return [_flat({**doc, "objective": doc.get("objective") or objective})]
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


def _flat(rec: dict) -> dict:
    """A record whose power / false-positive rate is a ``{"rate", "ci", "n"}`` dict, flattened
    to the :class:`VerdictRecord` fields."""
    for key in ("power", "false_positive"):
        value = rec.get(key)
        if isinstance(value, dict):
            rec[key], rec[f"{key}_interval"] = value.get("rate"), value.get("ci")
            rec[f"{key}_n"] = value.get("n", 0)
    return rec


def verdict_word(rec: dict, at_chance: bool) -> tuple[str, str]:
    """(verdict in words, one-line reason) of one verdict record (module docstring)."""
    fp, alpha = rec.get("false_positive"), rec.get("alpha", 0.05)
    power, piv = rec.get("power"), rec.get("power_interval")
    if at_chance:
        return "no test", "the model is at chance on this task: there is nothing to explain"
    if not rec.get("calibrated", True):
        return "not a finding", (f"its rule fires on shuffled labels with probability "
                                 f"{fmt(fp, 2)} (level {alpha})")
    if rec.get("detected"):
        return "holds", ""
    if power is None:
        return "not detected (power not measured)", "no surrogates were run"
    if piv is not None and piv[1] < 0.5:
        return "no test", (f"power {fmt(power, 2)} on its matched case (hover the power): a "
                           "miss says nothing")
    return "not detected", ""


def _accuracy(root: Path) -> tuple:
    """(accuracy of the model's own option logits, n, majority-class rate) of the run's
    labelled examples, or Nones when the run has no readable contributions."""
    import numpy as np

    from extraction.contributions import Contributions

    try:
        c = Contributions.load(root / "contributions")
        labels = c.labels
    except (OSError, ValueError):
        return None, None, None
    counts = np.bincount(labels, minlength=c.u.shape[2])
    return float(c.accuracy()), int(labels.size), float(counts.max() / labels.size)


def answer(root) -> dict:
    """The answer block of one run folder: accuracy and chance, Theorem 1, verdict lines."""
    root = Path(root)
    dec = _read(root / "decompositions" / "decompositions.json") or {}
    cur = _read(root / "curves" / "report.json") or {}
    acc, n, majority = _accuracy(root)
    at_chance = bool(acc is not None and n and majority is not None
                     and model_at_chance(acc, n, majority))
    theorem1 = next((r for r in (dec.get("ensemble") or {}).get("bias_diversity", [])
                     if r.get("loss") == "cross_entropy" and r.get("scale") == "sum"), None)
    lines = []
    for rec in find_records(cur):
        word, reason = verdict_word(rec, at_chance)
        lines.append({"claim": rec["claim"], "theorem": rec.get("theorem", ""),
                      "objective": rec.get("objective"), "verdict": word, "reason": reason,
                      "statistic": rec.get("statistic", ""), "estimate": rec.get("estimate"),
                      "interval": rec.get("interval"), "units": rec.get("units", ""),
                      "power": rec.get("power"),
                      "power_interval": rec.get("power_interval"),
                      "matched_case": rec.get("matched_case", ""),
                      "false_positive": rec.get("false_positive"),
                      "n_bootstrap": rec.get("n_bootstrap"),
                      "n_permutations": rec.get("n_permutations"),
                      "sentence": rec.get("sentence", "")})
    return {"accuracy": acc, "n": n, "majority_rate": majority, "at_chance": at_chance,
            "accuracy_wilson95": list(wilson(round(acc * n), n)) if acc is not None and n
            else None, "theorem1": theorem1,
            "information": information_answer(dec, n, None if acc is None else 1.0 - acc),
            "verdicts": lines}


def _size(x) -> str:
    return "–" if x is None else str(x)


def _short_theorem(theorem: str) -> str:
    """The name of what a claim tests, without its gloss: ``"Theorem 7 (…): …"`` →
    ``"Theorem 7"``."""
    return (theorem or "").split(":")[0].split(" (")[0].strip()


def _verdict_row(v: dict) -> str:
    """One claim: its sentence (the theorem and the statistic on hover), the verdict and its
    reason, the estimate with its interval, the power with its Wilson interval (the matched
    case on hover) and the shuffled-label rate."""
    css = {"holds": "ok", "not a finding": "bad"}.get(v["verdict"], "muted")
    power = "–" if v["power"] is None else \
        f"<span title='{_e(v['matched_case'])}'>{fmt(v['power'], 2)}" \
        f"{_interval(v['power_interval'])}</span>"
    reason = f"<br><small>{_e(v['reason'])}</small>" if v["reason"] else ""
    where = " · ".join(x for x in (_short_theorem(v["theorem"]), v["objective"]) if x)
    return (f"<tr><td title='{_e(v['theorem'])}'>{_e(v['sentence'] or v['claim'])}<br><small>"
            f"{_e(where)}</small></td>"
            f"<td class='{css}'><b>{_e(v['verdict'])}</b>{reason}</td>"
            f"<td class='num' title='{_e(v['statistic'])}'>{fmt(v['estimate'])}"
            f"{_interval(v['interval'])}<br><small>{_e(v.get('units') or '')}; B = "
            f"{_size(v['n_bootstrap'])}, K = "
            f"{_size(v['n_permutations'])}</small></td><td class='num'>{power}</td>"
            f"<td class='num'>{fmt(v['false_positive'], 2)}</td></tr>")


def answer_html(a: dict, header: dict, figure_html: str = "") -> str:
    """The first screen: does the model solve its task, Theorem 1, one row per verdict."""
    acc = "–" if a["accuracy"] is None else (
        f"{fmt(a['accuracy'])}{_interval(a['accuracy_wilson95'])} over {a['n']} examples "
        f"(majority class {fmt(a['majority_rate'])})")
    chance = ("<p class='bad'>The model is at chance on this task: no claim can be tested "
              "on it.</p>") if a["at_chance"] else ""
    t1 = a["theorem1"]
    theorem1 = "" if not t1 else (
        f"<tr><td>Theorem 1: loss = bias − diversity<br><small>the model's cross-entropy"
        f"</small></td><td class='ok'><b>holds exactly</b><br><small>an "
        f"identity, max residual {fmt(t1.get('max_abs_residual'), 2)}</small></td>"
        f"<td class='num'>{fmt(t1['ensemble_loss'])} = {fmt(t1['bias'])} − "
        f"{fmt(t1['diversity'])}<br><small>{_e(t1.get('units', 'nats'))}, n = {a['n']}"
        f"</small></td><td>–</td><td>–</td></tr>")
    rows = "".join(_verdict_row(v) for v in a["verdicts"]) or (
        "<tr><td colspan='5'>No verdicts in this run: run <code>infodiv curves</code> with "
        "inference.</td></tr>")
    table = (f"<table class='verdicts'><tr><th>claim</th><th>verdict</th><th>estimate [95%]"
             f"</th><th title='detection rate on the matched case, Wilson 95% interval'>power "
             f"[95%]</th><th title='how often the rule fires with the labels shuffled'>"
             f"shuffled labels</th></tr>"
             f"{theorem1}{information_rows_html(a.get('information'))}{rows}</table>")
    model = header.get("model") or header.get("model_id")
    return (f"<section id='answer'><p class='lead'><b>{_e(model)}</b> on "
            f"<b>{_e(header.get('task'))}</b>: accuracy of its own option logits "
            f"{acc}; {header.get('M')} members.</p>{chance}"
            f"<div class='answer'><div class='verdict-block' id='verdicts'>{table}</div>"
            f"<div class='answer-figure'>{figure_html}</div></div></section>")


def definitions_html() -> str:
    items = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in DEFINITIONS)
    return f"<section id='definitions'><h2>What the words mean</h2><dl>{items}</dl></section>"
