"""The information lines of the first screen: I(U;Y), Theorems 5–6 and Theorem 8.

:func:`information_answer` reads the valid information terms of a run's decompositions
(:func:`infodiv.inference.information_terms.valid_inference`, estimator ``usable``) and returns
what the first screen states about them; :func:`information_rows_html` renders three rows of
the first screen's table:

- **I(U;Y)**, what all members know about the label: cross-fitted usable information
  ``H(Y) − CE`` of the best readout family (chosen by nested cross-validation), its interval
  over the held-out terms and its bracket on I itself, never above H(Y);
- **Theorems 5–6**: R, TC, TC|Y and I(U_S;Y) cannot fall as members are added, nor can the
  Eq. 12 bounds rise (the chain rule: a mathematical fact, not a finding about the model);
  what is measured is I along the depth order (does the estimate respect the non-decrease
  within its noise?) and the diversity D = I − R, which may move either way;
- **Theorem 8 (Eq. 12)**: bounds on the Bayes error of the best classifier of all members,
  from the ends of the bracket on I, beside the best readout's held-out error (Wilson 95%
  interval) and the model's own error (its logits are a classifier of the members, so its
  error is at least the Bayes error); an error whose Wilson interval lies below the lower bound
  contradicts the bracket (``consistent`` False).
"""

from __future__ import annotations

import html

from ..inference.power import wilson_interval as wilson
from ..numbers import fmt

__all__ = ["information_answer", "information_rows_html"]


def information_answer(dec: dict, n: int | None, model_error: float | None) -> dict | None:
    """The first screen's information facts of one run, or None when its decompositions hold
    no valid information terms (``infodiv decompose --info-method usable``)."""
    v = ((dec.get("information_inference") or {}).get("methods") or {}).get("usable")
    if not v or "error" in v or not n:
        return None
    j, r, d = v["joint"], v["relevancy"], v["diversity"]
    low_b, up_b = v["bound_lower"]["value"], v["bound_upper"]["value"]
    prefix = v.get("prefix")
    best = prefix["error"][-1] if prefix else None   # the last prefix is all members
    out = {"units": "bits", "n": int(n), "h_y": v["h_y"], "joint": j["value"],
           "joint_ci": j["ci"], "bracket": j["bracket"], "upper_kind": j["upper_kind"],
           "families": sorted(set(j["families"])), "joint_p": j.get("p"),
           "joint_n_permutations": j.get("n_permutations"),
           "relevancy": r["value"], "relevancy_ci": r["ci"],
           "diversity": d["value"], "diversity_ci": d["ci"],
           "diversity_corrected": d.get("corrected"),
           "diversity_corrected_ci": d.get("corrected_ci"),
           "error_lower_bound": low_b, "error_upper_bound": up_b,
           "model_error": model_error, "prefix": prefix}
    if best is not None:
        out["best_readout_error"] = best
        out["best_readout_error_ci"] = list(wilson(round(best * n), n))
        errors = [best] + ([] if model_error is None else [model_error])
        out["consistent"] = bool(all(wilson(round(e * n), n)[1] >= low_b for e in errors))
    return out


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _interval(iv) -> str:
    return "" if not iv else f" [{fmt(iv[0])}, {fmt(iv[1])}]"


def _row(claim, small, css, verdict, reason, estimate, note, span=1) -> str:
    """One row of the first screen's table: the fact, then one cell spanning the ``span``
    objective columns (these facts do not depend on an objective)."""
    reason = f"<br><small>{_e(reason)}</small>" if reason else ""
    note = f" <small>{_e(note)}</small>" if note else ""
    return (f"<tr><td>{_e(claim)}<br><small>{_e(small)}</small></td>"
            f"<td colspan='{span}' class='{css}'><b>{_e(verdict)}</b> "
            f"<span class='num'>{estimate}</span>{note}{reason}</td></tr>")


def _joint_row(a: dict, span: int) -> str:
    present = a["joint_ci"][0] > 0
    null = ("label null not run" if a["joint_p"] is None else
            f"label null p = {fmt(a['joint_p'], 2)} ({a['joint_n_permutations']} permutations)")
    return _row("What all members know about the label: I(U;Y)",
                "usable information H(Y) − held-out cross-entropy of the best readout "
                f"({', '.join(a['families'])})",
                "ok" if present else "muted", "present" if present else "none measured",
                f"bracket on I itself{_interval(a['bracket'])} (upper: {a['upper_kind']}); {null}",
                f"{fmt(a['joint'])}{_interval(a['joint_ci'])}",
                f"bits (H(Y) = {fmt(a['h_y'])}), n = {a['n']}", span)


_MONOTONE = "Theorems 5–6: R, TC, TC|Y and I grow with the set; only D moves either way"


def _monotone_row(a: dict, span: int) -> str:
    p = a.get("prefix")
    d = f"D = I − R = {fmt(a['diversity'])}{_interval(a['diversity_ci'])}"
    if not p:
        return _row(_MONOTONE, "chain rule", "ok", "a fact",
                    "not measured along an order in this run", d,
                    f"bits, all members, n = {a['n']}", span)
    st = p["steps"]
    beyond = st["n_falls_beyond_intervals"]
    reason = (f"estimated I along the depth order {fmt(p['joint'][0])} → {fmt(p['joint'][-1])} "
              f"bits over prefix sizes {p['sizes'][0]}–{p['sizes'][-1]}: {st['n_falls']} of "
              f"{st['n_steps']} steps fall, {beyond} beyond their intervals")
    if beyond:
        reason += " (the readout's learning cost grows with the dimension; the true I cannot)"
    return _row(_MONOTONE, f"chain rule; D along the depth order {fmt(p['diversity'][0])} → "
                f"{fmt(p['diversity'][-1])} bits", "ok" if not beyond else "muted",
                "a fact; estimates agree" if not beyond else "a fact; estimates fall",
                reason, d, f"bits, all members, n = {a['n']}", span)


def _theorem8_row(a: dict, span: int) -> str:
    best = a.get("best_readout_error")
    if best is None:
        verdict, css, reason, note = "bounds only", "muted", "", ""
    else:
        ok = a["consistent"]
        verdict, css = ("consistent", "ok") if ok else ("contradicts the bracket", "bad")
        own = "" if a["model_error"] is None else f"; the model's own error {fmt(a['model_error'])}"
        reason = (f"best readout's held-out error {fmt(best)}"
                  f"{_interval(a['best_readout_error_ci'])}{own}")
        note = "bounds on the Bayes error given all members, not on the model's argmax error"
    return _row("Theorem 8 (Eq. 12): I(U;Y) bounds the error of the best classifier of the "
                "members", "bounds at the ends of the bracket on I", css, verdict, reason,
                f"{fmt(a['error_lower_bound'])} ≤ P(error) ≤ {fmt(a['error_upper_bound'])}",
                note, span)


def information_rows_html(a: dict | None, span: int = 1) -> str:
    """The three information rows of the first screen's table ('' without information terms),
    their statement spanning ``span`` objective columns."""
    if not a:
        return ""
    return _joint_row(a, span) + _monotone_row(a, span) + _theorem8_row(a, span)
