"""k-hop pointer chasing: a synthetic 4-option task whose answer needs several layers.

One example (``hops`` = k, symbol pool of P words ``v0 .. v{P-1}``, options
``red green blue gold``): 4k distinct symbols are drawn and arranged as 4 chains of k pairs
``a b``; chain c starts at its first symbol and its last pair points at option word ``ends[c]``,
``ends`` a random permutation of the 4 options (every option ends exactly one chain, so counting
or frequency cannot tell the answer). The 4k pairs are shuffled and written
``"a b , a b , ... | s"`` (the question is the start symbol ``s`` itself, as in the
``... A B ... A`` form of induction); the gold answer is the option at the end of the chain that
starts at ``s``. The prompt is ``12k + 2`` tokens long (``<s>``, 4k pairs of 3 tokens less one
comma, ``| s``); chance is 0.25.

Why depth: a transformer block reads the pairs through attention, so one block can only relate
the last position to tokens by their own content and position, not by the token that precedes
them; following a pointer needs one block to attach each ``a`` to its ``b`` and another to look
the current symbol up, and composing k lookups needs more blocks (one-layer transformers cannot
compose two lookups: Sanford, Hsu & Telgarsky 2024, "Transformers, parallel computation, and
logarithmic depth"; k hops fit in O(log k) layers by pointer doubling, and in k + 1 by
sequential lookup).

Training stream: step s of a model with seed r draws its batch from
``numpy.random.default_rng([TRAIN_TAG, r, s])``: the same data order per seed, whatever the
interruptions. Each training example has k_i hops, k_i uniform on ``[min_hops, hops]`` (a
mixture of chain lengths, the same for every model; ``min_hops = hops``: no mixture), and asks
``queries`` = Q questions in a row, ``"pairs | x1 o1 | x2 o2 ... | xQ"``, each x_j uniform
over the 4·k_i symbols that start a pair (so a question needs 1..k_i hops) and each answer o_j
(the end of x_j's chain) supervised at x_j's position: Q supervised positions per
sequence instead of one. A fraction ``next_frac`` of the earlier questions are one-hop lookups
``"> x y"`` instead (y the successor of x, a symbol or an option): their answer ranges over the
whole pool, which gives the lookup the answer composes a gradient where the 4-option end
questions alone sit on the ``ln 4`` plateau. The last question is always an end question and
the evaluated prompt is the one-question form at a chain start. The held-out set (``n_heldout``
examples, exactly ``hops`` hops from a chain start, labels exactly balanced) is drawn from
``default_rng([HELDOUT_TAG, heldout_seed])``; held-out examples have distinct pair sets, and a
training example whose pair set is a held-out one is redrawn, so no held-out example (nor any
other question on its pairs) is ever trained on.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .checks import check_int_fields, non_negative, positive

__all__ = ["OPTIONS", "TEMPLATE", "HopsTask", "Example", "make_example", "follow",
           "heldout_examples", "train_batch_examples", "hops_tokenizer", "to_task",
           "write_task_file", "read_task_file", "HopsStream", "prompt_len", "train_len"]

OPTIONS = ("red", "green", "blue", "gold")
TEMPLATE = "{pairs} | {start} {answer}"
PUNCT = (",", "|", ">")
TRAIN_TAG, HELDOUT_TAG = 0x4F50, 0x4844     # separate stream families of the seed sequences
MIXED_TAG = 0x4D58
N_CHAINS = len(OPTIONS)


@dataclass(frozen=True)
class HopsTask:
    """Settings of one pointer-chasing task (shared by every model of a grid).

    Attributes
    ----------
    hops : int
        k, the hops of every held-out example (and the most hops of a training example).
    min_hops : int
        Fewest hops of a training example (uniform mixture on ``[min_hops, hops]``).
    symbols : int
        Symbol pool size P (>= 4·hops).
    queries : int
        Questions per training sequence (Q >= 1).
    next_frac : float
        Fraction of the Q - 1 earlier questions that are one-hop lookups ``> x``.
    n_heldout : int
        Held-out examples.
    heldout_seed : int
        Seed of the held-out draw.
    heldout_frac : float
        Share of the training sequences posed exactly as the held-out question: ``hops`` hops,
        one question, nothing answered before it (0: none, every sequence of the mixture
        above; the held-out format then never occurs in training).
    n_mixed_heldout : int
        Size of a second held-out set whose questions take 1..``hops`` hops in equal shares
        (:func:`mixed_heldout_examples`; 0: none): its accuracy grows gradually with depth
        where the K-hop set jumps, so the growth laws can be told apart on it.
    """

    hops: int = positive(4)
    min_hops: int = positive(1)
    symbols: int = positive(64)
    queries: int = positive(8)
    next_frac: float = 0.5
    n_heldout: int = positive(2000)
    heldout_seed: int = non_negative(12345)
    heldout_frac: float = 0.0
    n_mixed_heldout: int = non_negative(0)

    def __post_init__(self):
        check_int_fields(self)
        for name in ("next_frac", "heldout_frac"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {v!r}")
        if self.min_hops > self.hops:
            raise ValueError(f"min_hops must be <= hops={self.hops}, got {self.min_hops}")
        if self.symbols < N_CHAINS * self.hops:
            raise ValueError(f"symbols must be >= {N_CHAINS}*hops = {N_CHAINS * self.hops}, "
                             f"got {self.symbols}")

    def to_dict(self) -> dict:
        """The fields; ``heldout_frac`` and ``n_mixed_heldout`` only when set (a grid trained
        without them keeps its settings and resume fingerprints)."""
        d = asdict(self)
        for name in ("heldout_frac", "n_mixed_heldout"):
            if not d[name]:
                del d[name]
        return d


@dataclass(frozen=True)
class Example:
    """One example: ``pairs`` in prompt order (``(a, b)`` word pairs), the question ``start``
    and its gold option index ``label``; a training example may ask earlier questions
    ``before``, answered in the prompt: ``(marker, symbol, answer word)`` with marker ``|``
    (end of the chain) or ``>`` (successor)."""

    pairs: tuple
    start: str
    label: int
    before: tuple = ()

    @property
    def key(self) -> tuple:
        """Content key: the set of pairs (it determines every answer)."""
        return tuple(sorted(self.pairs))

    def record(self) -> dict:
        return {"pairs": " , ".join(f"{a} {b}" for a, b in self.pairs), "start": self.start,
                "label": OPTIONS[self.label]}


def prompt_len(hops: int, queries: int = 1) -> int:
    """Tokens of a ``hops``-hop prompt: ``<s>`` + 4k pairs (3 tokens, one comma fewer) + 2,
    and 3 more per earlier answered question."""
    return 1 + 3 * N_CHAINS * int(hops) - 1 + 2 + 3 * (int(queries) - 1)


def train_len(task: HopsTask) -> int:
    """Longest training sequence of ``task`` (the context the models need)."""
    return prompt_len(task.hops, task.queries)


def make_example(rng, hops: int, symbols: int, label: int) -> Example:
    """Draw one example of ``hops`` hops whose gold option is ``label``."""
    syms = rng.choice(symbols, size=N_CHAINS * hops, replace=False).reshape(N_CHAINS, hops)
    ends = rng.permutation(N_CHAINS)
    pairs = []
    for c in range(N_CHAINS):
        words = [f"v{s}" for s in syms[c]] + [OPTIONS[ends[c]]]
        pairs += [(words[j], words[j + 1]) for j in range(hops)]
    order = rng.permutation(len(pairs))
    chain = int(np.flatnonzero(ends == int(label))[0])
    return Example(tuple(pairs[i] for i in order), f"v{syms[chain, 0]}", int(label))


def follow(pairs, start: str) -> str:
    """The end of the chain from ``start`` (follows ``a -> b`` until b has no successor)."""
    nxt = dict(pairs)
    cur, seen = start, set()
    while cur in nxt:
        if cur in seen:
            raise ValueError(f"pairs hold a cycle through {cur!r}")
        seen.add(cur)
        cur = nxt[cur]
    return cur


def heldout_examples(task: HopsTask) -> list[Example]:
    """The held-out set: ``n_heldout`` distinct examples of exactly ``hops`` hops, labels
    balanced (``i mod 4`` permuted), from ``default_rng([HELDOUT_TAG, heldout_seed])``."""
    rng = np.random.default_rng([HELDOUT_TAG, task.heldout_seed])
    labels = rng.permutation(np.arange(task.n_heldout) % N_CHAINS)
    return _distinct(rng, [task.hops] * task.n_heldout, labels, task.symbols, set(),
                     f"held-out examples at {task.hops} hops")


def _distinct(rng, hops, labels, symbols: int, keys: set, what: str) -> list[Example]:
    """One example per ``(hops[i], labels[i])``, each redrawn (up to 1000 times) until its pair
    set is not in ``keys`` (which grows with every draw)."""
    out = []
    for h, y in zip(hops, labels):
        for _ in range(1000):
            ex = make_example(rng, int(h), symbols, int(y))
            if ex.key not in keys:
                break
        else:
            raise ValueError(f"cannot draw {len(labels)} distinct {what} from {symbols} "
                             "symbols")
        keys.add(ex.key)
        out.append(ex)
    return out


def mixed_heldout_examples(task: HopsTask, exclude=frozenset()) -> list[Example]:
    """The mixed held-out set: ``n_mixed_heldout`` distinct examples, the i-th of
    ``1 + (i mod hops)`` hops (every hop count in equal shares) with labels balanced within each
    hop count, none sharing its pairs with ``exclude`` (the K-hop held-out keys), from
    ``default_rng([MIXED_TAG, heldout_seed])``."""
    rng = np.random.default_rng([MIXED_TAG, task.heldout_seed])
    n = task.n_mixed_heldout
    hops = 1 + np.arange(n) % task.hops
    labels = np.empty(n, dtype=int)
    for h in range(1, task.hops + 1):
        at = np.flatnonzero(hops == h)
        labels[at] = rng.permutation(np.arange(at.size) % N_CHAINS)
    return _distinct(rng, hops, labels, task.symbols, set(exclude), "mixed held-out examples")


def example_hops(pairs: str) -> int:
    """Hops of a task-file row from its ``pairs`` field (4 chains of k pairs each)."""
    return len(pairs.split(" , ")) // N_CHAINS


def train_batch_examples(task: HopsTask, seed: int, step: int, batch_size: int,
                         exclude=frozenset()) -> list[Example]:
    """The training examples of ``step`` for model seed ``seed`` (redrawn while their key is
    in ``exclude``, the held-out keys)."""
    rng = np.random.default_rng([TRAIN_TAG, int(seed), int(step)])
    out = []
    for _ in range(int(batch_size)):
        # drawn only when set, so that a stream without it is the same as before it existed
        plain = bool(task.heldout_frac) and rng.random() < task.heldout_frac
        hops = task.hops if plain else int(rng.integers(task.min_hops, task.hops + 1))
        label = int(rng.integers(N_CHAINS))
        for _ in range(1000):
            ex = make_example(rng, hops, task.symbols, label)
            if ex.key not in exclude:
                break
        else:
            raise ValueError("every draw collides with the held-out set; raise symbols")
        if task.queries > 1 and not plain:
            succ = dict(ex.pairs)
            ends = {a: follow(ex.pairs, a) for a in succ}
            sources = sorted(succ)
            asked = [sources[int(i)] for i in rng.integers(len(sources), size=task.queries)]
            nxt = rng.random(task.queries - 1) < task.next_frac
            before = tuple((">", a, succ[a]) if n else ("|", a, ends[a])
                           for a, n in zip(asked[:-1], nxt))
            ex = Example(ex.pairs, asked[-1], OPTIONS.index(ends[asked[-1]]), before)
        out.append(ex)
    return out


def hops_tokenizer(symbols: int):
    """The word-level tokenizer of the task: a fixed vocabulary (specials, ``, |``, the P
    symbols, the 4 options), whitespace pre-tokenizer, ``<s>`` prepended; loads back through
    ``from_pretrained`` like the AG News zoo tokenizer."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    from .tokenizer import SPECIALS

    words = list(SPECIALS) + list(PUNCT) + [f"v{i}" for i in range(int(symbols))] + list(OPTIONS)
    vocab = {w: i for i, w in enumerate(words)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", vocab["<s>"])])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>", pad_token="<pad>")


def to_task(examples, task: HopsTask, *, name: str | None = None):
    """An :class:`extraction.Task` of ``examples`` (template :data:`TEMPLATE`, options
    :data:`OPTIONS`)."""
    from extraction import Task

    meta = {"task": name or f"hops{task.hops}", "source": "infodiv.experiments.hops",
            "hops_task": task.to_dict(), "n": len(examples), "shots": 0, "seed": None,
            "template": TEMPLATE, "options": list(OPTIONS)}
    return Task(name or f"hops{task.hops}", TEMPLATE, list(OPTIONS),
                [{k: v for k, v in e.record().items() if k != "label"} for e in examples],
                np.array([e.label for e in examples], dtype=np.int64), meta)


def write_task_file(examples, path) -> Path:
    """Write ``examples`` as a ``.jsonl`` task file (fields ``pairs start label``) and a
    sidecar ``<stem>.task.json`` with the template, options and label field that
    ``infodiv extract --task-file`` needs."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(e.record()) + "\n" for e in examples))
    os.replace(tmp, path)
    side = path.with_name(path.stem + ".task.json")
    side.write_text(json.dumps({"template": TEMPLATE, "options": list(OPTIONS),
                                "label_field": "label"}, indent=1))
    return path


def read_task_file(path, *, name: str | None = None):
    """The task of a file written by :func:`write_task_file`, through the toolkit's reader
    (:func:`extraction.taskfiles.load_task_file`)."""
    from extraction.taskfiles import load_task_file

    path = Path(path)
    side = json.loads(path.with_name(path.stem + ".task.json").read_text())
    return load_task_file(path, template=side["template"], options=side["options"],
                          label_field=side["label_field"], name=name)


class HopsStream:
    """The training stream of a model: ``batch(step, batch_size, seed) -> (seqs, targets)``
    (token ids as :func:`extraction.prompts.encode_task` gives them, answer token ids), with
    the held-out keys excluded. ``option_ids`` are the answer tokens."""

    def __init__(self, task: HopsTask, tokenizer, heldout=()):
        self.task = task
        self.vocab = tokenizer.get_vocab()
        self.bos = self.vocab["<s>"]
        self.option_ids = [self.vocab[o] for o in OPTIONS]
        self.exclude = frozenset(e.key for e in heldout)

    def describe(self) -> dict:
        return {"hops_task": self.task.to_dict(), "n_excluded": len(self.exclude)}

    def encode(self, ex: Example) -> list[int]:
        """Token ids of ``ex`` (earlier questions answered in the prompt, then the last)."""
        words = " , ".join(f"{a} {b}" for a, b in ex.pairs).split()
        for marker, sym, ans in ex.before:
            words += [marker, sym, ans]
        words += ["|", ex.start]
        return [self.bos] + [self.vocab[w] for w in words]

    def targets(self, ex: Example) -> list[tuple[int, int]]:
        """``(position, answer token id)`` of every question of ``ex`` (positions from the
        first token; the last is the last position)."""
        n = len(self.encode(ex))
        out, pos = [], n - 1 - 3 * len(ex.before)
        for _, _, ans in ex.before:
            out.append((pos, self.vocab[ans]))
            pos += 3
        return out + [(n - 1, self.option_ids[ex.label])]

    def examples(self, step: int, batch_size: int, seed: int) -> list[Example]:
        return train_batch_examples(self.task, seed, step, batch_size, self.exclude)

    def batch(self, step: int, batch_size: int, seed: int):
        """``(token id lists, targets)``: a target is the last position's answer token id, or
        with several questions the list of ``(position, token id)`` of every answer."""
        exs = self.examples(step, batch_size, seed)
        if self.task.queries == 1:
            return [self.encode(e) for e in exs], [self.option_ids[e.label] for e in exs]
        return [self.encode(e) for e in exs], [self.targets(e) for e in exs]
