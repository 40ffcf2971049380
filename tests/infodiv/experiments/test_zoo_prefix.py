"""Frozen-prefix caching of the zoo's fine-tuning: training the top blocks on cached states of the
frozen bottom gives the losses and weights of the full forward with the same frozen bottom."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from infodiv.experiments.configs import ModelSpec  # noqa: E402
from infodiv.experiments.train import TrainConfig  # noqa: E402

SPEC = ModelSpec(3, width=32, heads=2, mlp=64, max_len=40)
CFG = TrainConfig(steps=30, batch_size=8, lr=3e-3, warmup=3, checkpoint_every=10)


@pytest.fixture(scope="module")
def prefix_data(shared_data_dir):
    from infodiv.experiments.data import subset, zoo_tasks
    from infodiv.experiments.tokenizer import train_tokenizer
    from infodiv.experiments.train import encode

    train, _ = zoo_tasks(shared_data_dir)
    train = subset(train, range(0, 5600, 28))            # 200 rows
    tok = train_tokenizer(train, vocab_size=400)
    seqs, option_ids = encode(tok, train, SPEC.max_len)
    return tok, seqs, [option_ids[int(y)] for y in train.labels]


def _model(tok, train_top):
    from infodiv.experiments.configs import build_model
    from infodiv.experiments.finetune import freeze_below

    model = build_model(SPEC, tok)
    freeze_below(model, train_top)
    return model


def test_top_forward_matches_full_forward(prefix_data):
    from infodiv.experiments.prefix import block_window, prefix_states, top_forward
    from infodiv.experiments.train import _forward_last

    tok, seqs, _ = prefix_data
    model = _model(tok, 2).eval()
    part = seqs[:12]                                  # unequal lengths: left padding
    assert len({len(s) for s in part}) > 1
    with torch.no_grad():
        full, _, mask = _forward_last(model, part, tok.pad_token_id)
        states = prefix_states(model, part, 1, tok.pad_token_id, batch_size=5)
        top, _, mask2 = top_forward(1)(model, states, tok.pad_token_id)
    assert [s.shape[0] for s in states] == [len(s) for s in part]
    assert torch.equal(mask, mask2)
    real = mask.bool()
    assert torch.allclose(full[real], top[real], atol=2e-5, rtol=1e-5)
    assert len(model.base_model.layers) == 3          # the window was restored
    with pytest.raises(ValueError, match="block window"):
        with block_window(model, 2, 5):
            pass


def test_cached_training_equals_uncached(prefix_data, tmp_path):
    from infodiv.experiments.prefix import PrefixCache, top_forward
    from infodiv.experiments.train import fit

    tok, seqs, targets = prefix_data
    pad = tok.pad_token_id
    plain, cached = _model(tok, 1), _model(tok, 1)
    start = 2
    states = PrefixCache(tmp_path / "cache", chunk=64).load_or_build(
        cached, seqs, start, pad, progress=False)
    for sub in "abc":
        (tmp_path / sub).mkdir()
    common = dict(seed=0, fingerprint={"t": 1}, pad_id=pad, progress=False, log=lambda m: None)
    _, loss_a, _ = fit(plain, seqs, targets, tmp_path / "a", CFG, **common)
    _, loss_b, _ = fit(cached, states, targets, tmp_path / "b", CFG, forward=top_forward(start),
                       **common)
    assert len(loss_a) == len(loss_b) == CFG.steps
    assert np.mean(loss_a[-5:]) < np.mean(loss_a[:5])           # it trains
    np.testing.assert_allclose(loss_b, loss_a, rtol=1e-4, atol=1e-5)
    pa, pb = dict(plain.named_parameters()), dict(cached.named_parameters())
    moved = 0
    for name, p in pa.items():
        q = pb[name]
        assert torch.allclose(p, q, atol=1e-4, rtol=1e-4), name
        moved += p.requires_grad and not torch.equal(p, _model(tok, 1).state_dict()[name])
    assert moved > 0
    # a deliberate off-by-one split (cache after block 1, train from block 2) is not the same
    wrong = PrefixCache(tmp_path / "wrong", chunk=64).load_or_build(
        _model(tok, 1), seqs, 1, pad, progress=False)
    _, loss_c, _ = fit(_model(tok, 1), wrong, targets, tmp_path / "c", CFG,
                       forward=top_forward(start), **common)
    assert abs(loss_c[0] - loss_a[0]) > 1e-3


def test_prefix_cache_resumes_and_refuses_other_weights(prefix_data, tmp_path):
    from infodiv.experiments.prefix import PrefixCache

    tok, seqs, _ = prefix_data
    model = _model(tok, 1)
    cache = PrefixCache(tmp_path, chunk=64)
    first = cache.load_or_build(model, seqs, 2, tok.pad_token_id, progress=False)
    (tmp_path / "chunk-000064.pt").unlink()                     # a killed build
    lines = []
    again = cache.load_or_build(model, seqs, 2, tok.pad_token_id, progress=False,
                                log=lines.append)
    assert lines == [f"prefix cache: reusing 3/4 chunk(s) in {tmp_path}"]
    assert all(torch.equal(a, b) for a, b in zip(first, again)) and len(again) == len(seqs)
    with torch.no_grad():
        model.base_model.layers[0].mlp.up_proj.weight.add_(1.0)
    with pytest.raises(ValueError, match="other weights"):
        cache.load_or_build(model, seqs, 2, tok.pad_token_id, progress=False)


def test_visited_examples_are_exactly_the_scheduled_batches():
    from infodiv.experiments.finetune import visited_examples
    from infodiv.experiments.train import batch_order

    cfg = TrainConfig(steps=7, batch_size=8, warmup=1)
    seen = visited_examples(200, cfg, seed=3)
    want = sorted({int(i) for s in range(7) for i in batch_order(200, s, 8, seed=3)})
    assert seen == want and len(seen) == 56          # one partial epoch: no repeats
    assert visited_examples(30, cfg, seed=3) == list(range(30))    # > one epoch: all
