"""Words that tell development history (a commit hash, an issue or session number, a machine
anecdote, a role, a previous version): :func:`history_words` finds them in a page's text."""

from __future__ import annotations

import re

HISTORY = {
    "commit hash": r"(?<![\w.])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w.])",
    "issue number": r"\bissues? #?\d+",
    "session": r"\bsessions?\b",
    "numbered round of work": r"\b(rounds? (of work|\d+)|round-\d+)\b",
    "a machine anecdote": r"\b(VMs?|another machine|a quieter|none lent|not lent)\b",
    "a role": r"\b(the lead|engineers?|the brief|the CEO|helpers?)\b",
    "a previous version": r"\b(previous|earlier|old) (version|rule|run|report|reading)s?\b",
    "a dated change": r"\b(since this version|before this version|no longer|used to)\b",
}
PATTERN = re.compile("|".join(f"(?P<g{i}>{p})" for i, p in enumerate(HISTORY.values())), re.I)
NAMES = list(HISTORY)


def history_words(text: str) -> list[tuple[int, str, str]]:
    """(line number, kind, words) of every history mention in ``text``."""
    found = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for m in PATTERN.finditer(line):
            kind = NAMES[int(next(k for k, v in m.groupdict().items() if v)[1:])]
            found.append((lineno, kind, m.group(0)))
    return found
