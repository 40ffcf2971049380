"""``infodiv zoo report``: the study of every finished zoo checkpoint (:func:`study_zoo`) and
its page (:func:`write_zoo_page`), composed by :func:`report_zoo`.

For each finished model (``<root>/models/*/model`` and ``<root>/finetune/*/model``):

1. exact extraction on the 2000 held-out rows with :func:`extraction.extract` into
   ``<out>/contributions/<model>`` (a Contributions run directory, committed; resumable;
   not ``runs/``, which .gitignore ignores at every level);
2. headline figures (:func:`infodiv.experiments.headline.headline`): accuracy and
   cross-entropy of the model's own option logits, every bias-diversity variant of
   :func:`estimators.bias_diversity` (squared loss in logit and probability space,
   cross-entropy; member scale ``mean`` = paper, ``sum`` = the model), the paper's Eq. 14 with
   its gap (:func:`estimators.paper_eq14`) and the information decomposition I(U;Y) =
   relevancy + diversity of the whole member vectors by the valid estimators
   (:func:`infodiv.information.valid_terms`: usable I(U;Y) with its bracket, never above H(Y);
   Gaussian only by name, flagged above H(Y)) and the logit-lens accuracy of every prefix
   (:func:`infodiv.junctions.junction_curves`: the truncated model after each write);
3. the valid information terms with their intervals, label-permutation nulls and D's
   null-corrected value (:func:`infodiv.experiments.headline.information_inference`, from
   :mod:`infodiv.inference.information_terms`);
4. the figures of :mod:`infodiv.experiments.intervals` (probe lower bound on I(U;Y) with its
   label-permutation null, truncated-model curves) on the full run and on stratified example
   resamples shared by every model (``<out>/<model>/zoo_figures.json``, ``replicates.npz``);
   the probe bound and the information terms are centred on their full-sample values
   (:data:`infodiv.experiments.intervals.CENTRED`; the probe's raw resample mean and interval are in
   the record's ``probe_interval``);
5. the toolkit's per-run reports into ``<out>/<model>/``, when ``analyses`` asks for them:
   the decompositions (:func:`infodiv.study.decompose.decomposition_report`: every
   variant, Eq. 14) and the curves report
   (:func:`infodiv.reports.curves.curves_report`) with the claims of
   :data:`infodiv.experiments.analyses.ZOO_CLAIMS` through the inference engine
   (:func:`infodiv.experiments.analyses.curves_settings`: accuracy at B = K = 200 example resamples
   / label permutations with 20 power surrogates of each kind, usable information of the
   calibrated summed readout (``mi_readout``) at B = K = 50 with 10 of each kind, Theorem 8's
   report on the first objective at B = K = 20, by default; the selection verdicts with their
   power: :func:`infodiv.experiments.analyses.run_analyses`).
   ``summary.json`` rows carry the held-out accuracy's Wilson interval (``accuracy_wilson95``)
   and the verdict records of the curves reports of the current settings (others are listed in
   ``across.json`` ``curves_stale``), ``across.json`` the verdict counts
   (:func:`infodiv.experiments.zoo_verdicts.verdict_overview`).

The models come from the checkpoints under ``root`` or, without them, from the committed
contributions and the records of ``<out>/summary.json`` (``from_contributions``;
:mod:`infodiv.experiments.sources`).

The page (:func:`write_zoo_page`): :mod:`infodiv.experiments.summary` and
:mod:`infodiv.experiments.across` aggregate the records across depth and seeds
(seed-and-example intervals, growth laws, Table 1, truncated vs trained depth).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from infodiv.inference.power import wilson_interval

from .analyses import current_curves, curves_settings, reduce_curves, run_analyses
from .headline import cached_figures, zoo_figures
from .sources import from_checkpoints
from .sources import from_contributions as from_contributions_sources

__all__ = ["ZooSettings", "ZooStudy", "zoo_sources", "study_zoo", "write_zoo_page",
           "report_zoo", "curves_settings", "PAGE_FILES", "MODEL_FILES", "check_outputs"]

#: the files of the page in ``out`` (``out/README.md`` only where ``README.template.md`` is)
PAGE_FILES = ("summary.json", "by_depth.json", "across.json", "answer.json", "summary.md",
              "depth.png", "depth_params.png", "README.md")
#: the cached figures of a model's folder ``out/<model>/``
MODEL_FILES = ("figures.json", "zoo_figures.json", "replicates.npz", "replicates.json",
               "usable_information_replicates.npz", "usable_information_replicates.json")


@dataclass(frozen=True)
class ZooSettings:
    """What the zoo report computes for every model (the options of ``infodiv zoo report``).

    Parameters
    ----------
    analyses : the toolkit's per-run reports (``"decompose"``, ``"curves"``: :func:`run_analyses`)
    curves : the :func:`curves_settings` dict (None: its defaults)
    info_method : estimator of the headline information terms (``"usable"``; a model-based one
        by name; None skips them)
    n_bootstrap, n_permutations : sizes of
        :func:`~infodiv.experiments.headline.information_inference` (both 0: skipped)
    n_resamples : stratified example resamples shared by every model (0 skips the intervals
        over examples)
    probe_null : label permutations of the probe bound
    info_null : 0 skips the information replicates across depth (any other value computes them:
        :func:`infodiv.experiments.intervals.information_replicates`)
    reduced : model-name substrings whose inference runs at ``reduced_size`` resamples /
        permutations (information terms, probe null, curve inference, decompose): the CPU
        budget of the M = 61 model, recorded in its row as ``reduced_inference``
    reduced_curves : the curve objectives ``reduced`` cuts (None: all)
    """

    analyses: tuple = ("decompose", "curves")
    curves: dict = field(default_factory=curves_settings)
    info_method: str | None = "usable"
    n_bootstrap: int = 200
    n_permutations: int = 19
    n_resamples: int = 100
    probe_null: int = 50
    info_null: int = 5
    reduced: tuple = ()
    reduced_size: int = 20
    reduced_curves: tuple | None = None

    def __post_init__(self):
        if self.curves is None:
            object.__setattr__(self, "curves", curves_settings())

    def is_reduced(self, name: str) -> bool:
        return any(part in name for part in self.reduced)


@dataclass
class ZooStudy:
    """What :func:`study_zoo` computed: one record per model (the ``summary.json`` rows), each
    model's point figures and replicates on the shared resamples, the shared resamples
    (None: no intervals over examples) and the finished checkpoints left out (``skip``)."""

    records: list = field(default_factory=list)
    points: dict = field(default_factory=dict)
    replicates: dict = field(default_factory=dict)
    indices: list | None = None
    skipped: list = field(default_factory=list)


def zoo_sources(root, out, *, data_dir=None, heldout=None, from_contributions: bool = False,
                progress: bool = True, adopt: bool = False,
                log=print) -> tuple[list, np.ndarray | None]:
    """The models of the report and the held-out labels they are scored on (None: the first
    model's own): the finished checkpoints of ``root`` extracted on the 2000 held-out rows
    (``heldout`` replaces them: tests) or, ``from_contributions``, the records of
    ``out/summary.json`` and their committed contributions ``out/contributions/<model>``
    (:func:`infodiv.experiments.sources.from_contributions`, validated and checked against
    their manifests before any work; ``adopt``: folders extracted before manifests)."""
    from .data import zoo_tasks

    if from_contributions:
        return from_contributions_sources(Path(out), root=root, adopt=adopt, log=log), None
    held = zoo_tasks(data_dir)[1] if heldout is None else heldout
    return from_checkpoints(root, Path(out), held, progress=progress), held.labels


def study_zoo(sources, labels, out, settings: ZooSettings, *, only=None, skip=(),
              log=print) -> ZooStudy:
    """Extraction and analyses of every model of ``sources`` (:func:`zoo_sources`) into
    ``out``, each figure cached per model. ``only``: model-name substrings; the other models
    are passed over. ``skip``: model-name substrings left out of the study (listed in
    ``skipped``)."""
    from .intervals import shared_indices

    out = Path(out)
    study = ZooStudy()
    for i, src in enumerate(sources):
        name = src.name
        if only and not any(part in name for part in only):
            continue
        if any(part in name for part in skip):
            study.skipped.append(name)
            log(f"[{i + 1}/{len(sources)}] {name}: skipped (--skip)")
            continue
        log(f"[{i + 1}/{len(sources)}] {name}")
        contrib = src.load()
        if labels is None:   # every model is scored on the same rows: one set of resamples
            labels = contrib.labels
        elif not np.array_equal(labels, contrib.labels):
            raise ValueError(f"{name}: its held-out labels differ from the first model's "
                             f"({contrib.n_examples} vs {len(labels)} rows)")
        if study.indices is None and settings.n_resamples:
            study.indices = shared_indices(labels, settings.n_resamples)
        row, study.points[name], study.replicates[name] = _study_model(
            src, contrib, out, settings, study.indices, log)
        study.records.append(row)
    return study


def _study_model(src, contrib, out: Path, settings: ZooSettings, indices, log):
    """The record of one model, its point figures and its replicates (None: no resamples)."""
    from .intervals import CENTRED, centre_replicates, information_points, resample_interval

    name, s = src.name, settings
    row = dict(src.fields)
    small = s.is_reduced(name)
    b_info = s.reduced_size if small else s.n_bootstrap
    k_info = s.reduced_size if small else s.n_permutations
    row["reduced_inference"] = int(s.reduced_size) if small else None
    row.update(cached_figures(contrib, out / name / "figures.json", s.info_method, b_info,
                              max(19, k_info) if k_info else 0, log=log))
    correct = int((contrib.logits.argmax(1) == contrib.labels).sum())   # Wilson 95%
    row["accuracy_wilson95"] = [float(v) for v in wilson_interval(correct, contrib.n_examples)]
    if contrib.u.shape[1] != row["n_members"]:
        raise ValueError(f"{name}: extraction gave M={contrib.u.shape[1]} members, the "
                         f"record says {row['n_members']}")
    points, reps = zoo_figures(
        contrib, out / name, indices,
        probe_null=max(19, s.reduced_size) if small and s.probe_null else s.probe_null,
        info_null=s.info_null, log=log)
    points.update(information_points(row.get("information_inference")))
    row["probe_bound"] = points["probe_bound"]
    if reps is not None:
        row["probe_interval"] = resample_interval(row["probe_bound"], reps["probe_bound"])
        reps = centre_replicates(points, reps, names=CENTRED)
    row["probe_null"] = points.get("probe_null")
    wanted = reduce_curves(s.curves, s.reduced_size, s.reduced_curves) if small else s.curves
    row["analyses"] = run_analyses(out / "contributions" / name, out / name, s.analyses,
                                   curves=wanted,
                                   decompose_inference=s.reduced_size if small else None,
                                   log=log)
    row["curves"] = current_curves(out / name / "curves", wanted)
    return row, points, reps


def write_zoo_page(study: ZooStudy, out, settings: ZooSettings, log=None) -> None:
    """``out/summary.json`` (the records) and the cross-depth tables, figures and page of
    :func:`infodiv.experiments.summary.write_summary`, with the seed-and-example intervals of
    :mod:`infodiv.experiments.across` (``across.json``) when the study has shared resamples. A
    model whose curves entry is not of the requested settings is listed under ``curves_stale``.
    The page replaces only the files of :data:`PAGE_FILES` the toolkit wrote there
    (:func:`infodiv.outputs.staged_output`; ``log`` told which).
    """
    from infodiv.outputs import staged_output

    from .owned import ZOO
    from .summary import write_summary

    out = Path(out)
    across = None if study.indices is None else _across(study, settings)
    with staged_output(out, ZOO, log=log, expect=page_files(out)) as tmp:
        (tmp / "summary.json").write_text(json.dumps(study.records, indent=1))
        write_summary(study.records, tmp, across=across, template=out / "README.template.md")


def page_files(out) -> tuple:
    """:data:`PAGE_FILES` the page of ``out`` writes (``README.md`` only beside a
    ``README.template.md``)."""
    readme = (Path(out) / "README.template.md").is_file()
    return tuple(n for n in PAGE_FILES if readme or n != "README.md")


def check_outputs(out, names, *, page: bool = True, adopt: bool = False, log=print) -> None:
    """Before any work: every file the report would write into ``out`` (the page, when
    ``page``) and into the folders of the models ``names`` is the toolkit's own (UserError,
    one line, naming the first that is not); ``adopt``: files of those names that no manifest
    lists are first taken as the toolkit's (:func:`infodiv.experiments.owned.adopt_files`)."""
    from .analyses import STAGE_FILES
    from .owned import ZOO, adopt_files, check_owned

    out = Path(out)
    folders = [(out / n, MODEL_FILES) for n in names] + [
        (out / n / stage, files) for n in names for stage, files in STAGE_FILES.items()]
    if adopt:
        for folder, files in ([(out, page_files(out))] if page else []) + folders:
            adopt_files(folder, files, log=log)
    if page:
        from infodiv.outputs import check_conflicts

        check_conflicts(out, ZOO, page_files(out))
    for folder, files in folders:
        check_owned(folder, files)


def _across(study: ZooStudy, settings: ZooSettings) -> dict:
    """The :mod:`infodiv.experiments.across` document of ``study``."""
    from .across import (
        by_depth,
        gap_regression,
        growth_across_depth,
        prefix_curve,
        table1,
        truncated_vs_depth,
    )
    from .zoo_verdicts import verdict_overview

    records, points, reps = study.records, study.points, study.replicates
    unshared = [r for r in records if r.get("width") and not r["shared"]]
    top = max((r["depth"] for r in unshared), default=None)
    deepest = [r["model"] for r in unshared if r["depth"] == top] + [
        r["model"] for r in records if r.get("width") is None]     # + fine-tuned models
    return {"n_resamples": int(settings.n_resamples), "information_null": int(settings.info_null),
            "skipped_checkpoints": study.skipped,
            "by_depth": by_depth(records, points, reps),
            "growth": growth_across_depth(records, points),
            "table1": table1(records, points, reps),
            "gap_regression": {d: gap_regression(records, points, reps, diversity=d)
                               for d in ("sq_diversity", "ce_diversity")},
            "truncated_vs_depth": truncated_vs_depth(records, points, reps),
            "prefix_curves": [prefix_curve(points, reps, m) for m in deepest],
            "verdicts": verdict_overview(records),
            "curves_settings": settings.curves,
            "curves_stale": [r["model"] for r in records if not r["curves"]]}


def report_zoo(root, out, settings: ZooSettings | None = None, *, data_dir=None, heldout=None,
               only=None, skip=(), from_contributions: bool = False, progress: bool = True,
               log=print, adopt: bool = False) -> list[dict]:
    """:func:`study_zoo` of the models of :func:`zoo_sources` and, unless ``only`` picks some
    of them (parallel partial runs; a full run then reuses them), :func:`write_zoo_page`;
    returns the records."""
    settings = settings or ZooSettings()
    sources, labels = zoo_sources(root, out, data_dir=data_dir, heldout=heldout,
                                  from_contributions=from_contributions, progress=progress,
                                  adopt=adopt, log=log)
    check_outputs(out, [s.name for s in sources if (not only or any(p in s.name for p in only))
                        and not any(p in s.name for p in skip)],
                  page=not only, adopt=adopt, log=log)
    study = study_zoo(sources, labels, out, settings, only=only, skip=skip, log=log)
    if not only:
        write_zoo_page(study, out, settings, log=log)
    return study.records
