"""Exact extraction on tiny random-weight models of every supported family (float32).

Each family is built from its config, saved with ``save_pretrained`` and loaded back with
``from_pretrained`` (tests/_tiny_models.py). Prompts of different lengths share left-padded
batches, so wrong attention masks or position ids would show up against the per-prompt
references computed here independently of the extraction code.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _tiny_models import FAMILIES, MID_RESIDUAL, tiny_model, torch_threads

from extraction.prompts import encode_task
from extraction.runner import extract
from extraction.tasks import Task

TEXTS = ["the movie was good", "bad", "the plot was very boring and the actors were awful "
         "but I really loved it", "great fun", "it is not a good film", "this story is great",
         "awful awful"]
TEMPLATE = "{text} Question: Was that sentence positive or negative? Answer:"


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    with torch_threads(1):   # several times faster on 2 shared cores
        yield


def tiny_task(texts=TEXTS) -> Task:
    recs = [{"text": t, "label": i % 2} for i, t in enumerate(texts)]
    return Task.from_records(recs, template=TEMPLATE, options=["negative", "positive"],
                             label="label", name="tiny")


def _tol(ref) -> np.ndarray:
    return 1e-4 * (1 + np.abs(ref).max(axis=-1))


@pytest.fixture(scope="module", params=FAMILIES)
def fam(request, tmp_path_factory):
    family = request.param
    model, tok = tiny_model(family, tmp_path_factory.mktemp(family))
    task = tiny_task()
    model.train()   # dropout is on in these configs: extract must switch it off
    block = extract(model, tok, task, batch_size=3, progress=False)
    model.train()
    head = extract(model, tok, task, batch_size=4, progress=False, granularity="head")
    model.eval()
    enc = encode_task(tok, task, max_length=128)
    return family, model, tok, task, enc, block, head


def _plain_last_logits(model, ids, option_ids) -> np.ndarray:
    with torch.no_grad():
        out = model(torch.tensor([ids]), use_cache=False)
    return out.logits[0, -1, option_ids].double().numpy()


def test_member_table(fam):
    family, model, _, _, _, block, head = fam
    n_blocks = 2
    execs = 2 * n_blocks if family == "llama_shared" else n_blocks
    assert block.n_members == 2 * execs + 1          # M = 4L + 1 for the shared model
    assert block.names[0] == "embed" and block.members[0].kind == "embed"
    assert block.names[1:3] == ["L0.attn#0", "L0.mlp#0"]
    if family == "llama_shared":
        assert block.names[3:5] == ["L0.attn#1", "L0.mlp#1"]
        assert [m.execution for m in block.members[1:]] == [0, 0, 1, 1] * 2
    heads = model.config.num_attention_heads
    has_bias = family in ("gpt2", "gpt_neox", "qwen3")   # c_proj / dense / o_proj bias
    assert head.n_members == 1 + execs * (heads + has_bias) + execs
    assert ("L0.attn#0.bias" in head.names) == has_bias
    parallel = family == "gpt_neox"
    assert [m.junction for m in block.members] == [True] + [not parallel, True] * execs


def test_sum_of_members_equals_logits(fam):
    *_, block, head = fam
    for c in (block, head):
        err = c.exactness_error()
        assert np.all(err <= _tol(c.logits)), err
        np.testing.assert_allclose(c.meta["exactness_error"], err, rtol=1e-5, atol=1e-9)
        assert c.meta["exactness_ok"] and c.meta["max_exactness_error"] == pytest.approx(err.max())
        assert c.u.dtype == np.float32


def test_logits_match_plain_unpadded_forward(fam):
    family, model, _, _, enc, block, _ = fam
    for i, ids in enumerate(enc.input_ids):
        ref = _plain_last_logits(model, ids, enc.option_ids)
        mine = block.logits[i].astype(np.float64)
        if family == "gemma2":   # stored logits are pre-cap; the model outputs cap·tanh(z/cap)
            cap = block.meta["final_logit_softcapping"]
            assert cap == model.config.final_logit_softcapping
            mine = cap * np.tanh(mine / cap)
        assert np.abs(mine - ref).max() <= _tol(ref), (i, mine, ref)


def _residuals_at_junctions(model, family, ids) -> list[torch.Tensor]:
    """Actual residual stream (last position) at every junction, from the model's own
    modules: block inputs, mid-block residuals and the final-norm input."""
    base = model.base_model
    blocks = list(base.h if family == "gpt2" else base.layers)
    final_norm = {"gpt2": "ln_f", "gpt_neox": "final_layer_norm"}.get(family, "norm")
    final_norm = getattr(base, final_norm)
    seq, handles = [], []

    def grab(module, args):
        seq.append(args[0][0, -1].detach().clone())

    distinct = list(dict.fromkeys(blocks))
    handles += [b.register_forward_pre_hook(grab) for b in distinct]
    if MID_RESIDUAL[family]:
        handles += [getattr(b, MID_RESIDUAL[family]).register_forward_pre_hook(grab)
                    for b in distinct]
    handles.append(final_norm.register_forward_pre_hook(grab))
    try:
        with torch.no_grad():
            model(torch.tensor([ids]), use_cache=False)
    finally:
        for h in handles:
            h.remove()
    return seq, final_norm


def test_logit_lens_at_every_junction(fam):
    family, model, _, _, enc, block, head = fam
    head_w = model.get_output_embeddings()
    for c in (block, head):
        junctions = c.junctions
        cum = np.cumsum(c.u.astype(np.float64), axis=1)
        for i, ids in enumerate(enc.input_ids[:4]):
            seq, final_norm = _residuals_at_junctions(model, family, ids)
            assert len(seq) == len(junctions)
            for k, x in zip(junctions, seq):
                with torch.no_grad():
                    ref = head_w(final_norm(x[None]))[0, enc.option_ids].double().numpy()
                mine = c.scale[i, -1] / c.scale[i, k] * cum[i, k] + c.bias
                assert np.abs(mine - ref).max() <= _tol(ref), (c.names[k], mine, ref)


def test_heads_sum_to_their_block_member(fam):
    *_, block, head = fam
    hn = head.names
    for j, name in enumerate(block.names):
        parts = [k for k, n in enumerate(hn) if n == name or n.startswith(name + ".")]
        summed = head.u[:, parts].astype(np.float64).sum(axis=1)
        assert np.abs(summed - block.u[:, j]).max() <= 1e-5 * (1 + np.abs(block.u).max())
        np.testing.assert_allclose(head.scale[:, parts], block.scale[:, [j] * len(parts)],
                                   rtol=1e-6)
        assert [head.members[k].junction for k in parts[:-1]] == [False] * (len(parts) - 1)
        assert head.members[parts[-1]].junction == block.members[j].junction
    np.testing.assert_allclose(head.logits, block.logits, rtol=1e-6, atol=1e-6)
