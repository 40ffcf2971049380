"""Example-bootstrap replicates of every zoo model's figures, on resamples shared by all models.

Every zoo model (and the fine-tuned SmolLM2) is measured on the same 2000 held-out prompts, so
one list of stratified bootstrap resamples of those prompts (:func:`shared_indices`, seeded)
serves every model: replicate b of model A and replicate b of model B see the same prompts.
Paired differences between models (Table 1) and seed means (across depth) are then computed
replicate by replicate, and an interval over seeds *and* examples resamples seeds on top
(:mod:`infodiv.experiments.across`).

Per replicate :func:`model_figures` recomputes everything on the resampled run, refitting what
is fitted on the examples (the probe): accuracy and cross-entropy (nats) of the model's own
option logits; bias and diversity of the squared loss in logit space at member scale ``mean``
(paper Eq. 8) and of the cross-entropy at scale ``sum`` (the model's own loss; bits),
:func:`estimators.bias_diversity`; the probe lower bound on I(U;Y) in bits
(:class:`infodiv.setfunctions.ProbeSetFunction` on all members: H(Y) − cross-fitted CE of a
logistic probe); the truncated-model (logit-lens) and member-subset accuracy at every junction
and the truncated model's cross-entropy (bits) at every junction
(:func:`infodiv.inference.depth.depth_curves`).

The information figures (:data:`INFORMATION`: usable I(U;Y), relevancy Σ_m I(U_m;Y) and
D = I(U;Y) − Σ_m I(U_m;Y) of the whole member vectors, bits; the valid estimators of
:func:`infodiv.information.valid_terms`) get their own replicates
(:func:`information_replicates`) on the same shared resamples: the cross-fitted procedure is
run once on the full sample and its per-example held-out terms are averaged over each resample
(the paired bootstrap of :func:`estimators.label_decomposition`, with the resamples shared by
every model, so differences between models are paired too). Their points and D's
label-null-corrected value come from the model's ``information_inference``
(:func:`infodiv.experiments.headline.information_inference`); :func:`centre_replicates` shifts every
model's replicates to mean = its point value before any interval is formed (the corrected D's
spread is D's).

The probe bound is refitted on every resample with a cross-fitting split that keeps a
resample's repeated rows in one half (:func:`infodiv.setfunctions.base.duplicate_groups`; a
repeat in both halves was scored by a fit that had seen it, and the intervals sat above their
points). Each half then holds about 0.632 of n/2 distinct rows, so the refitted probe is a
probe trained on fewer examples: its resample mean differs from the full-sample value (lower on
the zoo models). It is therefore centred like the information terms (:data:`CENTRED`); the raw
resample mean and interval are kept beside it (:func:`resample_interval`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

__all__ = ["SCALARS", "CURVES", "INFORMATION", "CENTRED", "model_figures", "ProbeBound",
           "shared_indices", "replicates", "cached_replicates", "probe_null",
           "information_points", "information_replicates",
           "centre_replicates", "resample_interval"]

#: scalar figures of :func:`model_figures` (name: description)
SCALARS = {
    "accuracy": "held-out accuracy",
    "cross_entropy": "cross-entropy of the model's option logits (nats)",
    "sq_bias": "squared-loss bias, logit space, member scale mean (paper Eq. 8)",
    "sq_diversity": "squared-loss diversity, logit space, member scale mean (paper Eq. 8)",
    "ce_bias": "cross-entropy bias, member scale sum (bits)",
    "ce_diversity": "cross-entropy diversity, member scale sum (bits)",
    "probe_bound": "probe lower bound on I(U;Y), all members (bits)",
}
#: information figures (bits, valid estimators): name -> (``information_inference`` term,
#: description); ``*_corrected`` = term minus its label-permutation null mean
INFORMATION = {
    "usable_joint": ("joint", "usable information I(U;Y), cross-fitted"),
    "usable_relevancy": ("relevancy", "relevancy: sum of the members' I(U_m;Y)"),
    "usable_d": ("diversity", "D = I(U;Y) - sum of I(U_m;Y)"),
    "usable_d_corrected": ("diversity", "D, label-null-corrected"),
}
#: curve figures (one value per junction k)
CURVES = ("truncated_accuracy", "subsets_accuracy", "truncated_cross_entropy")
#: figures whose replicates are centred on their full-sample value (:func:`centre_replicates`):
#: bias from the sample, spread from the resamples (module docstring)
CENTRED = (*INFORMATION, "probe_bound")
#: version of :func:`replicates` in its cache key: bumped when a refitted figure's code changes
#: (2: the probe's cross-fitting split keeps a resample's repeated rows in one half,
#: :func:`infodiv.setfunctions.base.duplicate_groups`; version-1 caches are recomputed)
REPLICATES_VERSION = 2


def _cross_entropy_nats(logits, labels) -> float:
    from estimators import bias_diversity

    # the model's own loss: the cross-entropy of one member (the logits themselves), in nats
    return float(bias_diversity(np.asarray(logits, np.float64)[:, None, :], labels,
                                loss="cross_entropy", scale="sum", base="e").loss)


def probe_bound(run, *, random_state=0) -> float:
    """Mean cross-fitted probe score of all members (bits): a lower bound on I(U;Y)."""
    from infodiv.setfunctions import ProbeSetFunction

    f = ProbeSetFunction(run.u, run.labels, random_state=random_state)
    return float(f.scores(np.arange(run.n_members)).mean())


def model_figures(run, *, probe: bool = True) -> dict:
    """Every figure of the module docstring on ``run`` (a Contributions)."""
    from estimators import bias_diversity
    from infodiv.inference.depth import depth_curves

    u, y, b = run.u, run.labels, run.bias
    sq = bias_diversity(u, y, loss="squared", space="logit", scale="mean", bias=b)
    ce = bias_diversity(u, y, loss="cross_entropy", scale="sum", bias=b)
    out = {"accuracy": float((run.logits.argmax(1) == y).mean()),
           "cross_entropy": _cross_entropy_nats(run.logits, y),
           "sq_bias": float(sq.bias), "sq_diversity": float(sq.diversity),
           "ce_bias": float(ce.bias), "ce_diversity": float(ce.diversity),
           "probe_bound": probe_bound(run) if probe else float("nan")}
    dc = depth_curves(run)
    out["truncated_accuracy"] = np.asarray(dc["truncated_model"]["accuracy"], np.float64)
    out["subsets_accuracy"] = np.asarray(dc["member_subsets"]["accuracy"], np.float64)
    out["truncated_cross_entropy"] = np.asarray(dc["truncated_model"]["cross_entropy"],
                                                np.float64)
    out["k"] = np.asarray(dc["k"])
    return out


class ProbeBound:
    """Pipeline ``(run, rng) -> {"probe_bound": bits}`` for :mod:`infodiv.inference` (the probe
    is refitted on every run it gets; larger is more information)."""

    directions = {"probe_bound": "greater"}

    def __call__(self, run, rng) -> dict:
        return {"probe_bound": probe_bound(run)}


def shared_indices(labels, n_bootstrap: int, *, random_state=0) -> list[np.ndarray]:
    """``n_bootstrap`` stratified resamples of the examples, one seeded stream per replicate
    (:func:`estimators.resampling.bootstrap_indices` with the labels as strata); the same labels
    and seed give the same resamples, so every model of the zoo gets the same ones."""
    from estimators.resampling import bootstrap_indices

    if isinstance(n_bootstrap, bool) or int(n_bootstrap) < 20:
        raise ValueError(f"n_bootstrap must be >= 20 for a percentile interval, got "
                         f"{n_bootstrap!r}")
    y = np.asarray(labels)
    seeds = np.random.SeedSequence(random_state).spawn(int(n_bootstrap))
    return [bootstrap_indices(y.size, np.random.default_rng(s), strata=y) for s in seeds]


def replicates(run, indices, *, probe: bool = True) -> dict:
    """``{figure: array [B] (scalars) or [B, K] (curves)}`` of :func:`model_figures` on
    ``run.take(idx)`` for every resample."""
    rows = [model_figures(run.take(idx), probe=probe) for idx in indices]
    return {name: np.asarray([r[name] for r in rows]) for name in (*SCALARS, *CURVES)}


def cached_replicates(run, path, indices, *, probe: bool = True, key_extra=None,
                      compute=None, log=None) -> dict:
    """:func:`replicates` (or ``compute(run, indices)``), reused from ``path`` (npz + json key)
    when computed from the same run (fingerprint), resamples and settings (``key_extra``;
    :func:`replicates` also by :data:`REPLICATES_VERSION`) and both files are as the toolkit
    wrote them (:mod:`infodiv.experiments.owned`: else recomputed, ``log`` told why)."""
    from infodiv.outputs import unverified

    from .owned import own_json, write_owned

    path = Path(path)
    digest = hashlib.sha256(np.concatenate(indices).tobytes()).hexdigest()
    key = {"fingerprint": run.meta.get("fingerprint"), "indices": digest,
           "n_bootstrap": len(indices), "probe": bool(probe), "extra": key_extra}
    if compute is None:
        key["version"] = REPLICATES_VERSION
    meta = path.with_suffix(".json")
    if own_json(meta, log) == key:
        why = unverified(path)
        if why is None:
            with np.load(path) as z:
                return {k: z[k] for k in z.files}
        if log is not None:
            log(f"  {path} {why}; recomputing it")
    reps = (replicates(run, indices, probe=probe) if compute is None
            else compute(run, indices))
    write_owned(path.parent, {path.name: lambda p: np.savez_compressed(p, **reps),
                              meta.name: json.dumps(key)}, log=log)
    return reps


def probe_null(run, *, n_permutations: int = 50, random_state=0) -> dict:
    """Label-permutation null of the probe bound (:func:`infodiv.inference.permutation_null`):
    observed, null mean and interval, p and the null-corrected value."""
    from infodiv.inference import permutation_null

    res = permutation_null(run, ProbeBound(), n_permutations=n_permutations,
                           random_state=random_state, progress=False)
    return res["probe_bound"].to_dict()


def information_points(information_inference) -> dict:
    """:data:`INFORMATION` point values from a model's ``information_inference`` (the observed
    terms and ``observed − null mean`` of its full-sample label-permutation null); NaN where a
    term is missing."""
    doc = information_inference or {}
    out = {}
    for name, (stat, _) in INFORMATION.items():
        cell = doc.get(stat) or {}
        key = "corrected" if name.endswith("_corrected") else "value"
        out[name] = float("nan") if cell.get(key) is None else float(cell[key])
    return out


def information_replicates(run, indices, *, random_state=0) -> dict:
    """``{name: array [B]}`` of the :data:`INFORMATION` figures on every shared resample: the
    valid decomposition (:func:`infodiv.information.valid_terms`) fitted once on ``run``, its
    per-example held-out terms (joint and D) averaged over each resample ``idx`` (module
    docstring); the corrected D gets D's replicates (centred on its own point later)."""
    from estimators.label_decomposition import label_decomposition
    from infodiv.inference.information_terms import member_bias

    dec = label_decomposition(run.u, run.labels, bias=member_bias(run), random_state=random_state)
    joint = np.asarray([dec.joint_pointwise[idx].mean() for idx in indices], np.float64)
    d = np.asarray([dec.diversity_pointwise[idx].mean() for idx in indices], np.float64)
    return {"usable_joint": joint, "usable_relevancy": joint - d, "usable_d": d,
            "usable_d_corrected": d.copy()}


def centre_replicates(points, reps, names=tuple(INFORMATION)) -> dict:
    """``reps`` with every figure in ``names`` shifted to mean ``points[name]`` (replicate
    spread kept, the resamples' own bias removed; NaN replicates ignored in the mean)."""
    out = dict(reps)
    for name in names:
        if name in reps and name in points:
            r = np.asarray(reps[name], np.float64)
            out[name] = r - np.nanmean(r, axis=0) + float(points[name])
    return out


def resample_interval(point: float, reps) -> dict:
    """A figure's full-sample ``point`` against its raw resample replicates ``reps`` [B]: their
    mean, ``bias`` = mean − point, the raw 95% percentile interval, and the centred interval
    (replicates shifted to mean = point, :func:`centre_replicates`: the one the zoo quotes)."""
    r = np.asarray(reps, np.float64)
    r = r[np.isfinite(r)]
    if r.size < 2:
        raise ValueError(f"reps must hold at least 2 finite replicates, got {r.size}")
    mean = float(r.mean())
    raw = [float(q) for q in np.percentile(r, [2.5, 97.5])]
    return {"point": float(point), "resample_mean": mean, "bias": mean - float(point),
            "resample_ci95": raw, "ci95": [q - mean + float(point) for q in raw],
            "n_resamples": int(r.size)}
