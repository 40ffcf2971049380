"""A study of one or more (model, task) pairs: typed settings per stage, one seed plan, and
:func:`run_study` (the prompt choice when asked for → extraction → decompositions → curves
and verdicts → selection → report).

The command line (:mod:`infodiv.commands`) and the experiments (:mod:`infodiv.experiments`)
build a :class:`StudySettings` and call the stage functions; nothing here reads argv.
Submodules load on use, so ``import infodiv.study`` stays light.
"""

from __future__ import annotations

from .seeds import SeedPlan
from .settings import (
    CurvesSettings,
    DecomposeSettings,
    ExtractionSettings,
    InferenceSettings,
    PromptChoiceSettings,
    SelectionSettings,
    StudySettings,
)

__all__ = ["StudySettings", "ExtractionSettings", "DecomposeSettings", "InferenceSettings",
           "CurvesSettings", "SelectionSettings", "PromptChoiceSettings", "SeedPlan",
           "run_study"]


def run_study(settings, out, **kwargs):
    """:func:`infodiv.study.pipeline.run_study` (imported on use: it needs torch)."""
    from .pipeline import run_study as _run_study

    return _run_study(settings, out, **kwargs)
