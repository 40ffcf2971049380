"""The figures of one zoo model, each cached beside it (``<out>/<model>/``).

:func:`headline`: accuracy, cross-entropy, every bias-diversity variant, Eq. 14, the information
decomposition and the logit-lens accuracy of every prefix; :func:`information_inference`: the
valid information terms with their intervals and label-permutation nulls; :func:`zoo_figures`:
the probe bound with its null and the replicates on the example resamples every model shares.
A cached file is reused when its key (the run's fingerprint and the settings) is unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

__all__ = ["headline", "information_inference", "cached_figures", "zoo_figures"]


def _cross_entropy(logits, labels) -> float:
    z = np.asarray(logits, np.float64)
    z = z - z.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    return float(-logp[np.arange(len(labels)), labels].mean())


def headline(contrib, *, info_method: str = "usable", random_state: int = 0) -> dict:
    """Accuracy, cross-entropy (nats), bias-diversity variants (their ``units``: cross-entropy
    variants in bits), Eq. 14, information terms (bits): ``"usable"`` (default) the valid
    I(U;Y) with its interval and bracket, relevancy and D; a model-based method by name
    (``"gaussian"``, ...) with the flag I(U;Y) > H(Y)."""
    from estimators import bias_diversity, information_decomposition, paper_eq14
    from infodiv.information import member_variables
    from infodiv.junctions import junction_curves

    u, y, b = contrib.u, contrib.labels, contrib.bias
    out = {"n_examples": int(len(y)),
           "accuracy": float((contrib.logits.argmax(1) == y).mean()),
           "cross_entropy": _cross_entropy(contrib.logits, y),
           "max_exactness_error": float(contrib.meta.get("max_exactness_error", np.nan)),
           "exactness_ok": bool(contrib.meta.get("exactness_ok", False))}
    for loss, space, scale in (("squared", "logit", "mean"), ("squared", "logit", "sum"),
                               ("squared", "probability", "mean"),
                               ("squared", "probability", "sum"),
                               ("cross_entropy", "logit", "mean"),
                               ("cross_entropy", "logit", "sum")):
        res = bias_diversity(u, y, loss=loss, space=space, scale=scale, bias=b)
        key = f"{loss}_{space}_{scale}" if loss == "squared" else f"{loss}_{scale}"
        out[key] = {"loss": float(res.loss), "bias": float(res.bias),
                    "diversity": float(res.diversity), "units": res.units}
    lens = junction_curves(contrib, readout="logit_lens", scale="sum", cross_entropy=False)
    out["logit_lens"] = {"k": [int(k) for k in lens.k], "names": list(lens.names),
                         "accuracy": [float(a) for a in lens.accuracy]}
    eq = paper_eq14(u, y, bias=b)
    out["paper_eq14"] = {k: float(getattr(eq, k))
                         for k in ("mse", "bias", "diversity", "ambiguity", "gap")}
    p_y = np.bincount(y) / len(y)
    h_y = float(-(p_y[p_y > 0] * np.log2(p_y[p_y > 0])).sum())
    if info_method == "usable":
        from infodiv.inference.information_terms import member_bias
        from infodiv.information import valid_terms

        t = valid_terms(u, y, bias=member_bias(contrib), random_state=random_state)
        out["information"] = {"method": "usable", "label_entropy": h_y, **{
            k: _plain(t[k]) for k in ("joint", "joint_interval", "joint_lower", "joint_upper",
                                      "joint_upper_kind", "relevancy", "diversity",
                                      "diversity_interval", "error_lower_bound",
                                      "error_upper_bound")}}
        out["information"]["flag_mi_exceeds_label_entropy"] = bool(t["joint"] > h_y)
    elif info_method:
        var = member_variables(u)
        info = information_decomposition(var, y, method=info_method, random_state=random_state)
        out["information"] = {"method": info_method, "model_based": True, **{
            k: float(getattr(info, k)) for k in ("joint", "relevancy", "redundancy",
                                                 "conditional_redundancy", "diversity",
                                                 "residual")}}
        # DESIGN 2.8 flag: an estimate above H(Y) is an estimator failure, not information
        out["information"].update(label_entropy=h_y, flag_mi_exceeds_label_entropy=bool(
            out["information"]["joint"] > h_y))
    return out


def _plain(x):
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, np.ndarray)):
        return [_plain(v) for v in x]
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    return x


def information_inference(contrib, *, n_bootstrap: int = 200, n_permutations: int = 19,
                          random_state: int = 0) -> dict:
    """The valid information terms of all members with their inference
    (:func:`infodiv.inference.information_terms.valid_inference`): ``{term: summary}`` for
    ``joint`` (usable I(U;Y): value, interval, bracket, label-null p), ``relevancy`` and
    ``diversity`` (paired bootstrap interval, label null, ``corrected``), the Eq. 12 bounds
    and ``h_y``. ``n_permutations`` label permutations, each rerunning the whole cross-fitted
    procedure; ``n_bootstrap`` paired resamples of the per-example terms (at least 200)."""
    from infodiv.inference.information_terms import valid_inference

    doc = valid_inference(contrib, n_null=n_permutations, n_boot=max(200, n_bootstrap),
                          seed=random_state)
    doc.pop("terms")
    return _plain(doc)


def _cached_json(path: Path, key: dict, compute, log=None):
    """``compute()`` reused from ``path`` when it was written with the same ``key`` and is as
    the toolkit wrote it (:func:`infodiv.experiments.owned.own_json`; else recomputed, and
    ``log`` told why); written through :func:`infodiv.experiments.owned.write_owned`."""
    from .owned import own_json, write_owned

    cached = own_json(path, log)
    if isinstance(cached, dict) and cached.get("key") == key:
        return cached["value"] if "value" in cached else cached["figures"]
    value = _plain(compute())
    write_owned(path.parent, {path.name: json.dumps({"key": key, "value": value}, indent=1)},
                log=log)
    return value


def cached_figures(contrib, path: Path, info_method, n_bootstrap, n_permutations,
                   log=None) -> dict:
    """:func:`headline` (+ :func:`information_inference`) of a run, reused from ``path`` when
    it was computed from the same run (fingerprint) with the same settings."""
    key = {"fingerprint": contrib.meta.get("fingerprint"), "info_method": info_method,
           "n_bootstrap": int(n_bootstrap), "n_permutations": int(n_permutations)}

    def compute():
        figures = headline(contrib, info_method=info_method)
        if n_bootstrap or n_permutations:
            figures["information_inference"] = information_inference(
                contrib, n_bootstrap=n_bootstrap, n_permutations=n_permutations)
        return figures

    return _cached_json(path, key, compute, log)


def zoo_figures(contrib, path: Path, indices, *, probe_null: int = 50, info_null: int = 5,
                log=None):
    """Point figures of :func:`infodiv.experiments.intervals.model_figures`, the probe bound's
    label-permutation null (``probe_null`` permutations, 0 skips) and the replicates on the
    shared resamples ``indices`` (None skips), with the valid information replicates
    (:func:`infodiv.experiments.intervals.information_replicates`; ``info_null`` 0 skips them), each
    cached under ``path``."""
    from .intervals import cached_replicates, information_replicates, model_figures
    from .intervals import probe_null as null_of_probe

    key = {"fingerprint": contrib.meta.get("fingerprint"), "probe_null": int(probe_null)}

    def compute():
        pts = model_figures(contrib)
        if probe_null:
            pts["probe_null"] = null_of_probe(contrib, n_permutations=probe_null)
        return pts

    points = _cached_json(path / "zoo_figures.json", key, compute, log)
    if indices is None:
        return points, None
    reps = dict(cached_replicates(contrib, path / "replicates.npz", indices, log=log))
    if info_null:
        reps.update(cached_replicates(
            contrib, path / "usable_information_replicates.npz", indices,
            key_extra={"information": "usable"},
            compute=lambda run, idx: information_replicates(run, idx), log=log))
    return points, reps
