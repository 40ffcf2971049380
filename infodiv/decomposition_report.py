"""One run's ensemble and information decompositions, written as JSON, markdown and figures.

``decomposition_report(contrib, out)`` gathers, for one ``Contributions`` run:

- the exact bias–diversity decompositions of Theorem 1 for every variant
  (:func:`estimators.bias_diversity`: squared loss in logit and probability space, cross-entropy;
  member scale ``"mean"`` — the paper — and ``"sum"`` — whose ensemble is the model itself),
  with the embedding / attention / MLP parts of Eq. 9–10 and the largest per-example residual of
  the identity;
- the paper's Eq. 14 approximation with its gap (:func:`estimators.paper_eq14`);
- the bias–variance–covariance forms of Theorem 3 (:func:`estimators.bias_variance_covariance`)
  with the target term that Eq. 11 as printed drops;
- junction curves (fixed-scale and logit-lens readouts, Figures 5/7) and the module shares
  (Figure 4);
- the information decomposition I(U;Y) = relevancy + diversity (Theorem 4, Eq. 13) of the
  members' centred option logits (C − 1 dimensions each) by the Gaussian and Gaussian-copula
  estimators, next to the
  Eq. 12 error bounds and the measured error.
"""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from pathlib import Path

import numpy as np

VARIANTS = (
    ("squared", "logit", "mean"),
    ("squared", "logit", "sum"),
    ("squared", "probability", "mean"),
    ("squared", "probability", "sum"),
    ("cross_entropy", "logit", "mean"),
    ("cross_entropy", "logit", "sum"),
)


def scalars(obj) -> dict:
    """The scalar (and nested-dataclass scalar) fields of a result dataclass, for JSON."""
    out = {}
    for f in fields(obj):
        val = getattr(obj, f.name)
        if is_dataclass(val):
            out[f.name] = scalars(val)
        elif isinstance(val, (bool, int, float, str, np.floating, np.integer)):
            out[f.name] = val.item() if isinstance(val, np.generic) else val
        elif isinstance(val, np.ndarray) and val.ndim and f.name not in ("k", "names"):
            out[f"{f.name}_mean"] = float(val.mean())
    return out


def ensemble_terms(contrib) -> dict:
    """Every bias–diversity variant, Eq. 14 and the BVC forms, as JSON-ready scalars."""
    from estimators import bias_diversity, bias_variance_covariance, paper_eq14

    rows = []
    for loss, space, scale in VARIANTS:
        res = bias_diversity(contrib, loss=loss, space=space, scale=scale)
        rows.append({
            "loss": loss, "space": space if loss == "squared" else "-", "scale": scale,
            "units": res.units, "ensemble_loss": res.loss, "bias": res.bias,
            "diversity": res.diversity,
            "max_abs_residual": float(np.abs(res.residual_examples).max()),
            "groups": {g: {"n_members": t.n_members, "bias_part": t.bias_part,
                           "diversity_part": t.diversity_part}
                       for g, t in (res.by_group or {}).items()},
        })
    eq14 = paper_eq14(contrib)
    onehot = np.eye(contrib.n_options)[contrib.labels]
    bvc = bias_variance_covariance(contrib.u, onehot)
    return {"bias_diversity": rows, "paper_eq14": scalars(eq14),
            "bias_variance_covariance": {"mse": bvc.mse, "options": bvc.options.means(),
                                         "examples": bvc.examples.means(),
                                         "eq11_dropped_term_mean":
                                             float(np.mean(bvc.eq11.dropped))}}


def information_terms(contrib, methods=("gaussian", "copula"), random_state=0) -> dict:
    """Theorem 4 / Eq. 13 terms of the centred members, plus the Eq. 12 error bounds."""
    from estimators import information_decomposition
    from infodiv.gaussian import member_variables
    from infodiv.setfunctions import error_bounds, label_entropy

    # Softmax ignores a shift shared by all options: each member carries C − 1 dimensions
    # (DESIGN.md 2.5), the same Helmert-basis variables the curves' information objectives use.
    variables = member_variables(contrib.u)
    h_y = label_entropy(contrib.labels)
    error = float(1.0 - contrib.accuracy())
    out = {"H(Y)_bits": h_y, "model_error": error}
    for method in methods:
        try:
            dec = information_decomposition(variables, contrib.labels, method=method,
                                            random_state=random_state)
        except ValueError as exc:
            out[method] = {"error": str(exc)}
            continue
        lower, upper = error_bounds(dec.joint, h_y, contrib.n_options)
        out[method] = {**dec.to_dict(), "error_lower_bound": float(lower),
                       "error_upper_bound": float(upper)}
    return out


def _markdown(doc: dict) -> str:
    run = doc["run"]
    lines = [f"# Decompositions: {run['model']} on {run['task']}", "",
             f"N = {run['N']} examples, M = {run['M']} members, C = {run['C']} options; "
             f"model accuracy {run['accuracy']:.4f}; max exactness error "
             f"{run['max_exactness_error']:.2e}.", "",
             "## Bias–diversity (Theorem 1; loss = bias − diversity exactly)", "",
             "| loss | space | scale | units | ensemble loss | bias | diversity | max residual |",
             "|---|---|---|---|---|---|---|---|"]
    for r in doc["ensemble"]["bias_diversity"]:
        lines.append(f"| {r['loss']} | {r['space']} | {r['scale']} | {r['units']} | "
                     f"{r['ensemble_loss']:.5g} | {r['bias']:.5g} | {r['diversity']:.5g} | "
                     f"{r['max_abs_residual']:.1e} |")
    e = doc["ensemble"]["paper_eq14"]
    lines += ["", "## Paper Eq. 14 (an approximation, not an identity)", "",
              f"MSE {e['mse']:.5g}, bias {e['bias']:.5g}, implied diversity "
              f"{e['diversity']:.5g}, Krogh–Vedelsby ambiguity {e['ambiguity']:.5g}, "
              f"gap {e['gap']:.3g}.", ""]
    b = doc["ensemble"]["bias_variance_covariance"]
    lines += ["## Bias–variance–covariance (Theorem 3)", "",
              f"Ensemble MSE {b['mse']:.5g}; over options: {_fmt(b['options'])}; over "
              f"examples (Ueda–Nakano): {_fmt(b['examples'])}; mean target term dropped by "
              f"Eq. 11 as printed: {b['eq11_dropped_term_mean']:.5g}.", "",
              "## Information decomposition (Theorem 4, bits)", "",
              f"H(Y) = {doc['information']['H(Y)_bits']:.4f}; measured error "
              f"{doc['information']['model_error']:.4f}.", "",
              "| method | I(U;Y) | relevancy | redundancy | cond. redundancy | diversity | "
              "residual | error bounds (Eq. 12) |", "|---|---|---|---|---|---|---|---|"]
    for method, d in doc["information"].items():
        if not isinstance(d, dict):
            continue
        if "error" in d:
            lines.append(f"| {method} | failed: {d['error']} |||||||")
            continue
        lines.append(f"| {method} | {d['joint']:.4f} | {d['relevancy']:.4f} | "
                     f"{d['redundancy']:.4f} | {d['conditional_redundancy']:.4f} | "
                     f"{d['diversity']:.4f} | {d['residual']:.2e} | "
                     f"[{d['error_lower_bound']:.3f}, {d['error_upper_bound']:.3f}] |")
    lines += ["", "Figures: `junction_curves.png` (Figures 5/7, fixed-scale and logit-lens "
              "readouts), `module_shares.png` (Figure 4).", ""]
    return "\n".join(lines)


def _fmt(d: dict) -> str:
    return ", ".join(f"{k} {v:.4g}" for k, v in d.items())


def decomposition_report(contrib, out, *, random_state=0, info_methods=("gaussian", "copula"),
                         progress: bool = False) -> dict:
    """Compute every decomposition of one run and write ``decompositions.{json,md}`` + figures.

    Parameters
    ----------
    contrib : extraction.Contributions
    out : path
        Output folder (created).
    random_state : int
        Seed of the estimators' jitter.
    info_methods : tuple of str
        Estimators for the information decomposition (``()`` skips it).

    Returns
    -------
    dict
        The JSON document that was written.
    """
    from infodiv.figures import plot_junction_curves, plot_module_shares
    from infodiv.junctions import junction_curves, run_names
    from infodiv.tables import module_shares

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model, task = run_names(contrib.meta)
    curves = {readout: junction_curves(contrib, readout=readout, progress=progress)
              for readout in ("fixed", "logit_lens")}
    plot_junction_curves(list(curves.values()), out / "junction_curves.png")
    shares = module_shares([contrib])
    plot_module_shares(shares, out / "module_shares.png")
    doc = {
        "run": {"model": model, "task": task, "N": contrib.n_examples, "M": contrib.n_members,
                "C": contrib.n_options, "accuracy": contrib.accuracy(),
                "max_exactness_error": float(contrib.exactness_error().max())},
        "ensemble": ensemble_terms(contrib),
        "information": information_terms(contrib, info_methods, random_state)
        if info_methods else {},
        "junction_curves": {k: v.to_dict() for k, v in curves.items()},
        "module_shares": shares.to_records(),
    }
    (out / "decompositions.json").write_text(json.dumps(doc, indent=1, default=_default))
    (out / "decompositions.md").write_text(_markdown(doc))
    return doc


def _default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)
