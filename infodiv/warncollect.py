"""Repeated warnings collapsed into one line per kind: :func:`collect_warnings`.

A study stage can raise the same warning thousands of times (a calibration fit that did not
converge on a few member sets, once per replicate). Inside ``with collect_warnings("curves"):``
every warning is recorded instead of printed; at the end of the block each distinct kind is
written as ONE line: its category, its message with the numbers of all occurrences folded
into ranges (``for 1–3 of 37–45 member sets``: the smallest and the largest value of each
number, so the worst case is on the line) and how many times it occurred::

    warning (curves, 5×): CalibrationWarning: calibration fit did not converge (mi_readout):
    1–2 of 37–45 member sets (scaled gradient norm up to inf)

A kind is the category and the message with its numbers taken out. The filters in force stay
in force: a warning they ignore is not recorded, one they turn into an error still raises;
the ones they would show once (Python's default) are all counted. Blocks nest: an inner block
reports its own warnings and the outer one never sees them.

``infodiv <command>`` runs every command inside one block and the study runs each stage
inside its own; in a notebook or a script ``with infodiv.collect_warnings(): ...`` does the
same.
"""

from __future__ import annotations

import math
import re
import sys
import warnings
from collections.abc import Callable
from contextlib import contextmanager

__all__ = ["InfodivWarning", "CalibrationWarning", "collect_warnings", "WarningCollector",
           "WarningKind", "message_template"]


class InfodivWarning(UserWarning):
    """A warning of the infodiv toolkit (its messages start with a stable prefix)."""


class CalibrationWarning(InfodivWarning, RuntimeWarning):
    """A calibrated readout's fit (``fit_calibration``) did not converge on some member sets;
    its message starts with ``calibration fit did not converge``."""


# a number: a sign only where it cannot be a hyphen, decimals, an exponent; inf and nan as
# words (not the 'inf' of 'information')
_NUMBER = re.compile(r"(?:(?<![\w.)\]])[-+−])?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
                     r"|\b(?:inf|nan)\b")
_SLOT = "\x00"


def message_template(message: str) -> tuple[str, list[str]]:
    """``(template, numbers)``: the message with every number replaced by a slot, and the
    numbers as written."""
    numbers = [m.group(0) for m in _NUMBER.finditer(message)]
    return _NUMBER.sub(_SLOT, message), numbers


def _value(text: str) -> float:
    try:
        return float(text.replace("−", "-"))
    except ValueError:
        return math.nan


class _Slot:
    """One number of a message over its occurrences: the first value, the smallest and the
    largest (as written)."""

    __slots__ = ("first", "low", "high", "same")

    def __init__(self, text: str):
        self.first, self.same = text, True
        value = _value(text)
        self.low = self.high = None if math.isnan(value) else (value, text)

    def add(self, text: str) -> None:
        self.same = self.same and text == self.first
        value = _value(text)
        if math.isnan(value):
            return
        if self.low is None or value < self.low[0]:
            self.low = (value, text)
        if self.high is None or value > self.high[0]:
            self.high = (value, text)

    def text(self) -> str:
        """The value when every occurrence agrees, else ``smallest–largest``."""
        if self.same or self.low is None or self.low[0] == self.high[0]:
            return self.first if self.same or self.low is None else self.low[1]
        return f"{self.low[1]}–{self.high[1]}"


class WarningKind:
    """The occurrences of one kind of warning: its category, its message template, how many,
    and each number's range over them."""

    def __init__(self, category: type, template: str, numbers: list[str]):
        self.category, self.template, self.count = category, template, 1
        self.slots = [_Slot(t) for t in numbers]

    def add(self, numbers: list[str]) -> None:
        self.count += 1
        for slot, text in zip(self.slots, numbers):
            slot.add(text)

    def message(self) -> str:
        """The message with each number replaced by its range over the occurrences."""
        parts = self.template.split(_SLOT)
        return "".join(p + s for p, s in zip(parts, [*(s.text() for s in self.slots), ""]))

    def line(self, stage: str | None = None) -> str:
        where = ", ".join(p for p in (stage, f"{self.count}×" if self.count > 1 else None) if p)
        head = f"warning ({where})" if where else "warning"
        return f"{head}: {self.category.__name__}: {' '.join(self.message().split())}"


class WarningCollector:
    """What :func:`collect_warnings` recorded: ``kinds`` in order of first occurrence,
    ``lines()`` the summary."""

    def __init__(self, stage: str | None = None):
        self.stage = stage
        self.kinds: dict = {}

    def add(self, message: Warning | str, category: type) -> None:
        template, numbers = message_template(str(message))
        kind = self.kinds.get((category, template))
        if kind is None:
            self.kinds[(category, template)] = WarningKind(category, template, numbers)
        else:
            kind.add(numbers)

    @property
    def count(self) -> int:
        return sum(k.count for k in self.kinds.values())

    def lines(self) -> list[str]:
        return [k.line(self.stage) for k in self.kinds.values()]


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _pattern(regex) -> str:
    """A filter's message or module pattern as filterwarnings takes it (compiled or not)."""
    return "" if regex is None else getattr(regex, "pattern", regex)


def _counting_filters() -> None:
    """Rewrite the (copied) filter list: every action that shows a warning once or once per
    place shows it always (so each occurrence is counted); ignore and error stay."""
    filters = list(warnings.filters)
    warnings.resetwarnings()
    for action, message, category, module, lineno in reversed(filters):
        if action in ("default", "module", "once"):
            action = "always"
        warnings.filterwarnings(action, message=_pattern(message), category=category,
                                module=_pattern(module), lineno=lineno)
    warnings.simplefilter("always", append=True)   # what no filter matches (defaultaction)


@contextmanager
def collect_warnings(stage: str | None = None, *, emit: Callable[[str], None] | None = None):
    """Record the warnings of a block and write one summary line per kind at its end.

    Parameters
    ----------
    stage : what the block is (``"curves"``); it opens each line
    emit : where each line goes (default: standard error, as warnings go)

    Yields the :class:`WarningCollector`; the lines are written also when the block raises.
    """
    collector = WarningCollector(stage)
    with warnings.catch_warnings():
        _counting_filters()
        warnings.showwarning = lambda message, category, *_, **__: collector.add(message,
                                                                                  category)
        try:
            yield collector
        finally:
            for line in collector.lines():
                (emit or _to_stderr)(line)
