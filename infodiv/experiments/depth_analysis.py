"""One trained model of the depth grid, analysed on its held-out file (DESIGN.md 2.7–2.9).

For a finished model folder (``<root>/models/<name>/model``) and the root's held-out task
(``heldout.jsonl`` + ``heldout.task.json``, read by the toolkit's task-file reader):

1. exact extraction of the contributions (:func:`infodiv.experiments.sources.extract_heldout`:
   :func:`extraction.extract`, prompts truncated as in training) into
   ``<dest>/contributions/<name>`` (resumable);
2. held-out accuracy of the model's own option logits with its Wilson 95% interval, the
   cross-entropy (nats), the squared-loss (logit space, member scale ``mean``, paper Eq. 8) and
   cross-entropy (scale ``sum``, bits) bias and diversity (:func:`estimators.bias_diversity`),
   and the truncated model after every block: the logit-lens accuracy at every junction and the
   fixed-scale member-subset accuracy beside it (:func:`infodiv.junctions.junction_curves`);
3. the valid information terms (:func:`infodiv.information.valid_terms`): usable information
   I(U;Y) = H(Y) − cross-fitted cross-entropy of the best readout (bits) with its interval and
   bracket, relevancy Σ_m I(U_m;Y), diversity I − relevancy, and the Eq. 12 bounds;
4. the verdict records of the paper's claims through the engine
   (:func:`infodiv.inference.engine.evaluate`, objective :attr:`DepthSettings.objective`): the
   curve claims and the conditional-independence claims (:data:`CLAIM_NAMES`) with B example
   resamples, K label permutations and the power / shuffled-label rates on
   :attr:`DepthSettings.n_power` surrogates of each kind; Theorem 8's bounds (a report, never a
   detection) in a second engine call without power (:data:`REPORT_CLAIMS`);
5. replicates on the example resamples every model of the root shares
   (:func:`infodiv.experiments.intervals.shared_indices`): accuracy, cross-entropy, both diversities
   and the truncated-model curve recomputed on the resampled rows, and usable information as the
   resample mean of the cross-fitted per-example terms ``log2 q(y|u) − log2 p(y)`` (the folds'
   fits kept: the same spread as its own interval). Paired differences across models and
   intervals over seeds and examples are formed from these
   (:mod:`infodiv.experiments.depth_across`).

The result is one JSON per model, ``<dest>/<name>.json``, with the process CPU seconds of each
stage, under one key: the code version (:data:`ANALYSIS_VERSION`), the extraction
(fingerprint), the settings and the shared resamples. A rerun reuses a stored analysis of the
same key and recomputes one of another key whole (:func:`analyse_model`).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..claims import claim_names
from .checks import at_least, check_int_fields, non_negative, positive

__all__ = ["DepthSettings", "CLAIM_NAMES", "REPORT_CLAIMS", "ANALYSIS_VERSION", "model_info",
           "point_figures", "resample_figures", "information", "claims_for", "verdicts",
           "report_verdicts", "analyse_model", "analyse_run", "mixed_figures", "mixed_hops"]

#: the code version of a per-model JSON, part of its key: bumped whenever what it holds or how
#: any of it is computed changes (a stored analysis of another key is recomputed whole)
ANALYSIS_VERSION = 3
#: claims tested on every model: the registered curve and control claims, in report order
CLAIM_NAMES = claim_names(("curve", "control"))
#: report-only claims (no detection, no power): their own engine call
REPORT_CLAIMS = claim_names("report")


@dataclass(frozen=True)
class DepthSettings:
    """Sizes of the per-model analysis.

    Parameters
    ----------
    n_bootstrap : B example resamples of the engine (everything refitted), >= 20
    n_permutations : K label permutations of the engine's null, >= 39 (p can fall below 0.05)
    n_power : surrogates of each kind for the power and shuffled-label rates (0 skips)
    n_mc : engine reruns on the unchanged rows (estimate, Monte-Carlo error), >= 2
    n_orders : random member orders per replicate
    n_triples : nested DR chains (A ⊂ B, x) of the chain claims
    report_resamples : B = K of the Theorem 8 report through the engine (every replicate
        refits usable information), >= 20; 0: its bounds from one fit on all rows (the
        claim's own statistic, no resampling)
    resamples : shared example resamples for the across-model intervals, >= 20
    objective : set function of the claims (``infodiv.setfunctions.OBJECTIVES``)
    random_state : seed of every resampling
    """

    n_bootstrap: int = at_least(20, 100)
    n_permutations: int = at_least(39, 99)
    n_power: int = non_negative(20)
    n_mc: int = at_least(2, 2)
    n_orders: int = at_least(2, 10)
    n_triples: int = positive(30)
    report_resamples: int = at_least(20, 20, or_zero=True)   # 0: Theorem 8's bounds from one fit
    resamples: int = at_least(20, 100)
    objective: str = "accuracy_calibrated"
    random_state: int = non_negative(0)

    def __post_init__(self):
        check_int_fields(self)
        from infodiv.setfunctions import OBJECTIVE_NAMES

        if self.objective not in OBJECTIVE_NAMES:
            raise ValueError(f"objective must be one of {list(OBJECTIVE_NAMES)}, got "
                             f"{self.objective!r}")


def model_info(record: dict, hops_task: dict) -> dict:
    """The grid coordinates of a model from its ``zoo.json`` ``record`` and the root's task."""
    keys = ("model", "depth", "repeats", "shared", "seed", "width", "params", "executions",
            "n_members")
    out = {"task": "hops", "hops": int(hops_task["hops"])}
    out.update({k: record.get(k) for k in keys})
    out["steps"] = record.get("step")
    out["train_wall_s"] = record.get("wall_time_s")
    out["train_heldout_accuracy"] = (record.get("heldout") or {}).get("accuracy")
    return out


def point_figures(run, *, curves: bool = True) -> dict:
    """Accuracy, cross-entropy (nats), Eq. 8 squared-loss and cross-entropy bias/diversity and
    (``curves``) the truncated-model and member-subset accuracy at every junction of ``run``."""
    from estimators import bias_diversity

    from ..junctions import junction_curves

    u, y, b = run.u, run.labels, run.bias
    z = np.asarray(run.logits, np.float64)
    z = z - z.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    sq = bias_diversity(u, y, loss="squared", space="logit", scale="mean", bias=b)
    ce = bias_diversity(u, y, loss="cross_entropy", scale="sum", bias=b)
    out = {"accuracy": float((run.logits.argmax(1) == y).mean()),
           "cross_entropy": float(-logp[np.arange(len(y)), y].mean()),
           "sq_bias": float(sq.bias), "sq_diversity": float(sq.diversity),
           "ce_bias": float(ce.bias), "ce_diversity": float(ce.diversity)}
    if curves:
        lens = junction_curves(run, readout="logit_lens", scale="sum", cross_entropy=False)
        fixed = junction_curves(run, readout="fixed", scale="sum", cross_entropy=False)
        out.update(k=[int(k) for k in lens.k], junction_names=list(lens.names),
                   truncated_accuracy=[float(a) for a in lens.accuracy],
                   subsets_accuracy=[float(a) for a in fixed.accuracy])
    return out


def mixed_figures(run, hops) -> dict:
    """Held-out accuracy of the model's own option logits on the mixed held-out set (questions
    of 1..K hops; ``hops[i]`` of example i), overall and per hop count, each with its Wilson
    95% interval."""
    from infodiv.inference.power import wilson_interval

    hops = np.asarray(hops)
    right = run.logits.argmax(1) == run.labels

    def cell(mask):
        k, n = int(right[mask].sum()), int(mask.sum())
        return {"n": n, "accuracy": k / n, "accuracy_wilson95": [float(v) for v in
                                                                 wilson_interval(k, n)]}

    return {**cell(np.ones(len(hops), bool)),
            "by_hops": {str(h): cell(hops == h) for h in sorted(set(hops.tolist()))}}


#: figures with one value per shared resample (curves: one per junction)
RESAMPLED = ("accuracy", "cross_entropy", "sq_diversity", "ce_diversity", "usable_information",
             "truncated_accuracy")


def resample_figures(run, indices, pointwise) -> dict:
    """``{figure: [B] or [B, J]}`` of :data:`RESAMPLED` on ``run.take(idx)`` for every resample
    ``idx``; usable information = mean of ``pointwise`` (per-example bits) over ``idx``."""
    rows = [point_figures(run.take(idx)) for idx in indices]
    pw = np.asarray(pointwise, np.float64)
    out = {name: [r[name] for r in rows] for name in RESAMPLED if name != "usable_information"}
    out["usable_information"] = [float(pw[idx].mean()) for idx in indices]
    return out


def information(run, *, random_state: int = 0) -> tuple[dict, np.ndarray]:
    """:func:`infodiv.information.valid_terms` of the whole member vectors (bits, the model's
    constant logit offset given to the ``own`` readout) and the per-example terms of the same
    usable-information fit (:func:`estimators.usable_information`, same folds)."""
    from estimators import usable_information

    from ..information import valid_terms

    terms = valid_terms(run.u, run.labels, bias=run.bias, random_state=random_state)
    ui = usable_information(run.u, run.labels, bias=run.bias, random_state=random_state)
    keep = ("joint", "joint_interval", "joint_lower", "joint_upper", "joint_upper_kind", "h_y",
            "relevancy", "relevancy_interval", "diversity", "diversity_interval",
            "relevancies", "joint_folds", "family_values", "error_lower_bound",
            "error_upper_bound", "n_samples")
    doc = {k: terms.get(k) for k in keep}
    doc["pointwise_mean"] = float(np.mean(ui.pointwise))
    return doc, np.asarray(ui.pointwise, np.float64)


def claims_for(run) -> tuple:
    """The claims of :data:`CLAIM_NAMES`; below M = 4 members the planted-synergy matched case
    (two synergistic pairs by default) plants the one pair that fits (M = 3: the depth-1 model)."""
    import dataclasses

    from ..claims import get_claims

    out = []
    for c in get_claims(CLAIM_NAMES):
        if c.surrogate == "planted_synergy" and run.n_members < 4:
            base = c.surrogate_kwargs
            c = dataclasses.replace(c, surrogate_kwargs=lambda r, d, base=base: {
                **(base(r, d) if base else {}), "n_pairs": r.n_members // 2})
        out.append(c)
    return tuple(out)


def verdicts(run, settings: DepthSettings, *, progress: bool = False) -> tuple[dict, dict]:
    """Verdict records (``VerdictRecord.to_dict``) of :func:`claims_for` and
    :data:`REPORT_CLAIMS` (:func:`report_verdicts`) on ``run`` and the engine's CPU seconds."""
    from ..inference.engine import evaluate

    s = settings
    main = evaluate(run, claims_for(run), _design(s), n_bootstrap=s.n_bootstrap,
                    n_permutations=s.n_permutations, n_mc=s.n_mc, n_power=s.n_power,
                    random_state=s.random_state, progress=progress)
    out = {name: r.to_dict() for name, r in main["records"].items()}
    cpu = {"claims": float(sum(main["cpu_s"].values())),
           "claims_power": float(main["cpu_s"]["power"])}
    reports, cpu["report_claims"] = report_verdicts(run, settings, progress=progress)
    return {**out, **reports}, cpu


def report_verdicts(run, settings: DepthSettings, *, progress: bool = False) -> tuple[dict,
                                                                                     float]:
    """Records of :data:`REPORT_CLAIMS` on ``run`` (no power: a report never detects) and
    their CPU seconds."""
    from ..claims import get_claims
    from ..inference.engine import evaluate

    s = settings
    t0 = time.process_time()
    if s.report_resamples:
        rep = evaluate(run, get_claims(REPORT_CLAIMS), _design(s), n_bootstrap=s.report_resamples,
                       n_permutations=s.report_resamples, n_mc=s.n_mc, n_power=0,
                       random_state=s.random_state, progress=progress)
        out = {name: r.to_dict() for name, r in rep["records"].items()}
    else:
        out = {name: _one_fit_report(run, name, s.random_state) for name in REPORT_CLAIMS}
    return out, time.process_time() - t0


def _design(s: DepthSettings):
    """The engine's design of ``s``: objective, random orders and DR chains."""
    from ..inference.claim import Design

    return Design(s.objective, n_orders=s.n_orders, n_triples=s.n_triples)


def _one_fit_report(run, name: str, random_state: int) -> dict:
    """A report-only claim's record from its statistic on all rows (no resampling): the
    claim's own ``statistic`` and ``decide`` on one replicate of the unchanged run."""
    from ..claims import get_claims
    from ..inference.claim import Design, Replicate

    claim = get_claims([name])[0]
    value = claim.statistic(Replicate(run, Design(), np.random.default_rng(random_state)))
    detected, summary = claim.decide(value, None, None, 0.05)
    return {"claim": name, "theorem": claim.theorem, "objective": None,
            "estimate": summary["estimate"], "interval": None, "p": summary.get("p"),
            "detected": bool(detected), "calibrated": True, "finding": False, "power": None,
            "false_positive": None, "n_bootstrap": 0, "n_permutations": 0,
            "sentence": claim.sentence, "extra": summary.get("extra", {}),
            "text": "report only, from one fit on all rows (no resampling)"}


def _digest(indices) -> str:
    return hashlib.sha256(np.concatenate(indices).astype(np.int64).tobytes()).hexdigest()


def _stored(path, log=None) -> dict | None:
    """The analysis JSON stored at ``path`` (None: absent, unreadable, or not as the toolkit
    wrote it: :func:`infodiv.experiments.owned.own_json`, ``log`` told why)."""
    from .owned import own_json

    return own_json(path, log, "recomputed whole")


def analyse_model(folder, held, dest, settings: DepthSettings, hops_task: dict, indices, *,
                  progress: bool = False, log=print, mixed=None) -> tuple[dict, bool]:
    """The analysis of the finished model ``folder`` on the held-out task ``held`` (module
    docstring), stored in ``dest/<name>.json``; returns ``(analysis, reused)``.

    Reused without recomputation when the stored file has the same key: code version
    (:data:`ANALYSIS_VERSION`), extraction fingerprint, ``settings`` and a digest of the shared
    resamples ``indices``; a stored file of another key is recomputed whole (the log says which
    parts of the key differ).
    """
    from .sources import extract_heldout

    folder, dest = Path(folder), Path(dest)
    record = json.loads((folder / "zoo.json").read_text())
    name = record["model"]
    c0 = time.process_time()
    run = extract_heldout(folder, held, dest / "contributions" / name, progress=progress)
    mixed_run = None if mixed is None else extract_heldout(
        folder, mixed, dest / "contributions_mixed" / name, progress=progress)
    return analyse_run(run, record, dest, settings, hops_task, indices,
                       extract_cpu_s=time.process_time() - c0, progress=progress, log=log,
                       mixed=None if mixed is None else (mixed_run, mixed_hops(mixed)))


def mixed_hops(task) -> list[int]:
    """Hops of every example of a mixed held-out task (from its ``pairs`` field)."""
    from .hops import example_hops

    return [example_hops(r["pairs"]) for r in task.records]


def analyse_run(run, record: dict, dest, settings: DepthSettings, hops_task: dict, indices, *,
                extract_cpu_s: float = 0.0, progress: bool = False,
                log=print, mixed=None) -> tuple[dict, bool]:
    """Steps 2–5 of the module docstring on the extracted contributions ``run`` of the model
    whose ``zoo.json`` is ``record`` (from its checkpoint, :func:`analyse_model`, or from a
    committed bundle, :mod:`infodiv.experiments.depth_bundle`), stored in ``dest/<name>.json``
    under the same key; returns ``(analysis, reused)``. ``mixed``: ``(contributions, hops per
    example)`` of the mixed held-out set (:func:`mixed_figures`), when the grid has one."""
    dest, name = Path(dest), record["model"]
    dest.mkdir(parents=True, exist_ok=True)
    c0 = time.process_time() - extract_cpu_s
    c_extract = extract_cpu_s
    if run.n_members != record["n_members"]:
        raise ValueError(f"{name}: extraction gave M = {run.n_members} members, its zoo.json "
                         f"says {record['n_members']}")
    key = {"version": ANALYSIS_VERSION, "fingerprint": run.meta.get("fingerprint"),
           "settings": asdict(settings), "indices": _digest(indices)}
    if mixed is not None:       # only then: a grid without it keeps its stored analyses
        key["mixed"] = mixed[0].meta.get("fingerprint")
    path = dest / f"{name}.json"
    stored = _stored(path, log)
    if stored is not None and stored.get("key") == key:
        return stored, True
    if stored is not None:
        log(f"  {name}: stored analysis of another key ({_key_change(stored.get('key'), key)}); "
            "recomputed whole")
    from infodiv.inference.power import wilson_interval

    doc = {"key": key, "model": model_info(record, hops_task), "n_examples": run.n_examples,
           "max_exactness_error": float(run.meta.get("max_exactness_error", np.nan))}
    cpu = {"extraction": c_extract}
    t = time.process_time()
    doc["figures"] = point_figures(run)
    correct = int((run.logits.argmax(1) == run.labels).sum())
    doc["figures"]["accuracy_wilson95"] = [float(v) for v in
                                           wilson_interval(correct, run.n_examples)]
    if mixed is not None:
        doc["mixed"] = mixed_figures(*mixed)
    doc["information"], pointwise = information(run, random_state=settings.random_state)
    cpu["figures_information"] = time.process_time() - t
    log(f"  {name}: accuracy {doc['figures']['accuracy']:.4f}, I(U;Y) "
        f"{doc['information']['joint']:.3f} bits; claims (B = {settings.n_bootstrap}, "
        f"K = {settings.n_permutations}, power {settings.n_power})")
    doc["verdicts"], engine_cpu = verdicts(run, settings, progress=progress)
    cpu.update(engine_cpu)
    t = time.process_time()
    doc["resamples"] = resample_figures(run, indices, pointwise)
    cpu["resamples"] = time.process_time() - t
    cpu["total"] = time.process_time() - c0
    doc["cpu_s"] = cpu
    return _write(path, doc), False


def _key_change(stored, key: dict) -> str:
    """The parts of ``key`` that a stored key differs in (``code version``, ``fingerprint``,
    ``settings``, ``indices``, or the fields only the stored key has)."""
    stored = stored if isinstance(stored, dict) else {}
    names = {"version": "code version"}
    parts = [names.get(k, k) for k in key if stored.get(k) != key[k]]
    parts += [k for k in stored if k not in key]
    return ", ".join(parts)


def _write(path: Path, doc: dict) -> dict:
    """``doc`` written to ``path`` (JSON) over the toolkit's own file only
    (:func:`infodiv.experiments.owned.write_owned`) and read back."""
    from infodiv.reports.serialize import jsonable

    from .owned import DEPTH, write_owned

    write_owned(path.parent, {path.name: json.dumps(jsonable(doc), indent=1)}, DEPTH)
    return json.loads(path.read_text())
