"""A grid of (model, task) runs: the extractions here, the analyses on Dask: :func:`run_grid`.

Every pair gets the run folder ``infodiv run`` makes for it
(:func:`~infodiv.study.pipeline.plan_study`), written by the same stage functions with the
same stage keys, so ``infodiv run`` and ``infodiv report`` read a grid's folders as their own
and the numbers are the same. Each extraction runs in this process, where the models are
(``device="auto"``: CUDA when torch sees it, else the CPU), one model loaded at a time, each
model's pairs one after the other. Each run's analysis (decompositions, curves with their
verdicts, the run's page) needs only its run folder and is one Dask task
(:func:`~infodiv.study.grid_analysis.analyse_run`), so the next extraction overlaps the
analyses already sent. The cluster (:class:`~infodiv.study.grid_cluster.Cluster`) is a
``LocalCluster`` of single-threaded worker processes, or the scheduler at ``scheduler``,
whose workers must see the run folders at the same absolute paths (a shared filesystem) and
run the same code.

Resumable per run and per stage: an interrupted extraction resumes from its shards, a
finished stage whose key is unchanged and whose files are verified is skipped, and a run
whose every stage is so is skipped whole (no model loaded, no task sent), which the log says.
A run that fails (a model not found, options its tokenizer cannot tell apart, a stage that
raises) is one line, and the others go on. ``<out>/grid.json`` holds every run's state
(:mod:`infodiv.study.grid_runs`), rewritten as each run ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from ..runfiles import UserError, display_path, model_slug
from ..warncollect import collect_warnings
from .checks import check_device, check_out
from .grid_analysis import all_finished
from .grid_cluster import Cluster, require_dask
from .grid_runs import (
    GRID_STAGES,
    RunOutcome,
    one_line,
    stage_record,
    status_line,
    write_record,
)
from .pipeline import _Models, _no_command, extract_stage, plan_study, write_page
from .settings import StudySettings

__all__ = ["run_grid", "plan_grid", "require_dask", "GRID_STAGES", "RunOutcome"]


def plan_grid(pairs, settings: StudySettings, out: Path, *, overwrite: bool = False,
              command: Callable = _no_command) -> list:
    """``[(model, task, folder, outcome)]``: each pair planned alone by
    :func:`~infodiv.study.pipeline.plan_study` (a pair that cannot be planned has folder
    None and a failed outcome; the others go on), each model's pairs together in the order
    the models first appear."""
    first = {}
    for model, _ in pairs:
        first.setdefault(model, len(first))
    planned, owners = [], {}
    for model, task in sorted(pairs, key=lambda p: first[p[0]]):
        label = task or Path(settings.extraction.task_file or "task").stem
        outcome = RunOutcome(f"{model_slug(model)}-{label}", str(model), label)
        try:
            one = settings.with_settings(models=(model,), **({"tasks": (task,)} if task else {}))
            (_, task_obj, folder, _), = plan_study(one, out, overwrite=overwrite,
                                                   command=command)
            outcome.run = folder.path.name
            if outcome.run in owners:
                raise UserError(f"{model} on {label} has the run folder of "
                                f"{owners[outcome.run]} ({outcome.run})")
            owners[outcome.run] = f"{model} on {label}"
        except Exception as exc:  # noqa: BLE001 - one pair's failure is its own
            outcome.fail("extract", f"plan: {one_line(exc)}")
            planned.append((model, None, None, outcome))
            continue
        planned.append((model, task_obj, folder, outcome))
    return planned


class _Progress:
    """The grid's progress: a bar over the runs, the stage lines above it, one status line
    per run as it ends, and ``grid.json`` rewritten then."""

    def __init__(self, planned, out: Path, quiet: bool):
        from tqdm.auto import tqdm

        self.out, self.quiet = out, quiet
        self.outcomes = [entry[-1] for entry in planned]
        self.bar = tqdm(total=len(planned), desc="grid", unit="run", disable=quiet)

    def say(self, line: str) -> None:
        if not self.quiet:
            self.bar.write(line)

    def finished(self, outcome: RunOutcome) -> None:
        self.say(status_line(outcome))
        self.bar.update(1)
        write_record(self.outcomes, self.out)

    def close(self) -> None:
        self.bar.close()


class _Analyses:
    """The analyses sent to the cluster, collected as they complete."""

    def __init__(self, cluster: Cluster, progress: _Progress):
        self.cluster, self.progress = cluster, progress
        self.pending, self.done = {}, None

    def submit(self, outcome: RunOutcome, root: Path, settings: StudySettings) -> None:
        future = self.cluster.submit(outcome.run, root, settings)   # connects the first time
        if self.done is None:
            from dask.distributed import as_completed

            self.done = as_completed()
            self.progress.say(f"analyses on {self.cluster.describe()}")
        outcome.stages.update({s: stage_record("queued") for s in GRID_STAGES[1:]})
        self.pending[future.key] = outcome
        self.done.add(future)
        if self.done.has_ready():
            self._collect(self.done.next_batch(block=False))

    def wait(self) -> None:
        if self.done is not None:
            for batch in self.done.batches():
                self._collect(batch)

    def _collect(self, futures) -> None:
        for future in futures:
            outcome = self.pending.pop(future.key)
            try:
                result = future.result()
            except Exception as exc:  # noqa: BLE001 - the task was lost (a worker died)
                outcome.stages.update({s: stage_record("failed") for s in GRID_STAGES[1:]})
                outcome.error = f"analysis: {one_line(exc)}"
            else:
                outcome.stages.update(result["stages"])
                outcome.error, outcome.worker = result["error"], result["worker"]
                outcome.clock = result["clock"]
                for line in result["lines"]:
                    self.progress.say(f"  {outcome.run}: {line}")
            self.progress.finished(outcome)


def _extract(entry, settings: StudySettings, models: _Models, *, overwrite: bool,
             quiet: bool, command: Callable, say) -> bool:
    """The extraction of one planned pair into its run folder (skipped when verified
    unchanged, resumed from its shards); False, with the outcome failed, when it fails."""
    from extraction.outdir import output_lock

    model, task, folder, outcome = entry
    asked = models.requests
    w0, c0 = time.perf_counter(), time.process_time()
    try:
        with output_lock(folder.path):
            folder.prepare(folder.check(overwrite), log=say)
            with collect_warnings("extract", emit=say):
                extract_stage(folder, model, task, settings, models, quiet=quiet,
                              command=command, log=say)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 - one run's failure is one line
        outcome.fail("extract", one_line(exc))
        return False
    outcome.stages["extract"] = (stage_record("done", time.process_time() - c0,
                                              time.perf_counter() - w0)
                                 if models.requests > asked else stage_record("skipped"))
    return True


def _combined_page(outcomes, out: Path, say) -> None:
    """``<out>/report.html`` over the runs that finished, as ``infodiv run`` writes it for
    several pairs."""
    done = [out / o.run for o in outcomes if o.ok]
    if len(done) < 2:
        return
    try:
        with collect_warnings("report", emit=say):
            page = write_page(done, out / "report.html", own=False)
        say(f"combined report of {len(done)} runs: {display_path(page)}")
    except Exception as exc:  # noqa: BLE001 - the runs' own pages stand
        say(f"combined report not written: {one_line(exc)}")


def run_grid(pairs, settings: StudySettings, out, *, scheduler: str | None = None,
             workers: int | None = None, overwrite: bool = False, quiet: bool = False,
             command: Callable = _no_command) -> list[RunOutcome]:
    """The study of every ``(model, task)`` pair of ``pairs`` under ``out`` (module
    docstring); ``task`` None reads ``settings.extraction.task_file``.

    Parameters
    ----------
    settings : the shared settings (their ``models`` and ``tasks`` are replaced per pair)
    scheduler : a Dask scheduler's address; None: a local cluster of ``workers`` processes
    overwrite : replace a run folder that holds a run with other settings
    quiet : no progress bar and no stage lines
    command : ``command(model, task, absolute=False) -> str``, the command line that reruns
        a pair (recorded in ``run.json``)

    Returns one :class:`~infodiv.study.grid_runs.RunOutcome` per pair, also in
    ``<out>/grid.json``.
    """
    require_dask()
    check_device(settings.extraction.device)
    pairs = list(pairs)
    cluster = Cluster(scheduler, workers, len(pairs))
    try:
        if scheduler:
            cluster.connect()   # a wrong address is one line before any work
        out = check_out(out)
        planned = plan_grid(pairs, settings, out, overwrite=overwrite, command=command)
        progress = _Progress(planned, out, quiet)
        try:
            _run(planned, settings, cluster, progress, overwrite=overwrite, command=command)
        finally:
            progress.close()
    finally:
        cluster.close()
    _combined_page(progress.outcomes, out, progress.say)
    write_record(progress.outcomes, out)
    return progress.outcomes


def _run(planned, settings: StudySettings, cluster: Cluster, progress: _Progress, *,
         overwrite: bool, command: Callable) -> None:
    """Extract each planned pair in turn and send its analysis to the cluster (unless every
    stage is finished and verified); then wait for the analyses."""
    if settings.extraction.threads:
        import torch

        torch.set_num_threads(settings.extraction.threads)
    models = _Models(settings.extraction, progress.quiet)
    analyses = _Analyses(cluster, progress)
    for entry in planned:
        _, _, folder, outcome = entry
        if folder is None:
            progress.finished(outcome)
            continue
        progress.say(f"== {outcome.run}")
        if not _extract(entry, settings, models, overwrite=overwrite, quiet=progress.quiet,
                        command=command, say=progress.say):
            progress.finished(outcome)
        elif all_finished(folder, settings):
            outcome.skip_analysis()
            progress.say(f"{outcome.run}: every stage finished and verified "
                         f"({', '.join(GRID_STAGES)}); skipped")
            progress.finished(outcome)
        else:
            analyses.submit(outcome, folder.path.resolve(), settings)
    analyses.wait()
