"""A tiny labelled task for the tiny models of ``_tiny_models`` (every word is in their
vocabulary), random records of those words, and the equality of two extractions."""

from __future__ import annotations

import numpy as np

from extraction.contributions import Contributions
from extraction.tasks import Task

TEXTS = ["the movie was good", "bad", "the plot was very boring and the actors were awful "
         "but I really loved it", "great fun", "it is not a good film", "this story is great",
         "awful awful"]
TEMPLATE = "{text} Question: Was that sentence positive or negative? Answer:"


def tiny_task(texts=TEXTS) -> Task:
    recs = [{"text": t, "label": i % 2} for i, t in enumerate(texts)]
    return Task.from_records(recs, template=TEMPLATE, options=["negative", "positive"],
                             label="label", name="tiny")


RECORD_WORDS = "the movie was very good bad great awful not fun boring it is plot story".split()


def word_records(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return [{"text": " ".join(rng.choice(RECORD_WORDS, size=int(rng.integers(1, 12)))),
             "label": int(i % 2)} for i in range(n)]


def assert_same_run(a: Contributions, b: Contributions) -> None:
    for name in ("u", "logits", "scale", "bias", "labels", "option_ids"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), name
    assert a.names == b.names
