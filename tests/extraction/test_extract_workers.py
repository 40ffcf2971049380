"""Data-parallel extraction (:mod:`extraction.parallel`): worker processes compute shards of the
same plan; the assembled run equals the one-process run bit for bit, and work already on disk
is not redone."""

from __future__ import annotations

import numpy as np
import pytest
from _tiny_models import tiny_model
from _tiny_tasks import assert_same_run, word_records

from extraction.parallel import deal_shards
from extraction.runner import extract
from extraction.shards import partial_dir
from extraction.tasks import Task


def test_deal_shards_balances_cost_and_keeps_the_first_shard_here():
    costs = [5, 100, 90, 10, 10, 80, 5]
    shares = deal_shards(costs, 2)
    assert 0 in shares[0] and sorted(shares[0] + shares[1]) == list(range(7))
    loads = [sum(costs[i] for i in s) for s in shares]
    assert max(loads) - min(loads) <= max(costs)    # the list-scheduling bound: 175 vs 125
    assert max(loads) < 195                          # dealing in turn: 195 vs 105
    assert deal_shards(costs, 1) == [list(range(7))]
    assert deal_shards([], 3) == [[], [], []]
    with pytest.raises(ValueError, match="workers must be >= 1"):
        deal_shards(costs, 0)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    folder = tmp_path_factory.mktemp("workers") / "model"
    model, tok = tiny_model("llama", folder)
    task = Task.from_records(word_records(24), template="{text} Question: Was that sentence "
                             "positive or negative? Answer:", options=["negative", "positive"],
                             label="label")
    return model, tok, task


@pytest.mark.slow
def test_workers_give_the_one_process_run(tiny, tmp_path):
    model, tok, task = tiny
    one = extract(model, tok, task, batch_size=2, out=tmp_path / "one", shard_size=4,
                  progress=False)
    two = extract(model, tok, task, batch_size=2, out=tmp_path / "two", shard_size=4,
                  progress=False, workers=2)
    assert_same_run(one, two)
    assert two.meta["n_batches"] == one.meta["n_batches"]
    assert not partial_dir(tmp_path / "two").exists()


@pytest.mark.slow
def test_worker_mode_writes_only_its_shards_and_the_caller_finishes(tiny, tmp_path):
    model, tok, task = tiny
    out = tmp_path / "run"
    assert extract(model, tok, task, batch_size=2, out=out, shard_size=4, progress=False,
                   only_shards=[1, 3]) is None
    written = sorted(p.name for p in partial_dir(out).glob("shard-*.npz"))
    assert written == ["shard-00001.npz", "shard-00003.npz"] and not out.exists()
    full = extract(model, tok, task, batch_size=2, out=out, shard_size=4, progress=False,
                   workers=2)
    ref = extract(model, tok, task, batch_size=2, out=tmp_path / "ref", shard_size=4,
                  progress=False)
    assert_same_run(full, ref)


def test_workers_need_an_output_folder(tiny):
    model, tok, task = tiny
    with pytest.raises(ValueError, match="workers > 1 needs out"):
        extract(model, tok, task, workers=2, progress=False)
    with pytest.raises(ValueError, match="workers must be a positive int"):
        extract(model, tok, task, workers=0, progress=False)
    assert np.isfinite(extract(model, tok, task, progress=False).u).all()
