"""The analysis of one run folder of a grid, as one Dask task: :func:`analyse_run`.

It runs the pipeline's own stages (:func:`~infodiv.study.pipeline.analysis_stage` for the
decompositions and the curves, :func:`~infodiv.study.pipeline.report_stage` for the page) on
the run folder that the extraction wrote, under the run folder's lock, so its files and its
``run.json`` are those ``infodiv run`` writes. Nothing here needs the model: a worker needs
only the run folder (at the same absolute path) and the same code.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

from ..runfiles import load_run
from .grid_runs import GRID_STAGES, one_line, stage_record
from .pipeline import ANALYSIS_STAGES, analysis_stage, report_stage
from .runfolder import STAGE_DIRS, RunFolder, code_digest, stage_key_of
from .settings import StudySettings

__all__ = ["analyse_run", "analysis_code", "warm_up", "all_finished", "CLOCKS"]

#: the CPU clock a worker measures its stages with: its process when it is a single-threaded
#: process of its own, else the thread that runs the task
CLOCKS = {"process": time.process_time, "thread": time.thread_time}


def analysis_code() -> str:
    """The code digest that the analysis stages' keys hold (``infodiv`` and ``estimators``)."""
    return code_digest("infodiv", "estimators")


def warm_up() -> None:
    """Import the analysis modules (run once on every worker, so that no stage's CPU
    seconds hold the imports)."""
    from ..reports import curves_md, html  # noqa: F401
    from . import curves, decompose  # noqa: F401


def _report_fresh(root: Path) -> bool:
    """The run's page exists and is newer than every file of its analysis stages."""
    page = root / "report.html"
    if not page.is_file():
        return False
    newest = max((p.stat().st_mtime for stage in ANALYSIS_STAGES
                  for p in (root / STAGE_DIRS[stage]).rglob("*") if p.is_file()), default=0.0)
    return page.stat().st_mtime >= newest


def all_finished(folder: RunFolder, settings: StudySettings) -> bool:
    """Every analysis stage of the run folder recorded with its current key and its files
    unchanged since (their sha256), and its page newer than them."""
    root = folder.path
    try:
        return all(folder.stale(s, stage_key_of(root, s, settings)) is None
                   for s in ANALYSIS_STAGES) and _report_fresh(root)
    except (OSError, ValueError, KeyError):   # unreadable: the worker says what is wrong
        return False


def _timed(clock, stage, *args, **kwargs) -> dict:
    """Run ``stage``: ``done`` with its CPU and wall seconds when it computed (returned a
    true value), else ``skipped``."""
    w0, c0 = time.perf_counter(), clock()
    if not stage(*args, **kwargs):
        return stage_record("skipped")
    return stage_record("done", clock() - c0, time.perf_counter() - w0)


def _stages(root: Path, settings: StudySettings, clock, stages: dict, log) -> None:
    """The analysis stages of the run folder ``root`` into ``stages``, in order; the page is
    rewritten unless every stage was skipped and it is newer than their files."""
    from extraction.outdir import output_lock

    with output_lock(root):   # one writer per run folder, as in infodiv run
        folder = RunFolder.open(root)
        contrib = load_run(root)[0]
        for name in ANALYSIS_STAGES:
            stages[name] = stage_record("running")
            stages[name] = _timed(clock, analysis_stage, name, folder, contrib, settings,
                                  log=log, quiet=True, warn=log)
        stages["report"] = stage_record("running")
        fresh = all(stages[s]["status"] == "skipped" for s in ANALYSIS_STAGES) \
            and _report_fresh(root)
        stages["report"] = stage_record("skipped") if fresh else \
            _timed(clock, report_stage, folder, warn=log)


def analyse_run(path: str, settings: StudySettings, clock: str = "process",
                code: str | None = None) -> dict:
    """The analysis of the run folder at ``path`` (a Dask task): decompositions and curves,
    each skipped when its key is unchanged and its files verified, then the run's page.
    ``clock``: a key of :data:`CLOCKS`; ``code``: the submitter's :func:`analysis_code` (a
    worker whose own differs says so; its stage keys record its own code).

    Never raises: returns ``{"stages": {stage: stage_record}, "error": "stage: one line" or
    None, "lines": what the stages said, "worker": "host:pid", "clock": clock}``.
    """
    lines: list[str] = []
    stages: dict = {}
    result = {"stages": stages, "error": None, "lines": lines,
              "worker": f"{socket.gethostname()}:{os.getpid()}", "clock": clock}
    if code is not None and code != analysis_code():
        lines.append("note: this worker's infodiv/estimators sources differ from the "
                     "submitting process's; the stage keys record the worker's")
    try:
        _stages(Path(path), settings, CLOCKS[clock], stages, lines.append)
    except Exception as exc:  # noqa: BLE001 - one run's failure is one line; the grid goes on
        failed = next((s for s in GRID_STAGES[1:] if stages.get(s, {}).get("status")
                       == "running"), GRID_STAGES[1])
        stages[failed] = stage_record("failed")
        result["error"] = f"{failed}: {one_line(exc)}"
    for name in GRID_STAGES[1:]:
        stages.setdefault(name, stage_record("not run"))
    return result
