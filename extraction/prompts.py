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

First distinct token: the tokens of ``answer_prefix + option`` in context are compared across
options; when they share leading tokens (``" (A)"`` / ``" (B)"`` share ``" ("``), the shared
prefix is appended to every prompt as context and each option is scored at its first token
after it, where the exact decomposition holds (it is the last input position). When the first
tokens after the shared prefix clash (stories260K's ARC options ``" A"``, ``" C"``, ``" D"`` all
begin with the bare ``"▁"`` while ``" B"`` is one token) the options cannot be scored at one
position and :class:`ValueError` says so. An option scored on a bare whitespace token (``"▁"``,
``"Ġ"``) gets a warning: the model is then read on the space, not on the word.

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

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["EncodedTask", "OptionTokens", "option_token_ids", "option_tokens", "encode_task",
           "N_OPTION_PROBES"]

N_OPTION_PROBES = 64  # prompts on which in-context option tokenisation is checked


@dataclass
class OptionTokens:
    """How the options are read: scored ids, the shared prefix fed as context, token strings."""

    option_ids: list[int]
    shared_prefix: list[int]
    tokens: list[str]
    shared_prefix_tokens: list[str]
    whitespace_options: list[str]


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

    def __post_init__(self):
        if self.demos_dropped is None:
            self.demos_dropped = np.zeros(len(self.input_ids), dtype=np.int64)

    @property
    def n_truncated(self) -> int:
        return int(np.count_nonzero(self.truncated))


def _ids(tokenizer, texts, *, special: bool) -> list[list[int]]:
    out = tokenizer(list(texts), add_special_tokens=special)["input_ids"]
    return [list(x) for x in out]


def render_chat(tokenizer, text: str) -> str:
    """``text`` as one user turn of the tokenizer's chat template, with the generation prompt.

    Raises
    ------
    ValueError
        The tokenizer has no chat template.
    """
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError(f"{type(tokenizer).__name__} has no chat template; extract without "
                         "chat_template (--chat-template) or use an instruct tokenizer")
    return tokenizer.apply_chat_template([{"role": "user", "content": text}],
                                         add_generation_prompt=True, tokenize=False)


def _contexts(tokenizer, task, probes: list[str], chat: bool) -> tuple[list[str], str]:
    """Text the answer follows, per probe prompt, and the answer prefix."""
    if chat:
        return [render_chat(tokenizer, p) for p in probes], ""
    return probes, task.answer_prefix()


def option_tokens(tokenizer, task, *, chat_template: bool = False) -> OptionTokens:
    """Score each option at its first token where the options differ, checked on the first
    ``N_OPTION_PROBES`` prompts; warn when a scored token is bare whitespace.

    Raises
    ------
    ValueError
        If the prompt's tokens are not a prefix of the tokens of prompt + answer (the answer
        merges into the prompt's last token), if the tokens read depend on the prompt, if one
        option is the shared prefix itself, or if the first tokens after the shared prefix
        clash (the message names the clashing options and the shared token).
    """
    probes = [task.prompt(i) for i in range(min(len(task), N_OPTION_PROBES))]
    contexts, prefix = _contexts(tokenizer, task, probes, chat_template)
    base = _ids(tokenizer, contexts, special=False)
    conts: list[list[list[int]]] = []       # [option][probe] -> continuation tokens
    for option in task.options:
        full = _ids(tokenizer, [p + prefix + option for p in contexts], special=False)
        rows = []
        for k, (b, f) in enumerate(zip(base, full)):
            if f[: len(b)] != b or len(f) <= len(b):
                raise ValueError(
                    f"option {option!r}: the tokens of prompt {k} are not a prefix of the tokens "
                    f"of prompt + {prefix + option!r}, so the answer cannot be read at the last "
                    "prompt position with this tokenizer"
                )
            rows.append(f[len(b):])
        conts.append(rows)
    first = [c[0] for c in conts]
    shared = 0
    while all(len(c) > shared for c in first) and len({c[shared] for c in first}) == 1:
        shared += 1
    for option, rows in zip(task.options, conts):
        if len(rows[0]) <= shared:
            raise ValueError(f"task {task.name!r}: options do not map to distinct first tokens: "
                             f"option {option!r} is the prefix shared by all options ({shared} "
                             f"token(s) {tokenizer.convert_ids_to_tokens(rows[0][:shared])}): "
                             "it has no token of its own to score")
        read = {tuple(r[: shared + 1]) for r in rows}
        if len(read) != 1:
            raise ValueError(
                f"option {option!r}: its first token depends on the prompt ({sorted(read)} over "
                f"the first {len(probes)} prompts)"
            )
    found = [c[shared] for c in first]
    clashes: dict[int, list[str]] = {}
    for option, tok in zip(task.options, found):
        clashes.setdefault(tok, []).append(option)
    clashes = {t: opts for t, opts in clashes.items() if len(opts) > 1}
    if clashes:
        desc = "; ".join(
            f"{' / '.join(repr(prefix + o) for o in opts)} all start with token {t} "
            f"({tokenizer.convert_ids_to_tokens(t)!r})"
            for t, opts in clashes.items()
        )
        where = f" after their shared prefix of {shared} token(s)" if shared else ""
        raise ValueError(
            f"task {task.name!r}: options do not map to distinct first tokens{where}: {desc}; "
            "they cannot be scored at one position (rephrase the options, e.g. without the "
            "leading space, or change the template's answer prefix)"
        )
    tokens = [str(t) for t in tokenizer.convert_ids_to_tokens(found)]
    bare = [o for o, t in zip(task.options, found) if not tokenizer.decode([t]).strip()]
    for option in bare:
        warnings.warn(f"option {prefix + option!r} is scored on the bare whitespace token "
                      f"{tokens[task.options.index(option)]!r}: the model is read on the space, "
                      "not on the word", stacklevel=3)
    pre = first[0][:shared]
    return OptionTokens([int(t) for t in found], [int(t) for t in pre], tokens,
                        [str(t) for t in tokenizer.convert_ids_to_tokens(pre)], bare)


def option_token_ids(tokenizer, task, *, chat_template: bool = False) -> list[int]:
    """The scored token id of each option (see :func:`option_tokens`)."""
    return option_tokens(tokenizer, task, chat_template=chat_template).option_ids


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
                       opts.shared_prefix_tokens, opts.whitespace_options, dropped)
