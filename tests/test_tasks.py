"""Tasks: Table 3 templates, loaders on the real files, demonstrations, custom tasks, bad input."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from extraction import SUPPORTED_TASKS, Task, get_task

SST2_TEMPLATE = "{text}\nQuestion: Was that sentence positive or negative? Answer: {answer}"


def _toy(n=6, **kw):
    records = [{"text": f"sentence number {i}", "y": i % 2} for i in range(n)]
    return Task.from_records(records, template=SST2_TEMPLATE, options=["negative", "positive"],
                             label="y", name="toy", **kw)


def test_from_records_prompt_segments_answer_prefix():
    task = _toy(truncatable=["text"])
    assert len(task) == 6
    assert task.prompt(1) == (
        "sentence number 1\nQuestion: Was that sentence positive or negative? Answer:")
    assert task.answer_prefix() == " "
    assert task.answer(1) == " positive" and task.answer(0) == " negative"
    segs = task.segments(1)
    assert "".join(t for t, _ in segs) == task.prompt(1)
    assert [tr for _, tr in segs] == [True, False]
    assert task.labels.dtype == np.int64 and task.labels.tolist() == [0, 1] * 3
