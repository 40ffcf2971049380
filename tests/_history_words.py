"""Words that tell development history (a commit hash, an issue or session number, a machine
anecdote, a role, a previous version, a dated change: what a page said or did before, "the
pipeline the engine replaced", "failures that were ours before this change", "could not be
carried to that machine"): :func:`history_words` finds them in a page's text."""

from __future__ import annotations

import re

HISTORY = {
    "commit hash": r"(?<![\w.])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w.])",
    "issue number": r"\bissues? #?\d+",
    "session": r"\bsessions?\b",
    "numbered round of work": r"\b(rounds? (of work|\d+)|round-\d+)\b",
    "a machine anecdote": r"\b(VMs?|another( [\w-]+)? machine|a quieter|none lent|not lent"
                          r"|that machine|could not be (carried|copied|brought|installed))\b",
    "a role": r"\b(the lead|engineers?|the brief|the CEO|helpers?)\b",
    "a previous version": r"\b(previous|earlier|old) "
                          r"(version|rule|run|report|reading|measurement)s?\b",
    "a dated change": r"\b(since this version|before this version|no longer|used to"
                      r"|(before|after|since|until) this (change|rule|fix|commit|rewrite)"
                      r"|this change|is now|now pass(es)?|was not kept"
                      r"|(that|which|the \w+) (it|we|the \w+) replaced)\b",
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
