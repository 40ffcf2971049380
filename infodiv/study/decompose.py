"""The decompositions stage of a study: every ensemble and information decomposition of one
run (Theorems 1–4), computed here and rendered by :mod:`infodiv.reports.decomposition`.

:func:`decomposition_report` gathers, for one ``Contributions`` run:

- the exact bias–diversity decompositions of Theorem 1 for every variant
  (:func:`estimators.bias_diversity`: squared loss in logit and probability space,
  cross-entropy; member scale ``"mean"`` — the paper — and ``"sum"`` — whose ensemble is the
  model itself), with the embedding / attention / MLP parts of Eq. 9–10 and the largest
  per-example residual of the identity;
- the paper's Eq. 14 approximation with its gap (:func:`estimators.paper_eq14`);
- the bias–variance–covariance forms of Theorem 3 (:func:`estimators.bias_variance_covariance`,
  with the run's constant member) with the target term that Eq. 11 as printed drops;
- junction curves (fixed-scale and logit-lens readouts, Figures 5/7) and the module shares
  (Figure 4), and Figures 3/5/7 in every variant with bootstrap p-values (``inference`` 0:
  the correlations without resample, interval or p);
- the information decomposition I(U;Y) = relevancy + diversity (Theorem 4, Eq. 13) of the
  whole member vectors by the valid usable-information estimator (bracket ≤ H(Y), relevancies
  per member, D by the identity with its paired bootstrap and label null), Gaussian / copula
  terms only when asked by name and labelled model-based
  (:mod:`infodiv.inference.information_terms`), next to the Eq. 12 error bounds and the
  measured error of the model.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass

import numpy as np

from estimators import bias_diversity, bias_variance_covariance, paper_eq14

from ..inference.correlations import NO_RESAMPLES
from ..inference.information_terms import VALID_METHOD, depth_inference, information_inference
from ..runs import ensemble_arrays, run_names
from .settings import DecomposeSettings

__all__ = ["VARIANTS", "DEFAULT_INFERENCE", "ensemble_terms", "information_terms",
           "variant_correlations", "decomposition_report"]

VARIANTS = (
    ("squared", "logit", "mean"),
    ("squared", "logit", "sum"),
    ("squared", "probability", "mean"),
    ("squared", "probability", "sum"),
    ("cross_entropy", "logit", "mean"),
    ("cross_entropy", "logit", "sum"),
)
#: example resamples of the information terms and the depth estimand (the default of
#: :attr:`infodiv.study.settings.DecomposeSettings.n_resamples`, ``infodiv decompose
#: --inference``)
DEFAULT_INFERENCE = DecomposeSettings.n_resamples


def _resamples(inference: int) -> int:
    """The example resamples of a stage asked for ``inference``: 0 (none: point estimates
    only) or at least 20 (a percentile interval needs them)."""
    return max(20, int(inference)) if inference else 0


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
    refitted resamples for the model-based methods, 0: their observed values without
    intervals; ``max(19, inference // 5)`` label permutations, each rerunning the whole
    procedure, unless ``n_null`` says otherwise; 0: no null)."""
    if n_null is None:
        n_null = max(19, inference // 5) if inference else 0
    inf = information_inference(contrib, methods, n_resamples=_resamples(inference),
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


def variant_correlations(contrib, *, n_bootstrap: int = 100, leave_last=(1, 5),
                         random_state=0) -> tuple[dict, dict]:
    """Figures 3/5/7 in every variant: ``(record, curves)``. ``record`` holds the Figure-3
    correlation rows (:func:`infodiv.inference.correlations.junction_correlations`: example
    bootstrap with the series recomputed, the last 1 and 5 junction points left out beside
    them; ``n_bootstrap`` 0: r only, no resample, interval or p, and ``no_interval`` says
    why) and the figure files; ``curves`` the junction curves (fixed-scale and logit-lens
    readouts) of every non-default variant, for
    :func:`infodiv.reports.variant_figures.draw_variant_figures`."""
    from ..inference.correlations import VARIANTS as CURVE_VARIANTS
    from ..inference.correlations import junction_correlations
    from ..junctions import junction_curves
    from ..reports.variant_figures import DEFAULT_VARIANT, variant_file

    curves = {name: [junction_curves(contrib, readout=r, cross_entropy=False, **kw)
                     for r in ("fixed", "logit_lens")]
              for name, kw in CURVE_VARIANTS.items() if kw != DEFAULT_VARIANT}
    res = junction_correlations(contrib, variants=tuple(CURVE_VARIANTS), leave_last=leave_last,
                                n_bootstrap=n_bootstrap, random_state=random_state)
    files = [variant_file(name) for name in CURVE_VARIANTS] + ["figure3_variants.png"]
    record = {"rows": res["rows"], "n_points": res["n_points"], "n_bootstrap": n_bootstrap,
              "leave_last": res["leave_last"], "files": files,
              "p_value": "example bootstrap, series recomputed: min(1, 2 min(#{r_b <= 0} + 1, "
                         "#{r_b >= 0} + 1) / (B + 1))"}
    if not n_bootstrap:
        record.update(p_value=None, no_interval=NO_RESAMPLES)
    return record, curves


def decomposition_report(contrib, out, *, random_state=0, info_methods=(VALID_METHOD,),
                         progress: bool = False, inference: int = DEFAULT_INFERENCE,
                         info_null: int | None = None, every_variant: bool = True) -> dict:
    """Compute every decomposition of one run (module docstring) and write
    ``decompositions.{json,md}`` and the figures to ``out``
    (:func:`infodiv.reports.decomposition.write_decomposition`).

    Parameters
    ----------
    contrib : extraction.Contributions
    out : path
        Output folder (created).
    random_state : int, default 0
        Seed of the estimators' folds and resamples.
    info_methods : tuple of str
        Estimators for the information decomposition (``()`` skips it): ``"usable"`` (the
        default, valid) and, by name only, the model-based ``"gaussian"`` / ``"copula"``
        (:mod:`infodiv.inference.information_terms`).
    inference : int, default :data:`DEFAULT_INFERENCE`
        Example resamples of the model-based information terms (0: their observed values
        only, without intervals), of Figure 3 in every variant and of the depth estimand
        (truncated model vs member subsets,
        :func:`infodiv.inference.information_terms.depth_inference`), label permutations of
        the depth estimand; the information terms' label null takes ``max(19, inference // 5)``
        permutations (each reruns the whole cross-fitted procedure); 0 draws no resample
        anywhere (point estimates only, recorded with ``n_bootstrap`` 0 and intervals and p
        None) and skips the nulls (unless ``info_null``) and the depth estimand.
    info_null : int, optional
        Label permutations of the information terms instead of ``max(19, inference // 5)``
        (0: none; the depth estimand keeps ``inference``).
    every_variant : bool, default True
        Figures 3/5/7 in every variant (logit, probability, Eq. 14; scale mean and sum),
        the Figure-3 p-values from ``inference`` example resamples (at least 20) with the
        series recomputed, none with ``inference`` 0: r only (:func:`variant_correlations`;
        seven more figures, several seconds; False skips them:
        ``infodiv decompose --no-every-variant``).

    Returns
    -------
    dict
        The JSON document that was written.
    """
    from ..junctions import junction_curves
    from ..reports.decomposition import write_decomposition
    from ..reports.figures import run_label
    from ..tables import module_shares

    model, task = run_names(contrib.meta)
    curves = {readout: junction_curves(contrib, readout=readout, progress=progress)
              for readout in ("fixed", "logit_lens")}
    shares = module_shares([contrib])
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
    variants = None
    if every_variant and len(curves["fixed"].k) >= 3:  # Figures 3/5/7 in every variant
        doc["figures_every_variant"], variants = variant_correlations(
            contrib, n_bootstrap=_resamples(inference), random_state=random_state)
    write_decomposition(doc, out, junction=curves, shares=shares, variant_curves=variants,
                        title=run_label(contrib))
    return doc
