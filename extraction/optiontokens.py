"""Which token each option of a :class:`~extraction.tasks.Task` is scored on, and the rule that
refuses options that would be scored on the wrong token.

Option ids (paper appendix C: "the output vocabulary is restricted to the tokens used in options")
are found by in-context tokenisation: for a prompt ``p`` the tokens of ``p + answer_prefix +
option`` must start with the tokens of ``p`` (a stable prefix), and the next token is the
option's first token. This handles SentencePiece (``"▁positive"``) and byte-level BPE
(``"Ġpositive"``) leading-space tokens without special cases. The C first tokens must be
distinct, else :class:`ValueError` names the clashing options.

First distinct token: the tokens of ``answer_prefix + option`` in context are compared across
options; when they share leading tokens (``" (A)"`` / ``" (B)"`` share ``" ("``), the shared
prefix is appended to every prompt as context and each option is scored at its first token
after it, where the exact decomposition holds (it is the last input position). When the first
tokens after the shared prefix clash (stories260K's ARC options ``" A"``, ``" C"``, ``" D"`` all
begin with the bare ``"▁"`` while ``" B"`` is one token) the options cannot be scored at one
position and :class:`ValueError` says so.

Whole words: an option must be scored on a token that is its whole word, not a fragment of it
(:func:`whole_word`). With SmolLM2's chat template ``"sport"`` follows ``"assistant\n"``
without a space and is split ``'s'`` + ``'port'``, while ``" sport"`` is the one token
``'Ġsport'``: scoring ``'s'`` would read the probability of every word that starts with an
s. Such an avoidable fragment (the option written with or without a leading space is one
whole-word token in the same context) is refused, in one line that lists every option with the
token it would be scored on. A fragment that no form avoids (a vocabulary without the word:
stories260K's ``' negative'`` starts with ``'▁ne'``) is scored with a warning and recorded
(``fragment_options``); on a bare whitespace token (``"▁"``, ``"Ġ"``) the warning says that the
model is read on the space (``whitespace_options``). Options are never scored on their
whole token sequence: the exact decomposition splits the logits of one position, and a sum of
log-probabilities over several positions has no such split.

Chat templates: the options follow the rendered prompt directly (no answer prefix);
:func:`render_chat` renders one user turn with the generation prompt.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field

__all__ = ["OptionTokens", "option_token_ids", "option_tokens", "whole_word", "render_chat",
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
    fragment_options: list[str] = field(default_factory=list)


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


def _continuations(tokenizer, contexts: list[str], answers: list[str]):
    """``[answer][context] -> token ids after the context``, or ``(answer, k)`` of the first
    context whose tokens are not a prefix of the tokens of context + answer."""
    base = _ids(tokenizer, contexts, special=False)
    conts: list[list[list[int]]] = []
    for answer in answers:
        full = _ids(tokenizer, [c + answer for c in contexts], special=False)
        rows = []
        for k, (b, f) in enumerate(zip(base, full)):
            if f[: len(b)] != b or len(f) <= len(b):
                return answer, k
            rows.append(f[len(b):])
        conts.append(rows)
    return conts


def _shared_length(first: list[list[int]]) -> int:
    """Number of leading tokens that every option's continuation shares."""
    shared = 0
    while all(len(c) > shared for c in first) and len({c[shared] for c in first}) == 1:
        shared += 1
    return shared


def whole_word(tokenizer, continuation: list[int], at: int) -> bool:
    """True when token ``continuation[at]`` is the answer's text from there up to a word
    boundary: its decoded text (leading whitespace stripped) is non-empty, starts the decoded
    rest of the answer, and either is all of it or is not followed by a letter or digit while
    itself ending in one (``'World'`` in ``'World'``, ``'Sci'`` in ``'Sci/Tech'``, ``'A'`` in
    ``'A)'``). ``'s'`` in ``'sport'``, ``'▁ne'`` in ``'negative'``, a bare ``'▁'`` or a partial
    UTF-8 byte are fragments."""
    token = tokenizer.decode([continuation[at]]).lstrip()
    rest = tokenizer.decode(continuation[at:]).lstrip()
    if not token or not rest.startswith(token):
        return False
    return len(token) == len(rest) or not (token[-1].isalnum() and rest[len(token)].isalnum())


#: the two ways of writing an answer after its context that the fragment rule compares
_FORMS = (("with a leading space", lambda a: " " + a.lstrip()),
          ("without a leading space", lambda a: a.lstrip()))


def _other_forms(tokenizer, context: str, answers: list[str]) -> dict:
    """``{form: [(answer text, whole word?, token string) per option]}``: each option written
    in each of :data:`_FORMS` (every option alike) after ``context``, scored at its first token
    after the options' shared prefix; a form that merges into the prompt is left out."""
    out = {}
    for form, write in _FORMS:
        texts = [write(a) for a in answers]
        conts = _continuations(tokenizer, [context], texts)
        if isinstance(conts, tuple):
            continue
        first = [c[0] for c in conts]
        shared = _shared_length(first)
        out[form] = [(t, len(c) > shared and whole_word(tokenizer, c, shared),
                      str(tokenizer.convert_ids_to_tokens(c[shared])) if len(c) > shared else "")
                     for t, c in zip(texts, first)]
    return out


def option_tokens(tokenizer, task, *, chat_template: bool = False) -> OptionTokens:
    """Score each option at its first token where the options differ, checked on the first
    ``N_OPTION_PROBES`` prompts, under the exact prompt used (with the chat template when it
    is on), and refuse options that would be scored on the wrong token.

    The rule, on the token each option would be scored on:

    - two options share it: refused;
    - it is a fragment of the option's word (:func:`whole_word`: ``'s'`` for ``'sport'``)
      while the option written the other way (with or without a leading space) is scored on a
      whole-word token in the same context (``' sport'`` is the one token ``'Ġsport'``):
      refused, since the probability of ``'s'`` is not that of ``'sport'``. This is the chat
      template's trap: its options follow ``"assistant\n"`` without the template's space, and
      a word that is one token after a space can be split without it;
    - it is a fragment and no such form exists (the vocabulary has no token for the word:
      stories260K's 512 tokens score ``' negative'`` on ``'▁ne'``): scored, with a warning
      (``fragment_options``); on a bare whitespace token (``'▁'``) the warning says so
      (``whitespace_options``).

    Options are never scored on several tokens: the exact decomposition splits the logits of
    one position, and a sum of log-probabilities over positions has no such split.

    Raises
    ------
    ValueError
        If the prompt's tokens are not a prefix of the tokens of prompt + answer (the answer
        merges into the prompt's last token), if the tokens read depend on the prompt, if one
        option is the shared prefix itself, if the first tokens after the shared prefix clash,
        or if an option is scored on an avoidable fragment. The message is one line that lists
        every option with the token it would be scored on.
    """
    probes = [task.prompt(i) for i in range(min(len(task), N_OPTION_PROBES))]
    contexts, prefix = _contexts(tokenizer, task, probes, chat_template)
    answers = [prefix + o for o in task.options]
    conts = _continuations(tokenizer, contexts, answers)
    if isinstance(conts, tuple):
        answer, k = conts
        raise ValueError(
            f"option {answer[len(prefix):]!r}: the tokens of prompt {k} are not a prefix of the "
            f"tokens of prompt + {answer!r}, so the answer cannot be read at the last prompt "
            "position with this tokenizer"
        )
    first = [c[0] for c in conts]
    shared = _shared_length(first)
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
    tokens = [str(t) for t in tokenizer.convert_ids_to_tokens(found)]
    how = " with the chat template" if chat_template else ""
    listing = "scored tokens" + how + ": " + ", ".join(
        f"{a!r} -> {t!r}" for a, t in zip(answers, tokens))
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
    fragments = [j for j, c in enumerate(first) if not whole_word(tokenizer, c, shared)]
    forms = _other_forms(tokenizer, contexts[0], answers) if fragments else {}
    avoidable = {j: next((form, *row[j]) for form, row in forms.items()
                         if row[j][0] != answers[j] and row[j][1])
                 for j in fragments
                 if any(row[j][0] != answers[j] and row[j][1] for row in forms.values())}
    if avoidable:
        desc = "; ".join(
            f"{answers[j]!r} is scored on {tokens[j]!r}, a fragment of the word, while "
            f"{text!r} ({form}) is the one token {tok!r}"
            for j, (form, text, _, tok) in sorted(avoidable.items()))
        advice = "use options whose first token is the whole word"
        spaced = forms.get(_FORMS[0][0])
        if chat_template and spaced and all(w for _, w, _ in spaced) \
                and len({t for _, _, t in spaced}) == len(spaced):
            advice += (" (e.g. each with a leading space: --options "
                       f"'{json.dumps([t for t, _, _ in spaced])}')")
        advice += ", other words" + (", or no chat template" if chat_template else "")
        raise ValueError(f"task {task.name!r}: options would be scored on a fragment of their "
                         f"word{how}: {desc} ({listing}); {advice}")
    bare = [task.options[j] for j in fragments if not tokenizer.decode([found[j]]).strip()]
    partial = [task.options[j] for j in fragments if task.options[j] not in bare]
    for option in bare:
        warnings.warn(f"option {prefix + option!r} is scored on the bare whitespace token "
                      f"{tokens[task.options.index(option)]!r}: the model is read on the space, "
                      "not on the word", stacklevel=3)
    if partial:
        warnings.warn(f"option(s) {', '.join(repr(prefix + o) for o in partial)} are scored on "
                      "a fragment of their word (this tokenizer has no whole-word token for "
                      f"them in either form; {listing}): the first step towards the word, not "
                      "the word's probability", stacklevel=3)
    pre = first[0][:shared]
    return OptionTokens([int(t) for t in found], [int(t) for t in pre], tokens,
                        [str(t) for t in tokenizer.convert_ids_to_tokens(pre)], bare,
                        [task.options[j] for j in fragments])


def option_token_ids(tokenizer, task, *, chat_template: bool = False) -> list[int]:
    """The scored token id of each option (see :func:`option_tokens`)."""
    return option_tokens(tokenizer, task, chat_template=chat_template).option_ids
