"""k-hop pointer chasing: a synthetic 4-option task whose answer needs several layers.

One example (``hops`` = k, symbol pool of P words ``v0 .. v{P-1}``, options
``red green blue gold``): 4k distinct symbols are drawn and arranged as 4 chains of k pairs
``a b``; chain c starts at its first symbol and its last pair points at option word ``ends[c]``,
``ends`` a random permutation of the 4 options (every option ends exactly one chain, so counting
or frequency cannot tell the answer). The 4k pairs are shuffled and written
``"a b , a b , ... | s ->"``; the gold answer is the option at the end of the chain that starts
at the queried start symbol ``s``. The prompt is ``12k + 3`` tokens long (``<s>``, 4k pairs of 3
tokens less one comma, ``| s ->``); chance is 0.25.

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
mixture of hop counts, the same for every model; ``min_hops = hops``: no mixture). The held-out
set (``n_heldout`` examples, exactly ``hops`` hops, labels exactly balanced) is drawn from
``default_rng([HELDOUT_TAG, heldout_seed])``; a training example whose content key (start and
the set of pairs, which determine the answer) is a held-out key is redrawn, so no held-out
example is ever trained on.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

__all__ = ["OPTIONS", "TEMPLATE", "HopsTask", "Example", "make_example", "follow",
           "heldout_examples", "train_batch_examples", "hops_tokenizer", "to_task",
           "write_task_file", "read_task_file", "HopsStream", "prompt_len"]

OPTIONS = ("red", "green", "blue", "gold")
TEMPLATE = "{pairs} | {start} -> {answer}"
PUNCT = (",", "|", "->")
TRAIN_TAG, HELDOUT_TAG = 0x4F50, 0x4844     # separate stream families of the seed sequences
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
    n_heldout : int
        Held-out examples.
    heldout_seed : int
        Seed of the held-out draw.
    """

    hops: int = 4
    min_hops: int = 1
    symbols: int = 64
    n_heldout: int = 2000
    heldout_seed: int = 12345

    def __post_init__(self):
        for name in ("hops", "min_hops", "symbols", "n_heldout"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.min_hops > self.hops:
            raise ValueError(f"min_hops must be <= hops={self.hops}, got {self.min_hops}")
        if self.symbols < N_CHAINS * self.hops:
            raise ValueError(f"symbols must be >= {N_CHAINS}*hops = {N_CHAINS * self.hops}, "
                             f"got {self.symbols}")
        if isinstance(self.heldout_seed, bool) or not isinstance(self.heldout_seed, int) \
                or self.heldout_seed < 0:
            raise ValueError(f"heldout_seed must be a non-negative integer, got "
                             f"{self.heldout_seed!r}")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Example:
    """One example: ``pairs`` in prompt order (``(a, b)`` word pairs), ``start``, ``label``."""

    pairs: tuple
    start: str
    label: int

    @property
    def key(self) -> tuple:
        """Content key: the start and the set of pairs (they determine the answer)."""
        return (self.start, tuple(sorted(self.pairs)))

    def record(self) -> dict:
        return {"pairs": " , ".join(f"{a} {b}" for a, b in self.pairs), "start": self.start,
                "label": OPTIONS[self.label]}


def prompt_len(hops: int) -> int:
    """Tokens of a ``hops``-hop prompt: ``<s>`` + 4k pairs (3 tokens, one comma fewer) + 3."""
    return 1 + 3 * N_CHAINS * int(hops) - 1 + 3


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
    out, keys = [], set()
    for y in labels:
        for _ in range(1000):
            ex = make_example(rng, task.hops, task.symbols, int(y))
            if ex.key not in keys:
                break
        else:
            raise ValueError(f"cannot draw {task.n_heldout} distinct held-out examples from "
                             f"{task.symbols} symbols at {task.hops} hops")
        keys.add(ex.key)
        out.append(ex)
    return out


def train_batch_examples(task: HopsTask, seed: int, step: int, batch_size: int,
                         exclude=frozenset()) -> list[Example]:
    """The training examples of ``step`` for model seed ``seed`` (redrawn while their key is
    in ``exclude``, the held-out keys)."""
    rng = np.random.default_rng([TRAIN_TAG, int(seed), int(step)])
    out = []
    for _ in range(int(batch_size)):
        hops = int(rng.integers(task.min_hops, task.hops + 1))
        label = int(rng.integers(N_CHAINS))
        for _ in range(1000):
            ex = make_example(rng, hops, task.symbols, label)
            if ex.key not in exclude:
                break
        else:
            raise ValueError("every draw collides with the held-out set; raise symbols")
        out.append(ex)
    return out


def hops_tokenizer(symbols: int):
    """The word-level tokenizer of the task: a fixed vocabulary (specials, ``, | ->``, the P
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

    meta = {"task": name or f"hops{task.hops}", "source": "infodiv.zoo.hops",
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
        words = " , ".join(f"{a} {b}" for a, b in ex.pairs).split() + ["|", ex.start, "->"]
        return [self.bos] + [self.vocab[w] for w in words]

    def examples(self, step: int, batch_size: int, seed: int) -> list[Example]:
        return train_batch_examples(self.task, seed, step, batch_size, self.exclude)

    def batch(self, step: int, batch_size: int, seed: int):
        exs = self.examples(step, batch_size, seed)
        return [self.encode(e) for e in exs], [self.option_ids[e.label] for e in exs]
