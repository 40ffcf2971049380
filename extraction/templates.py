"""Prompt templates of the classification tasks: a Python format string over a record's fields
that ends in an ``{answer}`` slot (paper Table 3), split into the pieces before the slot and the
whitespace in front of it, which :class:`extraction.tasks.Task` moves into the answer."""

from __future__ import annotations

import string

__all__ = ["parse_template"]

_FORMATTER = string.Formatter()


def parse_template(template: str) -> tuple[list[tuple[str, str | None]], str]:
    """Split ``template`` into pieces before the answer slot and the whitespace before the slot.

    Returns ``(pieces, answer_prefix)`` where each piece is ``(literal_text, None)`` or
    ``(field_format, field_name)`` with ``field_format`` a one-field format string such as
    ``"{text}"``. Without an ``{answer}`` slot the answer follows the whole template: the
    template's trailing whitespace is the prefix, or one space when it has none.
    """
    if not isinstance(template, str) or not template.strip():
        raise ValueError(f"template must be a non-empty string, got {template!r}")
    try:
        parsed = list(_FORMATTER.parse(template))
    except ValueError as exc:
        raise ValueError(f"template is not a valid format string ({exc}): {template!r}") from None
    pieces: list[tuple[str, str | None]] = []
    has_answer = False
    for k, (literal, fname, spec, conv) in enumerate(parsed):
        if has_answer:
            raise ValueError(f"template must end with its {{answer}} slot, got {template!r}")
        if literal:
            pieces.append((literal, None))
        if fname is None:
            continue
        if fname == "":
            raise ValueError(f"template has a positional field '{{}}'; name it: {template!r}")
        if fname == "answer":
            rest = "".join(lit + (f or "") for lit, f, _, _ in parsed[k + 1 :])
            if rest.strip():
                raise ValueError(f"template must end with its {{answer}} slot, got {template!r}")
            has_answer = True
            continue
        fmt = "{" + fname + (f"!{conv}" if conv else "") + (f":{spec}" if spec else "") + "}"
        pieces.append((fmt, fname.split(".")[0].split("[")[0]))
    # move the whitespace in front of the answer slot out of the prompt
    prefix = ""
    while pieces and pieces[-1][1] is None:
        text = pieces[-1][0]
        stripped = text.rstrip()
        prefix = text[len(stripped) :] + prefix
        if stripped:
            pieces[-1] = (stripped, None)
            break
        pieces.pop()
    if not has_answer and not prefix:
        prefix = " "
    return pieces, prefix
