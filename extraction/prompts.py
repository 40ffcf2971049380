"""Tokenising a :class:`~extraction.tasks.Task`: every prompt's token ids, the option
tokens (:mod:`extraction.optiontokens`: which token each option is scored on, and the rule
that refuses a shared token or an avoidable fragment of the word), and truncation.

Truncation: a prompt with more than ``max_length`` tokens (special tokens included; nothing is
reserved because the model is read at the last prompt position) is shortened inside its
truncatable segments (the passage: BoolQ's passage, the AG News text, the RTE/MNLI premise), at a
word boundary, longest segment first, never in the question or the answer slot.
Only a tokenizer is needed (any Hugging Face tokenizer, slow or fast).

Chat templates (``chat_template=True``): the prompt is one user message rendered with
``tokenizer.apply_chat_template(..., add_generation_prompt=True, tokenize=False)`` and the
rendered text is tokenised as it is, byte for byte (no whitespace stripped: with SmolLM2's
template the prompt ends in ``"<|im_start|>assistant\n"``); the options follow it directly (no
answer prefix).

Demonstrations: when a prompt cannot fit ``max_length`` even with its passage truncated, its
demonstrations are dropped one at a time, the first (farthest from the question) first; the
number dropped per example is kept (``EncodedTask.demos_dropped``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .optiontokens import (
    N_OPTION_PROBES,
    OptionTokens,
    _ids,
    option_token_ids,
    option_tokens,
    render_chat,
    whole_word,
)

__all__ = ["EncodedTask", "OptionTokens", "option_token_ids", "option_tokens", "encode_task",
           "whole_word", "N_OPTION_PROBES"]



@dataclass
class EncodedTask:
    """Token ids of every prompt of a task and the C option token ids.

    Attributes
    ----------
    input_ids : list of list of int
        One token list per example, unpadded, with the special tokens the tokenizer adds in
        front (BOS) and the options' shared prefix at the end; special tokens a tokenizer
        appends at the end (EOS) are removed because the model is read at the last token.
    option_ids : list of int
        The C distinct scored tokens (first token of each option after the shared prefix).
    truncated : ndarray of bool, shape (N,)
        True where the passage was shortened to fit ``max_length``.
    option_tokens, shared_prefix_tokens : list of str
        Token strings of the scored ids and of the shared prefix.
    whitespace_options : list of str
        Options scored on a bare whitespace token (a warning was issued).
    fragment_options : list of str
        Options scored on a fragment of their word, bare whitespace included (unavoidable
        with this tokenizer; a warning was issued). See :func:`option_tokens`.
    demos_dropped : ndarray of int, shape (N,)
        Demonstrations dropped from each prompt to fit ``max_length``.
    """

    input_ids: list[list[int]]
    option_ids: list[int]
    truncated: np.ndarray
    option_tokens: list[str] = field(default_factory=list)
    shared_prefix: list[int] = field(default_factory=list)
    shared_prefix_tokens: list[str] = field(default_factory=list)
    whitespace_options: list[str] = field(default_factory=list)
    demos_dropped: np.ndarray | None = None
    fragment_options: list[str] = field(default_factory=list)

    def __post_init__(self):
        if self.demos_dropped is None:
            self.demos_dropped = np.zeros(len(self.input_ids), dtype=np.int64)

    @property
    def n_truncated(self) -> int:
        return int(np.count_nonzero(self.truncated))


def _special_layout(tokenizer) -> tuple[int, int]:
    """Number of special tokens the tokenizer puts before and after a text."""
    probe = "Hello world"
    plain = _ids(tokenizer, [probe], special=False)[0]
    full = _ids(tokenizer, [probe], special=True)[0]
    for start in range(len(full) - len(plain) + 1):
        if full[start : start + len(plain)] == plain:
            return start, len(full) - start - len(plain)
    raise ValueError("cannot locate the text tokens among the tokenizer's special tokens")


def _encoder(tokenizer, chat: bool, tail: list[int]) -> Callable[[list[str]], list[list[int]]]:
    """Texts -> input ids: the tokenizer's specials (or the chat template) + the shared tail."""
    if chat:
        def encode(texts):
            return [ids + tail for ids in _ids(tokenizer, [render_chat(tokenizer, t)
                                                           for t in texts], special=False)]
        return encode
    _, n_suffix = _special_layout(tokenizer)

    def encode(texts):
        out = _ids(tokenizer, texts, special=True)
        return [(ids[: len(ids) - n_suffix] if n_suffix else ids) + tail for ids in out]
    return encode


def _truncate(encode, segments, max_length: int, index: int) -> list[int]:
    """Shorten the truncatable segments (longest first, at word boundaries) until the prompt
    fits; binary search over the number of kept words of one segment at a time."""
    segs = [list(s) for s in segments]

    def ids() -> list[int]:
        return encode(["".join(t for t, _ in segs)])[0]

    if len(ids()) <= max_length:
        return ids()
    order = sorted((k for k, (_, tr) in enumerate(segs) if tr), key=lambda k: -len(segs[k][0]))
    for k in order:
        text = segs[k][0]
        # cut points: ends of words (before each whitespace run) and the empty cut
        cuts = [0] + [j for j in range(1, len(text)) if text[j].isspace()
                      and not text[j - 1].isspace()]
        lo, hi = 0, len(cuts) - 1  # invariant: cuts[lo] fits (checked below), cuts[hi+1] doesn't
        segs[k][0] = ""
        if len(ids()) > max_length:
            continue  # even without this segment it is too long: empty it and go on
        while lo < hi:
            mid = (lo + hi + 1) // 2
            segs[k][0] = text[: cuts[mid]]
            if len(ids()) <= max_length:
                lo = mid
            else:
                hi = mid - 1
        segs[k][0] = text[: cuts[lo]]
        return ids()
    fixed = sum(len(t) for t, tr in segs if not tr)
    raise ValueError(
        f"example {index}: the prompt does not fit max_length={max_length} tokens even with its "
        f"truncatable passage removed ({len(ids())} tokens from {fixed} characters of "
        "template, question and demonstrations)"
    )


def _fit(encode, task, i: int, max_length: int) -> tuple[list[int], int]:
    """Truncate the passage of example ``i``; drop demonstrations while it still cannot fit."""
    n_demos = task.n_demonstrations(i)
    for drop in range(n_demos + 1):
        try:
            return _truncate(encode, task.segments(i, drop=drop), max_length, i), drop
        except ValueError:
            if drop == n_demos:
                raise
    raise AssertionError("unreachable")


def encode_task(tokenizer, task, *, max_length: int | None,
                chat_template: bool = False) -> EncodedTask:
    """Tokenise every prompt of ``task`` and find the option ids.

    Parameters
    ----------
    tokenizer : transformers tokenizer
    task : Task
    max_length : int or None
        Longest allowed prompt in tokens (the model context); None disables truncation.
    chat_template : bool
        Render every prompt with the tokenizer's chat template (see the module docstring).

    Raises
    ------
    ValueError
        Options that cannot be scored (see :func:`option_tokens`), or a prompt that cannot fit
        because its non-truncatable part alone, without demonstrations, is longer than
        ``max_length``.
    """
    if max_length is not None and (isinstance(max_length, bool) or int(max_length) != max_length
                                   or max_length < 1):
        raise ValueError(f"max_length must be a positive integer or None, got {max_length!r}")
    opts = option_tokens(tokenizer, task, chat_template=chat_template)
    encode = _encoder(tokenizer, chat_template, opts.shared_prefix)
    input_ids = encode([task.prompt(i) for i in range(len(task))])
    truncated = np.zeros(len(task), dtype=bool)
    dropped = np.zeros(len(task), dtype=np.int64)
    if max_length is not None:
        for i, ids in enumerate(input_ids):
            if len(ids) > max_length:
                input_ids[i], dropped[i] = _fit(encode, task, i, int(max_length))
                truncated[i] = len(encode([task.prompt(i, drop=int(dropped[i]))])[0]) > len(
                    input_ids[i])
    return EncodedTask(input_ids, opts.option_ids, truncated, opts.tokens, opts.shared_prefix,
                       opts.shared_prefix_tokens, opts.whitespace_options, dropped,
                       opts.fragment_options)
