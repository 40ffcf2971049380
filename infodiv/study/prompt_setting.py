"""The prompt setting of a study: how every prompt is written, the rows a run reads, and the
held-out rows of a prompt choice (:mod:`infodiv.study.prompt_choice`).

A prompt setting (:class:`PromptSetting`) is how every prompt of a run is written: inside the
tokenizer's chat template or bare, with how many demonstrations, drawn per prompt or fixed
(one draw in front of every prompt). Its names: ``zero-shot``, ``chat-template``,
``fixed-4-shot``, ``4-shot``, and combinations joined by ``+`` (``chat-template+fixed-4-shot``).
A run folder's name and ``run.json`` config carry it (:func:`setting_suffix`,
:func:`setting_config`).

The held-out rows of a choice (:func:`choice_rows`) follow the last analysed row by default
and never hold an analysed row; fixed demonstrations are then drawn after them
(:func:`demo_start_for`), for the candidates and for the chosen run alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

__all__ = ["PromptSetting", "CRITERIA", "DEFAULT_CANDIDATES", "MIN_CHOICE_ROWS", "setting_of",
           "setting_suffix", "setting_config", "analysed_rows", "choice_rows",
           "demo_start_for", "rows_task"]

#: what a choice maximises: the calibrated readout's accuracy, or the raw argmax's
CRITERIA = ("accuracy_calibrated", "accuracy")
#: the candidates of ``--choose-prompt`` without values (the AG News comparison)
DEFAULT_CANDIDATES = ("zero-shot", "chat-template", "fixed-4-shot")
#: fewest held-out rows: the cross-fitted calibration needs both halves of every class
MIN_CHOICE_ROWS = 8
_SHOTS = re.compile(r"(fixed-)?(\d+)-shot")


@dataclass(frozen=True)
class PromptSetting:
    """How every prompt is written: ``chat_template``, ``shots`` demonstrations, drawn once
    for all prompts (``fixed_demos``) or per prompt."""

    chat_template: bool = False
    shots: int = 0
    fixed_demos: bool = False

    def __post_init__(self):
        if self.shots < 0 or (self.fixed_demos and not self.shots):
            raise ValueError(f"a prompt setting needs shots >= 0, and shots >= 1 with fixed "
                             f"demonstrations; got shots={self.shots}")

    @property
    def name(self) -> str:
        parts = ["chat-template"] if self.chat_template else []
        if self.shots:
            parts.append(f"{'fixed-' if self.fixed_demos else ''}{self.shots}-shot")
        return "+".join(parts) or "zero-shot"

    @classmethod
    def parse(cls, text: str) -> PromptSetting:
        """The setting named ``text`` (module docstring); ValueError names the forms."""
        chat, shots, fixed = False, 0, False
        pieces = str(text).strip().split("+")
        for piece in pieces:
            m = _SHOTS.fullmatch(piece)
            if piece == "chat-template" and not chat:
                chat = True
            elif piece == "zero-shot" and len(pieces) == 1:
                continue
            elif m and not shots and int(m.group(2)) >= 1:
                shots, fixed = int(m.group(2)), bool(m.group(1))
            else:
                raise ValueError(f"unknown prompt setting {text!r}: write zero-shot, "
                                 "chat-template, K-shot or fixed-K-shot (K >= 1), or "
                                 "chat-template+[fixed-]K-shot")
        return cls(chat, shots, fixed)


def setting_of(ext) -> PromptSetting:
    """The prompt setting of an :class:`~infodiv.study.settings.ExtractionSettings`."""
    return PromptSetting(bool(ext.chat_template), int(ext.shots), bool(ext.fixed_demos))


def setting_suffix(ext) -> str:
    """What a run folder's name adds for the prompt setting and rows beyond its shots:
    ``-chat`` (chat template), ``-fixed`` (fixed demonstrations), ``-from<START>``."""
    return (("-chat" if ext.chat_template else "") + ("-fixed" if ext.fixed_demos else "")
            + (f"-from{ext.start}" if ext.start else ""))


def setting_config(ext) -> dict:
    """The prompt settings that identify a run (``run.json`` config), only where they differ
    from the default, so that a run made before they existed is the same run."""
    out = {}
    if ext.chat_template:
        out["chat_template"] = True
    if ext.fixed_demos:
        out["fixed_demos"] = True
    if ext.demo_start is not None:
        out["demo_start"] = int(ext.demo_start)
    if ext.start:
        out["start"] = int(ext.start)
    return out


# ------------------------------------------------------------------------------------ rows
def _named_rows(ext, name: str, seed: int) -> tuple[np.ndarray, int]:
    """The analysed row indices of task ``name`` in its split, and the split's row count."""
    from .data import load_task

    task = load_task(name, data_dir=ext.data_dir, n=ext.n, seed=seed, stratify=ext.stratify,
                     start=ext.start)
    if ext.stratify:
        rows = np.asarray(task.meta["indices"], dtype=np.int64)
    else:
        rows = np.arange(ext.start, ext.start + len(task))
    return rows, int(task.meta.get("n_available", len(task)))


def analysed_rows(ext, task_name: str, seed: int = 0) -> tuple[np.ndarray, int]:
    """``(rows, n_rows)``: the row indices a study analyses of ``task_name`` (rows of its
    split; of the task file with ``ext.task_file``) and how many rows there are in all."""
    if ext.task_file is None:
        return _named_rows(ext, task_name, seed)
    from .tasks import task_from_file

    full = task_from_file(ext, None)
    return np.arange(min(ext.n, len(full))), len(full)


def choice_rows(analysed: np.ndarray, n_rows: int, n: int, start: int | None = None,
                what: str = "the split") -> tuple[int, int]:
    """``(first, stop)``: the held-out rows ``first .. stop - 1`` of a prompt choice.

    Default: the ``n`` rows after the last analysed row. A range that holds an analysed row
    (the choice would then add optimism to the analysis) or runs past the ``n_rows`` rows of
    ``what`` is refused (ValueError, one line).
    """
    analysed = np.asarray(analysed, dtype=np.int64)
    first = int(analysed.max()) + 1 if start is None else int(start)
    stop = first + int(n)
    overlap = analysed[(analysed >= first) & (analysed < stop)]
    if overlap.size:
        raise ValueError(f"the prompt choice's rows {first}..{stop - 1} hold {overlap.size} "
                         f"analysed row(s) (first {int(overlap[0])}; the analysed rows are "
                         f"{int(analysed.min())}..{int(analysed.max())}): choose the prompt "
                         "on rows no analysis reads (--choice-start, --choice-n)")
    if stop > n_rows:
        raise ValueError(f"the prompt choice needs rows {first}..{stop - 1} of {what}, which "
                         f"holds {n_rows} rows: give fewer rows (--choice-n), another "
                         "--choice-start, or a data folder with more rows (--data-dir)")
    return first, stop


def _same_split_demos(ext, name: str) -> bool:
    """Are demonstrations of ``name`` drawn from its own split (no train split to draw from)?"""
    if ext.task_file is not None:
        return True
    from extraction.datasets import load_task_records

    from .data import resolve_data_dir

    folder, _ = resolve_data_dir(name, ext.data_dir)
    return load_task_records(name, data_dir=folder, with_pool=True)[4] is None


def demo_start_for(ext, name: str, setting: PromptSetting, stop: int) -> int | None:
    """Where fixed demonstrations are drawn for ``setting`` when the choice's rows end at
    ``stop``: ``ext.demo_start`` (at least ``stop``) or ``stop`` on a split without a train
    split; None otherwise."""
    if not (setting.shots and setting.fixed_demos) or not _same_split_demos(ext, name):
        return None
    if ext.demo_start is None:
        return stop
    if ext.demo_start < stop:
        raise ValueError(f"--demo-start {ext.demo_start} is below the end of the prompt "
                         f"choice's rows (..{stop - 1}): its demonstrations would be rows it "
                         "is scored on")
    return int(ext.demo_start)


def rows_task(ext, name: str, rows: tuple[int, int], setting: PromptSetting, seed: int):
    """The task of ``setting`` on rows ``rows[0] .. rows[1] - 1`` (of the split of the named
    task ``name``, or of the task file)."""
    first, stop = rows
    demo_start = demo_start_for(ext, name, setting, stop)
    if ext.task_file is None:
        from .data import load_task

        return load_task(name, data_dir=ext.data_dir, n=stop - first, start=first,
                         shots=setting.shots, seed=seed, fixed_demos=setting.fixed_demos,
                         demo_start=demo_start)
    from extraction.tasks import Task

    from .tasks import file_demo_pool, task_from_file

    full = task_from_file(ext, None)
    keep = list(range(first, stop))
    task = Task(full.name, full.template, full.options, [full.records[i] for i in keep],
                full.labels[keep], dict(full.meta, rows=[first, stop]), full.truncatable)
    if setting.shots:
        pool = (file_demo_pool(full, demo_start, setting.shots, str(ext.task_file))
                if setting.fixed_demos else None)
        task = task.with_demonstrations(setting.shots, seed=seed, pool=pool,
                                        fixed=setting.fixed_demos)
    return task
