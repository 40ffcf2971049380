"""The state of each run of a grid (:mod:`infodiv.study.grid`): :class:`RunOutcome`, its
one-line status, and the grid's record ``<out>/grid.json``.

A run's stages are :data:`GRID_STAGES`; each has a status (``done`` with its CPU and wall
seconds, ``skipped``: finished before and verified, ``failed``, ``queued``: waiting for a
worker, ``not run``: an earlier stage failed).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..runfiles import StageFailed, UserError
from .pipeline import ANALYSIS_STAGES

__all__ = ["GRID_STAGES", "RunOutcome", "stage_record", "one_line", "status_line",
           "write_record"]

#: the stages of one run, in order: the extraction where the models are, the rest on Dask
GRID_STAGES = ("extract", *ANALYSIS_STAGES, "report")


def stage_record(status: str, cpu: float | None = None, wall: float | None = None) -> dict:
    """``{"status", "cpu_s", "wall_s"}`` of one stage of one run."""
    return {"status": status, "cpu_s": None if cpu is None else round(cpu, 3),
            "wall_s": None if wall is None else round(wall, 3)}


def one_line(exc: BaseException) -> str:
    """An exception as one line: its message, with its type where the message alone is not
    a user-facing one."""
    text = " ".join(str(exc).split())
    known = (UserError, StageFailed, ValueError, ArithmeticError, OSError)
    return text if text and isinstance(exc, known) else f"{type(exc).__name__}: {text}"


@dataclass
class RunOutcome:
    """One run of a grid: its stages (:func:`stage_record` each), the worker its analysis ran
    on, the CPU clock that worker measured with, and the one line of its failure."""

    run: str
    model: str
    task: str
    stages: dict = field(default_factory=dict)
    error: str | None = None
    worker: str = ""
    clock: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None

    def fail(self, stage: str, message: str) -> None:
        """``stage`` failed with ``message``; the stages after it did not run."""
        self.error = f"{stage}: {message}"
        after = GRID_STAGES[GRID_STAGES.index(stage) + 1:]
        self.stages[stage] = stage_record("failed")
        self.stages.update({s: stage_record("not run") for s in after})

    def skip_analysis(self) -> None:
        """Every analysis stage finished before and verified."""
        self.stages.update({s: stage_record("skipped") for s in GRID_STAGES[1:]})

    def to_dict(self) -> dict:
        return asdict(self)


def status_line(o: RunOutcome) -> str:
    """``finished: RUN (CPU s: ...)`` or ``failed: RUN: stage: why``."""
    if o.error:
        return f"failed: {o.run}: {o.error}"
    cpu = ", ".join(f"{s} {o.stages[s]['cpu_s']:.1f}" for s in GRID_STAGES
                    if o.stages.get(s, {}).get("status") == "done"
                    and o.stages[s]["cpu_s"] is not None)
    return f"finished: {o.run}" + (f" (CPU s: {cpu})" if cpu else " (every stage skipped)")


def write_record(outcomes, out: Path) -> Path:
    """``<out>/grid.json``: every run's outcome as it stands (written atomically)."""
    path = Path(out) / "grid.json"
    tmp = path.with_name(f".grid.json.tmp-{os.getpid()}")
    tmp.write_text(json.dumps({"stages": list(GRID_STAGES),
                               "runs": [o.to_dict() for o in outcomes]}, indent=1))
    os.replace(tmp, path)
    return path
