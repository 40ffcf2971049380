"""The whole study for every (model, task) pair: :func:`run_study`.

For each pair: extraction (exact per-member contributions; resumable shards flushed every
:data:`SHARD_SIZE` examples) → decompositions (Theorems 1–4, junction curves) → curves
(Theorems 5–8, selection) → one self-contained ``report.html`` with ``summary.json`` /
``summary.csv`` and a one-screen summary; with several pairs, ``<out>/report.html`` covers
them all. Each stage is a function of the settings it reads
(:class:`~infodiv.study.settings.StudySettings`); ``infodiv run`` and ``infodiv demo`` map
their options to those settings and call :func:`run_study`, and so do the experiments.

Every check that can fail on user input (models resolved offline, tasks, device, ``out``
writable, an existing folder holding a different run) runs before any model loads
(:func:`plan_study`). Nothing the toolkit did not write is replaced or removed: each stage
writes into a private folder that reaches its stage folder only when the stage has finished,
with the folder's manifest (:mod:`infodiv.outputs`); a run replaced with ``--overwrite``
loses only the toolkit's files (:meth:`~infodiv.study.runfolder.RunFolder.prepare`), and
the page goes beside ``run.json`` the same way. A finished stage whose key (inputs, settings,
code) is unchanged is skipped, an interrupted extraction resumes. The warnings of each stage
are collected (:func:`~infodiv.warncollect.collect_warnings`): one line per kind, with its
count, at the end of the stage; without ``quiet`` each long stage says when it starts, what it
computes, and how long it took.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from extraction.planning import SHARD_SIZE  # examples per flushed shard (one home)

from ..runfiles import StageFailed, display_path, load_run, model_slug, run_name
from ..warncollect import collect_warnings
from .checks import check_device, check_model, check_out
from .prompt_choice import plan_with_choice
from .prompt_setting import setting_config, setting_suffix
from .runfolder import (
    PAGE_WRITER,
    STAGE_DIRS,
    STAGE_WRITERS,
    RunFolder,
    code_digest,
    shards_done,
    stage_key,
    stage_key_of,
)
from .seeds import SeedPlan
from .settings import StudySettings
from .tasks import study_tasks

__all__ = ["run_study", "plan_study", "StudyResult", "SHARD_SIZE", "decompose_stage",
           "extract_stage", "analysis_stage", "report_stage", "ANALYSIS_STAGES", "write_page"]



@dataclass
class StudyResult:
    """What :func:`run_study` made: the run folders, each one's page, the combined page."""

    folders: list
    pages: list
    combined: Path | None = None


def _no_command(model: str, task: str, absolute: bool = False) -> str:
    return f"infodiv run --model {model} --task {task}"


def plan_study(settings: StudySettings, out, *, overwrite: bool = False,
               command: Callable = _no_command) -> list:
    """Every check that needs no model: ``[(model, task, folder, state)]`` or UserError.
    ``command(model, task, absolute=False)`` is the command line that reruns a pair (kept in
    ``run.json`` and printed on Ctrl-C)."""
    ext = settings.extraction
    check_device(ext.device)
    for model in ext.models:
        check_model(model)
    out = check_out(out)
    tasks = study_tasks(ext, settings.seed)
    names = [model_slug(m) for m in ext.models]
    if len(set(names)) != len(names):
        raise ValueError(f"--model: two models share the run-folder name {names}")
    entries = []
    for model in ext.models:
        for task in tasks:
            config = {"model": str(model), "task": task.name, "n": len(task),
                      "shots": ext.shots, "granularity": ext.granularity,
                      "stratify": bool(ext.stratify), "seed": settings.seed, "dtype": ext.dtype,
                      "max_length": ext.max_length, "data": task.meta.get("data_source")}
            if ext.task_file is not None:   # the file's content and how it is read
                config.update(template=task.template, options=list(task.options),
                              label_field=ext.label_field,
                              task_sha256=task.meta.get("sha256"))
            config.update(setting_config(ext))   # chat template, fixed demos, rows
            folder = RunFolder(out / (run_name(model, task.name, len(task), ext.shots,
                                               ext.granularity, ext.stratify)
                                      + setting_suffix(ext)),
                               config, command(str(model), task.name))
            entries.append((model, task, folder, folder.check(overwrite)))
    return entries


class _Models:
    """Loads each model once, on first need (a study whose stages are all fresh loads none);
    keeps only the last one. ``requests``: how many extractions asked for a model."""

    def __init__(self, ext, quiet: bool):
        self.ext, self.quiet, self.cache, self.requests = ext, quiet, {}, 0

    def get(self, name):
        self.requests += 1
        if name not in self.cache:
            from extraction.models import load_model

            if self.quiet:   # no weight-loading bars either
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
            self.cache.clear()
            self.cache[name] = load_model(name, device=self.ext.device, dtype=self.ext.dtype)
        return self.cache[name]


def extract_stage(folder: RunFolder, model_name, task, settings: StudySettings,
                  models: _Models, *, quiet: bool, command: Callable, log=print):
    """The extraction of one pair into ``folder/contributions`` (reused when its key is
    unchanged, resumed from its shards when interrupted)."""
    from extraction.runner import extract

    ext = settings.extraction
    key = stage_key("extract", {k: v for k, v in folder.config.items() if k != "data"},
                    task.labels.tolist(), code_digest("extraction"))
    why = folder.stale("extract", key)
    if why is None:
        contrib = load_run(folder.path)[0]
        log(f"extract: unchanged, reusing {contrib.n_examples} examples")
        return contrib
    if folder.doc["stages"].get("extract"):
        log(f"extract: {why}; extracting again")
        folder.forget("extract")
    done = shards_done(folder.contributions)
    if done:
        log(f"resuming: {done} of {len(task)} examples done")
    t0 = time.perf_counter()
    if not quiet:
        log(f"extract: loading {model_slug(model_name)}, then {len(task) - done} examples "
            f"({ext.granularity} members)")
    model, tokenizer = models.get(model_name)
    try:
        contrib = extract(model, tokenizer, task, granularity=ext.granularity,
                          batch_size=ext.batch_size, out=folder.contributions,
                          progress=not quiet, shard_size=SHARD_SIZE,
                          max_length=ext.max_length, overwrite=True, workers=ext.workers,
                          chat_template=bool(folder.config.get("chat_template")))
    except KeyboardInterrupt as exc:   # infodiv.cli says it in one line
        exc.saved = (shards_done(folder.contributions), len(task), str(folder.contributions))
        exc.resume = command(str(model_name), task.name, absolute=True)
        raise
    contrib.meta["model"] = dict(contrib.meta.get("model") or {}, name=model_slug(model_name))
    contrib.meta["run"] = folder.path.name
    contrib.save(folder.contributions, overwrite=True)   # the run folder was checked
    if not contrib.meta.get("exactness_ok", True):
        log(f"warning: exactness check failed (max error "
            f"{contrib.meta['max_exactness_error']:.3g}); see contributions/meta.json")
    folder.done("extract", key, time.perf_counter() - t0)
    if not quiet:
        log(f"extract: done in {time.perf_counter() - t0:.0f} s")
    return contrib


def decompose_stage(contrib, out, settings: StudySettings, *, log=None,
                    replace_changed: bool = False) -> dict:
    """The decompositions of one run written to ``out``
    (:func:`infodiv.study.decompose.decomposition_report` with the study's
    :class:`~infodiv.study.settings.DecomposeSettings` and its ``decompose`` stream), staged:
    the files reach ``out`` only when the stage has finished, over nothing but its own
    earlier files, with the folder's manifest (:func:`infodiv.outputs.staged_output`, writer
    ``infodiv decompose``; ``log`` and ``replace_changed`` as there)."""
    from ..outputs import staged_output
    from .decompose import decomposition_report

    d = settings.decompose
    with staged_output(out, STAGE_WRITERS["decompose"], log=log,
                       replace_changed=replace_changed,
                       expect=("decompositions.json", "decompositions.md")) as tmp:
        return decomposition_report(contrib, tmp,
                                    random_state=SeedPlan(settings.seed).integer("decompose"),
                                    info_methods=tuple(d.info_methods),
                                    inference=d.n_resamples, info_null=d.info_null,
                                    every_variant=d.every_variant)


def write_page(roots, page: Path, *, log=None, own: bool = True) -> Path:
    """The HTML page of the run folders ``roots`` (:func:`infodiv.reports.html.write_report`)
    written to ``page`` with its ``.json`` / ``.csv`` beside it through the folder's manifest
    (:func:`infodiv.outputs.staged_output`, writer ``infodiv report``; beside an extraction
    made by ``infodiv extract`` too): a file of the user's of those names is refused, never
    replaced; ``own`` (a run's own page, or a folder the toolkit named) replaces its own
    earlier page even where it was changed since."""
    from ..outputs import staged_output
    from ..reports.html import write_report

    page = Path(page)
    with staged_output(page.parent, PAGE_WRITER, log=log, replace_changed=own,
                       host=(STAGE_WRITERS["extract"],),
                       expect=[page.name, page.with_suffix(".json").name,
                               page.with_suffix(".csv").name]) as tmp:
        write_report(list(roots), tmp / page.name)
    return page


#: what each analysis stage computes, said when it starts (without quiet)
_STAGE_WORK = {"decompose": "bias-diversity, bias-variance-covariance, information "
                            "decomposition, junction curves",
               "curves": "layer-addition curves and the verdicts of each objective"}


#: the analysis stages of a run, in order: each reads only the run folder's extraction
ANALYSIS_STAGES = ("decompose", "curves")


def analysis_stage(name: str, folder: RunFolder, contrib, settings: StudySettings, *,
                   log=print, quiet: bool = False, warn=None) -> bool:
    """One analysis stage (``decompose`` or ``curves``) of the run folder whose extraction is
    ``contrib``: skipped when its key is unchanged and its files verified (False), else
    computed and recorded in ``run.json`` (True). Its warnings are collapsed into one line
    per kind (through ``warn``; default standard error). StageFailed when it fails."""
    key = stage_key_of(folder.path, name, settings)
    why = folder.stale(name, key)
    if why is None:
        log(f"{name}: unchanged, skipped")
        return False
    if folder.doc["stages"].get(name):
        log(f"{name}: {why}; recomputing")
        folder.forget(name)
    out = check_out(folder.path / STAGE_DIRS[name])
    t0 = time.perf_counter()
    if not quiet:
        log(f"{name}: computing {_STAGE_WORK[name]}")
    try:
        with collect_warnings(name, emit=warn):
            _analysis_stage(name, folder, contrib, settings, out, log, quiet)
    except StageFailed:
        raise
    except (ValueError, ArithmeticError) as exc:
        raise StageFailed(f"stage {name} failed on {folder.path.name}: "
                          f"{' '.join(str(exc).split())}") from exc
    if not quiet:
        log(f"{name}: done in {time.perf_counter() - t0:.0f} s")
    folder.done(name, key, time.perf_counter() - t0)
    return True


def report_stage(folder: RunFolder, warn=None) -> Path:
    """The run's page ``report.html`` (with ``summary.json`` / ``summary.csv``) from its
    verified stage records, written through the run folder's manifest (:func:`write_page`);
    its warnings one line per kind through ``warn``."""
    with collect_warnings("report", emit=warn):
        return write_page([folder.path], folder.path / "report.html")


def _analysis_stage(name, folder: RunFolder, contrib, settings: StudySettings, out: Path, log,
                    quiet: bool) -> None:
    """The work of :func:`analysis_stage` (its lines through ``log``)."""
    from ..reports.curves_md import verdict_summary
    from .curves import curves_stage

    if name == "decompose":   # the run's own stage folder: its damaged files are replaced
        r = decompose_stage(contrib, out, settings, log=log, replace_changed=True)["run"]
        log(f"{display_path(out)}: N={r['N']} M={r['M']} C={r['C']} "
            f"accuracy={r['accuracy']:.4f}; see decompositions.md")
        return
    doc = curves_stage(contrib, out, settings, run_dir=folder.path, log=log,
                       progress=None if quiet else log, replace_changed=True)
    for line in verdict_summary(doc):
        log(line)
    failed = [f"objective {o}: {' '.join(str(r['error']).split())}"
              for o, r in doc["objectives"].items() if "error" in r]
    if failed:
        raise StageFailed(f"curves failed: {'; '.join(failed)}; see "
                          f"{display_path(out / 'report.json')}")


def run_study(settings: StudySettings, out, *, overwrite: bool = False, quiet: bool = False,
              command: Callable = _no_command, log=print) -> StudyResult:
    """Run the study ``settings`` into run folders under ``out`` (module docstring).

    Parameters
    ----------
    settings : StudySettings
    out : folder holding one run folder per (model, task)
    overwrite : replace a run folder that holds a run with other settings (only the
        toolkit's files of it: the user's stay)
    quiet : no progress bars and no progress lines (each stage's warnings are still one
        line per kind)
    command : ``command(model, task, absolute=False) -> str``, the command line that reruns
        a pair (recorded in ``run.json``; printed on Ctrl-C)
    log : where the stage lines go
    """
    from extraction.outdir import output_lock

    from ..reports.summary import print_summary

    models = _Models(settings.extraction, quiet)
    if settings.prompt_choice.choose_prompt:   # each pair's prompt setting chosen first
        entries = plan_with_choice(settings, out, models, plan=plan_study, overwrite=overwrite,
                                   quiet=quiet, command=command, shard_size=SHARD_SIZE,
                                   log=log)
    else:
        entries = plan_study(settings, out, overwrite=overwrite, command=command)
    if settings.extraction.threads:
        import torch

        torch.set_num_threads(settings.extraction.threads)
    result = StudyResult([], [])
    for model_name, task, folder, _ in entries:
        log(f"== {folder.path.name}")
        with output_lock(folder.path):   # one writer per run folder; re-checked under the lock
            folder.prepare(folder.check(overwrite), log=log)
            with collect_warnings("extract"):
                contrib = extract_stage(folder, model_name, task, settings, models,
                                        quiet=quiet, command=command, log=log)
            for name in ANALYSIS_STAGES:
                analysis_stage(name, folder, contrib, settings, log=log, quiet=quiet)
            page = report_stage(folder)
        result.folders.append(folder.path)
        result.pages.append(page)
        print_summary(folder.path, page)
    if len(result.folders) > 1:
        with collect_warnings("report"):
            result.combined = write_page(result.folders, Path(out) / "report.html", own=False)
        log(f"infodiv run: {len(result.folders)} runs; combined report "
            f"{display_path(result.combined)}")
    return result
