"""Readouts of extract(): position=, vocab=, the memory guard, neuron top-k, unlabelled records,
demonstrations dropped to fit the context, options scored after their shared prefix."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _tiny_models import tiny_model, torch_threads
from _tiny_tasks import TEMPLATE, TEXTS, tiny_task

from extraction.contributions import Contributions
from extraction.prompts import encode_task
from extraction.runner import extract
from extraction.tasks import Task


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    with torch_threads(1):
        yield


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return tiny_model("llama", tmp_path_factory.mktemp("llama"))


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    return tiny_model("gpt2", tmp_path_factory.mktemp("gpt2"))


def _model_logits(model, ids, position, cols) -> np.ndarray:
    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0, position, cols].double().numpy()


def _close(a, b):
    assert np.abs(a - b).max() <= 1e-4 * (1 + np.abs(b).max()), (a, b)


@pytest.mark.parametrize("position", [-1, -2, 1, "per-example"])
def test_any_position_is_exact_against_the_model(gpt2, position):
    # GPT-2: learned absolute positions, so the read index under left padding must be right
    model, tok = gpt2
    task = tiny_task()
    enc = encode_task(tok, task, max_length=128)
    pos = position if position != "per-example" else [i % 3 - 3 for i in range(len(task))]
    c = extract(model, tok, task, position=pos, batch_size=3, progress=False)
    for i, ids in enumerate(enc.input_ids):
        p = pos if isinstance(pos, int) else pos[i]
        _close(c.readout()[i], _model_logits(model, ids, p, enc.option_ids))
    assert c.meta["positions"] == (np.full(len(task), pos) if isinstance(pos, int)
                                   else np.asarray(pos)).tolist()
    if position == -2:   # another position really is another readout
        last = extract(model, tok, task, batch_size=3, progress=False)
        assert np.abs(last.logits - c.logits).max() > 1e-3


def test_bad_positions_raise(llama):
    model, tok = llama
    with pytest.raises(ValueError, match=r"position -99 is outside the prompt of example 0"):
        extract(model, tok, tiny_task(), position=-99, progress=False)
    with pytest.raises(ValueError, match="position must be an int or 7 ints"):
        extract(model, tok, tiny_task(), position=[0, 1], progress=False)


def test_full_vocabulary_and_chosen_ids(llama):
    model, tok = llama
    task = tiny_task()
    enc = encode_task(tok, task, max_length=128)
    v = model.get_output_embeddings().weight.shape[0]
    full = extract(model, tok, task, vocab="full", batch_size=4, progress=False)
    assert full.u.shape == (len(task), 5, v) and full.options == tok.convert_ids_to_tokens(
        list(range(v)))
    assert full.labels.tolist() == [enc.option_ids[y] for y in task.labels]
    for i, ids in enumerate(enc.input_ids):
        _close(full.readout()[i], _model_logits(model, ids, -1, list(range(v))))
    other = [i for i in range(4, v) if i not in enc.option_ids][:2]
    ids = [other[0], enc.option_ids[1], other[1], enc.option_ids[0]]
    some = extract(model, tok, task, vocab=ids, progress=False)
    assert some.option_ids.tolist() == ids and some.labels.tolist() == [
        3 if y == 0 else 1 for y in task.labels]
    np.testing.assert_allclose(some.u, full.u[:, :, ids], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="must include the 2 option tokens; 1 missing"):
        extract(model, tok, task, vocab=[other[0], enc.option_ids[1]], progress=False)
    with pytest.raises(ValueError, match=r"u would take .* GiB \(N=7 × M=5 × C=\d+ float32\)"):
        extract(model, tok, task, vocab="full", max_bytes=1000, progress=False)


def test_neuron_top_k_keeps_sums_exact(llama, tmp_path):
    model, tok = llama
    task = tiny_task()
    block = extract(model, tok, task, progress=False)
    full = extract(model, tok, task, granularity="neuron", progress=False)
    top = extract(model, tok, task, granularity="neuron", neuron_top_k=5, progress=False,
                  out=tmp_path / "run")
    assert top.n_members == 1 + 2 + 2 * (5 + 1)          # embed, 2 attn, 2 × (5 + rest)
    sel = top.meta["neuron_top_k"]["selected"]
    assert set(sel) == {"L0.mlp#0", "L1.mlp#0"} and all(len(s) == 5 for s in sel.values())
    # the kept neurons are the largest by mean |u|, and they are the full run's members
    for group, kept in sel.items():
        cols = [j for j, m in enumerate(full.members) if m.name.startswith(group + ".n")]
        score = np.abs(full.u[:, cols]).mean(axis=(0, 2))
        assert sorted(kept) == sorted(np.argsort(-score)[:5].tolist())
        for k in kept:
            np.testing.assert_array_equal(top.u[:, top.names.index(f"{group}.n{k}")],
                                          full.u[:, full.names.index(f"{group}.n{k}")])
    for j, name in enumerate(block.names):
        parts = [k for k, n in enumerate(top.names) if n == name or n.startswith(name + ".")]
        assert np.abs(top.u[:, parts].sum(1) - block.u[:, j]).max() < 1e-5
        assert top.members[parts[-1]].junction and not any(
            top.members[k].junction for k in parts[:-1])
    loaded = Contributions.load(tmp_path / "run")
    assert loaded.members[3].neuron is not None and loaded.names == top.names


def test_unlabelled_records_extract_and_analyses_refuse(llama, tmp_path):
    model, tok = llama
    recs = [{"text": t} for t in TEXTS]
    task = Task.from_records(recs, template=TEMPLATE, options=["negative", "positive"],
                             label=None)
    assert task.n_unlabelled == len(TEXTS)
    c = extract(model, tok, task, out=tmp_path / "run", progress=False)
    assert c.meta["labelled"] is False and c.meta["n_unlabelled"] == len(TEXTS)
    np.testing.assert_allclose(c.u, extract(model, tok, tiny_task(), progress=False).u)
    loaded = Contributions.load(tmp_path / "run")
    assert loaded.raw_labels.tolist() == [-1] * len(TEXTS)
    with pytest.raises(ValueError, match="7 of 7 examples without a label"):
        loaded.labels  # noqa: B018 - the read itself is checked
    with pytest.raises(ValueError, match="without a label"):
        loaded.accuracy()
    with pytest.raises(ValueError, match="unlabelled; it has no answer"):
        task.with_demonstrations(1)


def test_demonstrations_dropped_per_example_to_fit(llama):
    model, tok = llama
    recs = [{"text": t, "label": i % 2} for i, t in enumerate(TEXTS)]
    task = Task.from_records(recs, template=TEMPLATE, options=["negative", "positive"],
                             label="label")      # no truncatable field
    shot = task.with_demonstrations(3, seed=0)
    lengths = [len(ids) for ids in encode_task(tok, shot, max_length=None).input_ids]
    limit = sorted(lengths)[len(lengths) // 2]
    c = extract(model, tok, shot, max_length=limit, progress=False)
    dropped = np.array(c.meta["demos_dropped"])
    assert (dropped > 0).any() and (dropped == 0).any() and c.meta["n_demos_dropped"] == \
        dropped.sum()
    enc = encode_task(tok, shot, max_length=limit)
    for i, ids in enumerate(enc.input_ids):
        assert len(ids) <= limit
        assert (dropped[i] > 0) == (lengths[i] > limit)
        # exactly the fewest demonstrations were dropped, the first ones first
        assert ids == tok(shot.prompt(i, drop=int(dropped[i])))["input_ids"]
        if dropped[i]:
            assert len(tok(shot.prompt(i, drop=int(dropped[i]) - 1))["input_ids"]) > limit
    with pytest.raises(ValueError, match="does not fit max_length=3"):
        encode_task(tok, shot, max_length=3)


def test_options_sharing_a_prefix_are_scored_after_it(llama):
    # "very good" / "very bad": "very" is fed as context; the model is read where they differ
    model, tok = llama
    recs = [{"text": t, "label": i % 2} for i, t in enumerate(TEXTS)]
    task = Task.from_records(recs, template="{text} Answer:", options=["very bad", "very good"],
                             label="label")
    c = extract(model, tok, task, batch_size=3, progress=False)
    assert c.meta["option_shared_prefix"] == ["very"]
    assert c.meta["option_tokens"] == ["bad", "good"]
    ids = tok.convert_tokens_to_ids(["bad", "good"])
    for i in range(len(task)):
        ref = _model_logits(model, tok(task.prompt(i) + " very")["input_ids"], -1, ids)
        _close(c.readout()[i], ref)
