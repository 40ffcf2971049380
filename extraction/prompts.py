"""Tokenising a :class:`~extraction.tasks.Task`: option token ids in context, and truncation.

Option ids (paper appendix C: "the output vocabulary is restricted to the tokens used in options")
are found by in-context tokenisation: for a prompt ``p`` the tokens of ``p + answer_prefix +
option`` must start with the tokens of ``p`` (a stable prefix), and the next token is the
option's first token. This handles SentencePiece (``"▁positive"``) and byte-level BPE
(``"Ġpositive"``) leading-space tokens without special cases. The C first tokens must be
distinct, else :class:`ValueError` names the clashing options.

Truncation: a prompt with more than ``max_length`` tokens (special tokens included; nothing is
reserved because the model is read at the last prompt position) is shortened inside its
truncatable segments (the passage: BoolQ's passage, the AG News text, the RTE/MNLI premise), at a
word boundary, longest segment first, never in the question or the answer slot.
Only a tokenizer is needed (any Hugging Face tokenizer, slow or fast).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["EncodedTask", "option_token_ids", "encode_task", "N_OPTION_PROBES"]

N_OPTION_PROBES = 64  # prompts on which in-context option tokenisation is checked


@dataclass
class EncodedTask:
    """Token ids of every prompt of a task and the C option token ids.

    Attributes
    ----------
    input_ids : list of list of int
        One token list per example, unpadded, with the special tokens the tokenizer adds in
        front (BOS); special tokens a tokenizer appends at the end (EOS) are removed because the
        model is read at the last prompt token.
    option_ids : list of int
        The C distinct first tokens of ``answer_prefix + option`` in context.
    truncated : ndarray of bool, shape (N,)
        True where the passage was shortened to fit ``max_length``.
    """

    input_ids: list[list[int]]
    option_ids: list[int]
    truncated: np.ndarray

    @property
    def n_truncated(self) -> int:
        return int(np.count_nonzero(self.truncated))


def _ids(tokenizer, texts, *, special: bool) -> list[list[int]]:
    out = tokenizer(list(texts), add_special_tokens=special)["input_ids"]
    return [list(x) for x in out]


def option_token_ids(tokenizer, task) -> list[int]:
    """First token of each option as it follows the prompt, checked on the first
    ``N_OPTION_PROBES`` prompts.

    Raises
    ------
    ValueError
        If the prompt's tokens are not a prefix of the tokens of prompt + answer (the answer
        merges into the prompt's last token), if an option's first token depends on the prompt,
        or if two options share their first token (the message names the clashing options and
        the shared token).
    """
    prefix = task.answer_prefix()
    probes = [task.prompt(i) for i in range(min(len(task), N_OPTION_PROBES))]
    base = _ids(tokenizer, probes, special=False)
    found: list[int] = []
    for option in task.options:
        full = _ids(tokenizer, [p + prefix + option for p in probes], special=False)
        ids = set()
        for k, (b, f) in enumerate(zip(base, full)):
            if f[: len(b)] != b or len(f) <= len(b):
                raise ValueError(
                    f"option {option!r}: the tokens of prompt {k} are not a prefix of the tokens "
                    f"of prompt + {prefix + option!r}, so the answer cannot be read at the last "
                    "prompt position with this tokenizer"
                )
            ids.add(f[len(b)])
        if len(ids) != 1:
            raise ValueError(
                f"option {option!r}: its first token depends on the prompt ({sorted(ids)} over "
                f"the first {len(probes)} prompts)"
            )
        found.append(ids.pop())
    clashes = {}
    for option, tok in zip(task.options, found):
        clashes.setdefault(tok, []).append(option)
    clashes = {t: opts for t, opts in clashes.items() if len(opts) > 1}
    if clashes:
        desc = "; ".join(
            f"{' / '.join(repr(prefix + o) for o in opts)} all start with token {t} "
            f"({tokenizer.convert_ids_to_tokens(t)!r})"
            for t, opts in clashes.items()
        )
        raise ValueError(
            f"task {task.name!r}: options do not map to distinct first tokens: {desc}"
        )
    return [int(t) for t in found]


def _special_layout(tokenizer) -> tuple[int, int]:
    """Number of special tokens the tokenizer puts before and after a text."""
    probe = "Hello world"
    plain = _ids(tokenizer, [probe], special=False)[0]
    full = _ids(tokenizer, [probe], special=True)[0]
    for start in range(len(full) - len(plain) + 1):
        if full[start : start + len(plain)] == plain:
            return start, len(full) - start - len(plain)
    raise ValueError("cannot locate the text tokens among the tokenizer's special tokens")


def _truncate(tokenizer, segments, max_length: int, n_suffix: int, index: int) -> list[int]:
    """Shorten the truncatable segments (longest first, at word boundaries) until the prompt
    fits; binary search over the number of kept words of one segment at a time."""
    segs = [list(s) for s in segments]

    def encode() -> list[int]:
        ids = _ids(tokenizer, ["".join(t for t, _ in segs)], special=True)[0]
        return ids[: len(ids) - n_suffix] if n_suffix else ids

    order = sorted((k for k, (_, tr) in enumerate(segs) if tr), key=lambda k: -len(segs[k][0]))
    for k in order:
        text = segs[k][0]
        # cut points: ends of words (before each whitespace run) and the empty cut
        cuts = [0] + [j for j in range(1, len(text)) if text[j].isspace()
                      and not text[j - 1].isspace()]
        lo, hi = 0, len(cuts) - 1  # invariant: cuts[lo] fits (checked below), cuts[hi+1] doesn't
        segs[k][0] = ""
        if len(encode()) > max_length:
            continue  # even without this segment it is too long: empty it and go on
        while lo < hi:
            mid = (lo + hi + 1) // 2
            segs[k][0] = text[: cuts[mid]]
            if len(encode()) <= max_length:
                lo = mid
            else:
                hi = mid - 1
        segs[k][0] = text[: cuts[lo]]
        return encode()
    fixed = sum(len(t) for t, tr in segs if not tr)
    raise ValueError(
        f"example {index}: the prompt does not fit max_length={max_length} tokens even with its "
        f"truncatable passage removed ({len(encode())} tokens from {fixed} characters of "
        "template, question and demonstrations)"
    )


def encode_task(tokenizer, task, *, max_length: int | None) -> EncodedTask:
    """Tokenise every prompt of ``task`` and find the option ids.

    Parameters
    ----------
    tokenizer : transformers tokenizer
    task : Task
    max_length : int or None
        Longest allowed prompt in tokens (the model context); None disables truncation.

    Raises
    ------
    ValueError
        Option clashes (see :func:`option_token_ids`), or a prompt that cannot fit because its
        non-truncatable part alone is longer than ``max_length``.
    """
    if max_length is not None and (isinstance(max_length, bool) or int(max_length) != max_length
                                   or max_length < 1):
        raise ValueError(f"max_length must be a positive integer or None, got {max_length!r}")
    option_ids = option_token_ids(tokenizer, task)
    _, n_suffix = _special_layout(tokenizer)
    prompts = [task.prompt(i) for i in range(len(task))]
    input_ids = _ids(tokenizer, prompts, special=True)
    if n_suffix:
        input_ids = [ids[: len(ids) - n_suffix] for ids in input_ids]
    truncated = np.zeros(len(task), dtype=bool)
    if max_length is not None:
        for i, ids in enumerate(input_ids):
            if len(ids) > max_length:
                input_ids[i] = _truncate(tokenizer, task.segments(i), int(max_length), n_suffix, i)
                truncated[i] = True
    return EncodedTask(input_ids=input_ids, option_ids=option_ids, truncated=truncated)
