"""The depth grid's mixed held-out set (questions of 1..K hops in equal shares): drawn balanced
and apart from the K-hop set, never in training, scored per hop count, and fitted by the growth
laws beside the K-hop accuracy. Answers are checked by following the chains here."""

from __future__ import annotations

import json
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest

from infodiv.experiments.depth_analysis import mixed_figures
from infodiv.experiments.depth_seeds import derive
from infodiv.experiments.hops import (
    OPTIONS,
    HopsTask,
    example_hops,
    heldout_examples,
    mixed_heldout_examples,
)

TASK = HopsTask(hops=3, symbols=24, n_heldout=40, heldout_seed=7, n_mixed_heldout=120)


def _end(pairs, start):
    nxt = dict(pairs)
    while start in nxt:
        start = nxt[start]
    return start


def test_mixed_set_is_balanced_correct_and_apart_from_the_k_hop_set():
    held = heldout_examples(TASK)
    mixed = mixed_heldout_examples(TASK, {e.key for e in held})
    assert len(mixed) == 120
    hops = [len(e.pairs) // 4 for e in mixed]
    assert Counter(hops) == {1: 40, 2: 40, 3: 40}
    for h in (1, 2, 3):
        assert Counter(e.label for e, k in zip(mixed, hops) if k == h) == {0: 10, 1: 10,
                                                                           2: 10, 3: 10}
    assert all(OPTIONS[e.label] == _end(e.pairs, e.start) for e in mixed)
    assert not {e.key for e in mixed} & {e.key for e in held}
    assert len({e.key for e in mixed}) == 120
    assert [example_hops(e.record()["pairs"]) for e in mixed] == hops
    assert "n_mixed_heldout" not in HopsTask(hops=3).to_dict()


def test_the_root_writes_it_and_training_never_draws_it(tmp_path):
    pytest.importorskip("torch")
    from infodiv.experiments.depth import MIXED_FILE, prepare_depth_root, read_mixed
    from infodiv.experiments.train import TrainConfig

    cfg = TrainConfig(steps=2, batch_size=4, warmup=1, checkpoint_every=1)
    tok, stream, held = prepare_depth_root(tmp_path, TASK, cfg)
    task = read_mixed(tmp_path)
    assert (tmp_path / MIXED_FILE).is_file() and len(task.labels) == 120
    keys = {e.key for e in mixed_heldout_examples(TASK, {e.key for e in heldout_examples(TASK)})}
    assert keys <= stream.exclude
    drawn = {e.key for s in range(30) for e in stream.examples(s, 32, 0)}
    assert not drawn & keys
    # a second call checks the file instead of rewriting it
    (tmp_path / MIXED_FILE).write_text((tmp_path / MIXED_FILE).read_text().replace("v", "w", 1))
    with pytest.raises(ValueError, match="differs from the held-out set"):
        prepare_depth_root(tmp_path, TASK, cfg)
    assert read_mixed(tmp_path / "nowhere") is None


def test_mixed_figures_score_each_hop_count():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 4, 90)
    hops = np.repeat([1, 2, 3], 30)
    logits = rng.normal(size=(90, 4))
    logits[hops == 1, labels[hops == 1]] += 10        # 1-hop questions always right
    f = mixed_figures(SimpleNamespace(logits=logits, labels=labels), hops)
    right = logits.argmax(1) == labels
    assert f["accuracy"] == pytest.approx(right.mean()) and f["n"] == 90
    assert f["by_hops"]["1"]["accuracy"] == 1.0
    for h in (2, 3):
        assert f["by_hops"][str(h)]["accuracy"] == pytest.approx(right[hops == h].mean())
        lo, hi = f["by_hops"][str(h)]["accuracy_wilson95"]
        assert lo <= f["by_hops"][str(h)]["accuracy"] <= hi


def test_growth_is_fitted_on_the_mixed_accuracy_too():
    recs = []
    for d, (acc, mix) in {1: (0.25, 0.4), 2: (0.25, 0.55), 3: (1.0, 0.7), 4: (1.0, 0.8),
                          6: (1.0, 0.9)}.items():
        for s in range(3):
            recs.append({"model": f"m{d}-{s}", "depth": d, "seed": s, "shared": False,
                         "accuracy": acc, "at_chance": acc < 0.3, "mixed": {"accuracy": mix}})
    out = derive(recs, {})
    assert out["growth"]["winner"] == "step"
    g = out["growth_mixed"]
    assert g["depths"] == [1, 2, 3, 4, 6] and g["winner"] != "step"
    assert g["seed_mean"]["log"]["rss"] < g["seed_mean"]["step"]["rss"]
    assert derive([{k: v for k, v in r.items() if k != "mixed"} for r in recs],
                  {})["growth_mixed"] is None
    json.dumps(out)   # JSON-ready
