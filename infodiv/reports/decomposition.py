"""One run's ensemble and information decompositions, written as JSON, markdown and figures.

``decomposition_report(contrib, out)`` gathers, for one ``Contributions`` run:

- the exact bias–diversity decompositions of Theorem 1 for every variant
  (:func:`estimators.bias_diversity`: squared loss in logit and probability space, cross-entropy;
  member scale ``"mean"`` — the paper — and ``"sum"`` — whose ensemble is the model itself),
  with the embedding / attention / MLP parts of Eq. 9–10 and the largest per-example residual of
  the identity;
- the paper's Eq. 14 approximation with its gap (:func:`estimators.paper_eq14`);
- the bias–variance–covariance forms of Theorem 3 (:func:`estimators.bias_variance_covariance`,
  with the run's constant member, as every other decomposition) with the target term that
  Eq. 11 as printed drops;
- junction curves (fixed-scale and logit-lens readouts, Figures 5/7) and the module shares
  (Figure 4);
- the information decomposition I(U;Y) = relevancy + diversity (Theorem 4, Eq. 13) of the
  whole member vectors by the valid usable-information estimator (bracket ≤ H(Y), relevancies
  per member, D by the identity with its paired bootstrap and label null), Gaussian / copula
  terms only when asked by name and labelled model-based
  (:mod:`infodiv.inference.information_terms`), next to the Eq. 12 error bounds and the
  measured error of the model.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from pathlib import Path

import numpy as np

from estimators import bias_diversity, bias_variance_covariance, paper_eq14

from ..inference.information_terms import VALID_METHOD, depth_inference, information_inference
from ..runs import ensemble_arrays, run_names
from .information_md import depth_lines, information_lines
from .markdown import fmt_pairs, md_table
from .serialize import write_json
from .variant_figures import figure3_lines, figures_in_every_variant

__all__ = ["VARIANTS", "ensemble_terms", "information_terms", "decomposition_report",
           "decomposition_markdown"]

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
    arrays = ensemble_arrays(contrib)
    rows = []
    for loss, space, scale in VARIANTS:
        res = bias_diversity(arrays["u"], arrays["labels"], loss=loss, space=space,
                             scale=scale, bias=arrays["bias"], groups=arrays["groups"])
        rows.append({
            "loss": loss, "space": space if loss == "squared" else "-", "scale": scale,
            "units": res.units, "ensemble_loss": res.loss, "bias": res.bias,
            "diversity": res.diversity,
            "max_abs_residual": float(np.abs(res.residual_examples).max()),
            "groups": {g: {"n_members": t.n_members, "bias_part": t.bias_part,
                           "diversity_part": t.diversity_part}
                       for g, t in (res.by_group or {}).items()},
        })
    eq14 = paper_eq14(arrays["u"], arrays["labels"], bias=arrays["bias"])
    bvc = bias_variance_covariance(arrays["u"], arrays["labels"], bias=arrays["bias"])
    return {"bias_diversity": rows, "paper_eq14": scalars(eq14),
            "bias_variance_covariance": {"mse": bvc.mse, "options": bvc.options.means(),
                                         "examples": bvc.examples.means(),
                                         "eq11_dropped_term_mean":
                                             float(np.mean(bvc.eq11.dropped))}}


def information_terms(contrib, methods=(VALID_METHOD,), random_state=0, *,
                      inference: int = 0, n_null: int | None = None) -> tuple[dict, dict]:
    """``(information, information_inference)`` of the run: the observed terms by method
    (``{"H(Y)_bits", "model_error", method: terms}``; the usable terms are
    :func:`infodiv.information.valid_terms`' record) and the inference document of
    :func:`infodiv.inference.information_terms.information_inference` (``inference``
    refitted resamples for the model-based methods, ``max(19, inference // 5)`` label
    permutations, each rerunning the whole procedure, unless ``n_null`` says otherwise;
    0: no null)."""
    if n_null is None:
        n_null = max(19, inference // 5) if inference else 0
    inf = information_inference(contrib, methods, n_resamples=max(20, inference),
                                n_null=n_null, seed=random_state)
    out = {"H(Y)_bits": inf["h_y"], "model_error": inf["model_error"]}
    for method, entry in inf["methods"].items():
        if "error" in entry:
            out[method] = {"error": entry["error"]}
        elif method == VALID_METHOD:
            out[method] = entry.pop("terms")
        else:
            names = {"bound_lower": "error_lower_bound", "bound_upper": "error_upper_bound"}
            out[method] = {"validity": entry["validity"],
                           **{names.get(k, k): v["value"] for k, v in entry.items()
                              if isinstance(v, dict)}}
    return out, inf


def decomposition_markdown(doc: dict) -> str:
    """The readable summary of a decomposition document (numbers rounded for reading)."""
    run = doc["run"]
    lines = [f"# Decompositions: {run['model']} on {run['task']}", "",
             f"N = {run['N']} examples, M = {run['M']} members, C = {run['C']} options; "
             f"model accuracy {run['accuracy']:.4f}; max exactness error "
             f"{run['max_exactness_error']:.2e}.", "",
             "## Bias–diversity (Theorem 1; loss = bias − diversity exactly)", ""]
    lines += md_table(["loss", "space", "scale", "units", "ensemble loss", "bias", "diversity",
                       "max residual"],
                      [[r["loss"], r["space"], r["scale"], r["units"],
                        f"{r['ensemble_loss']:.5g}", f"{r['bias']:.5g}",
                        f"{r['diversity']:.5g}", f"{r['max_abs_residual']:.1e}"]
                       for r in doc["ensemble"]["bias_diversity"]])
    e = doc["ensemble"]["paper_eq14"]
    lines += ["", "## Paper Eq. 14 (an approximation, not an identity)", "",
              f"MSE {e['mse']:.5g}, bias {e['bias']:.5g}, implied diversity "
              f"{e['diversity']:.5g}, Krogh–Vedelsby ambiguity {e['ambiguity']:.5g}, "
              f"gap {e['gap']:.3g}.", ""]
    b = doc["ensemble"]["bias_variance_covariance"]
    lines += ["## Bias–variance–covariance (Theorem 3)", "",
              f"Ensemble MSE {b['mse']:.5g}; over options: {fmt_pairs(b['options'])}; over "
              f"examples (Ueda–Nakano): {fmt_pairs(b['examples'])}; mean target term dropped "
              f"by Eq. 11 as printed: {b['eq11_dropped_term_mean']:.5g}.", ""]
    if doc["information"]:
        lines += ["## Information decomposition (Theorem 4, bits)", "",
                  *information_lines(doc)]
    lines += ["", *depth_lines(doc), *figure3_lines(doc)]
    lines += ["", "Figures: `junction_curves.png` (Figures 5/7, fixed-scale and logit-lens "
              "readouts), `module_shares.png` (Figure 4).", ""]
    return "\n".join(lines)


#: example resamples of the information terms and the depth estimand (``infodiv decompose
#: --inference``'s default)
DEFAULT_INFERENCE = 100


def decomposition_report(contrib, out, *, random_state=0, info_methods=(VALID_METHOD,),
                         progress: bool = False, inference: int = DEFAULT_INFERENCE,
                         info_null: int | None = None, every_variant: bool = True) -> dict:
    """Compute every decomposition of one run and write ``decompositions.{json,md}`` + figures.

    Parameters
    ----------
    contrib : extraction.Contributions
    out : path
        Output folder (created).
    random_state : int, default 0
        Seed of the estimators' jitter and copula tie order.
    info_methods : tuple of str
        Estimators for the information decomposition (``()`` skips it): ``"usable"`` (the
        default, valid) and, by name only, the model-based ``"gaussian"`` / ``"copula"``
        (:mod:`infodiv.inference.information_terms`).
    inference : int, default :data:`DEFAULT_INFERENCE`
        Example resamples of the model-based information terms and of the depth estimand
        (truncated model vs member subsets,
        :func:`infodiv.inference.information_terms.depth_inference`), label permutations of
        the depth estimand; the information terms' label null takes ``max(19, inference // 5)``
        permutations (each reruns the whole cross-fitted procedure); 0 skips the nulls and the
        depth estimand.
    info_null : int, optional
        Label permutations of the information terms instead of ``max(19, inference // 5)``
        (0: none; the depth estimand keeps ``inference``).
    every_variant : bool, default True
        Figures 3/5/7 in every variant (logit, probability, Eq. 14; scale mean and sum),
        the Figure-3 p-values from ``max(20, inference)`` example resamples with the series
        recomputed (:func:`infodiv.reports.variant_figures.figures_in_every_variant`;
        seven more figures, several seconds; False skips them: ``infodiv decompose
        --no-every-variant``).

    Returns
    -------
    dict
        The JSON document that was written.
    """
    from ..junctions import junction_curves
    from ..tables import module_shares
    from .figures import plot_junction_curves, plot_module_shares, run_label

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model, task = run_names(contrib.meta)
    curves = {readout: junction_curves(contrib, readout=readout, progress=progress)
              for readout in ("fixed", "logit_lens")}
    plot_junction_curves(list(curves.values()), out / "junction_curves.png")
    shares = module_shares([contrib])
    plot_module_shares(shares, out / "module_shares.png", title=f"{run_label(contrib)}: "
                       "module shares of bias and diversity (logit space, scale=mean)")
    doc = {
        "run": {"model": model, "task": task, "N": contrib.n_examples, "M": contrib.n_members,
                "C": contrib.n_options, "accuracy": contrib.accuracy(),
                "max_exactness_error": float(contrib.exactness_error().max())},
        "ensemble": ensemble_terms(contrib),
        "information": {},
        "junction_curves": {k: v.to_dict() for k, v in curves.items()},
        "module_shares": shares.to_records(),
    }
    if info_methods:
        doc["information"], doc["information_inference"] = information_terms(
            contrib, tuple(info_methods), random_state, inference=inference, n_null=info_null)
    if inference and len(curves["fixed"].k) >= 3:  # the depth estimand, named apart
        doc["depth"] = depth_inference(contrib, n_resamples=inference, n_null=inference,
                                       seed=random_state)
    if every_variant and len(curves["fixed"].k) >= 3:  # Figures 3/5/7 in every variant
        doc["figures_every_variant"] = figures_in_every_variant(
            contrib, out, n_bootstrap=max(20, inference), random_state=random_state)
    write_json(out / "decompositions.json", doc)
    (out / "decompositions.md").write_text(decomposition_markdown(doc))
    return doc
