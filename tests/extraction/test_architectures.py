"""The family suite: every row of ``extraction.architectures.SPECS`` must pass these tests.

Each tiny config (tests/_tiny_models.py; a family's variants, e.g. Falcon parallel / sequential /
new architecture, are separate configs) is built with random O(1) weights, saved with
``save_pretrained`` and loaded back with ``from_pretrained``. Prompts of different lengths share
left-padded batches, so wrong attention masks or position ids would show up against the
per-prompt references computed here independently of the extraction code: the model's own
unpadded output logits, and the model's own final norm and head applied to its actual residual
stream at every junction (logit lens). Block, head and neuron granularities are checked to sum
exactly to each other.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _tiny_models import (
    DOWN_BIAS,
    FAMILIES,
    MOE,
    O_PROJ_BIAS,
    PARALLEL,
    mid_residual,
    model_type,
    tiny_model,
    torch_threads,
)
from _tiny_tasks import tiny_task

from extraction.architectures import SPECS, resolve
from extraction.prompts import encode_task
from extraction.runner import extract


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    with torch_threads(1):   # several times faster on 2 shared cores
        yield


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
    neuron = None
    if family not in MOE:
        neuron = extract(model, tok, task, batch_size=7, progress=False, granularity="neuron")
    model.eval()
    enc = encode_task(tok, task, max_length=128)
    return family, model, tok, task, enc, block, head, neuron


def test_every_family_row_has_a_tiny_config():
    assert {model_type(f) for f in FAMILIES} == set(SPECS)


def _plain_last_logits(model, ids, option_ids) -> np.ndarray:
    with torch.no_grad():
        out = model(torch.tensor([ids]), use_cache=False)
    return out.logits[0, -1, option_ids].double().numpy()


def test_member_table(fam):
    family, model, _, _, _, block, head, neuron = fam
    n_blocks = 2
    execs = 2 * n_blocks if family == "llama_shared" else n_blocks
    assert block.n_members == 2 * execs + 1          # M = 4L + 1 for the shared model
    assert block.names[0] == "embed" and block.members[0].kind == "embed"
    assert block.names[1:3] == ["L0.attn#0", "L0.mlp#0"]
    if family == "llama_shared":
        assert block.names[3:5] == ["L0.attn#1", "L0.mlp#1"]
        assert [m.execution for m in block.members[1:]] == [0, 0, 1, 1] * 2
    heads = resolve(model).n_heads
    has_bias = family in O_PROJ_BIAS
    assert head.n_members == 1 + execs * (heads + has_bias) + execs
    assert ("L0.attn#0.bias" in head.names) == has_bias
    parallel = family in PARALLEL
    assert block.meta["parallel_residual"] == parallel
    assert [m.junction for m in block.members] == [True] + [not parallel, True] * execs
    if neuron is not None:
        f = resolve(model).down_proj_weight(resolve(model).distinct_blocks[0])[0].shape[1]
        down_bias = family in DOWN_BIAS
        assert neuron.n_members == 1 + execs + execs * (f + down_bias)
        assert neuron.members[2].neuron == 0 and neuron.names[2] == "L0.mlp#0.n0"
        assert ("L0.mlp#0.bias" in neuron.names) == down_bias


def test_sum_of_members_equals_the_model_output(fam):
    family, model, *_, block, head, neuron = fam
    cap = block.meta.get("final_logit_softcapping")
    for c in (block, head) + ((neuron,) if neuron is not None else ()):
        z = c.readout()
        if cap is not None:
            z = cap * np.tanh(z / cap)
        assert c.meta["exactness_reference"].startswith("model output")
        err = np.array(c.meta["exactness_error"])
        assert err.shape == (c.n_examples,) and np.all(err <= _tol(z))
        assert c.meta["max_exactness_error"] == pytest.approx(err.max())
        assert c.exactness_error().max() <= _tol(c.logits).min()   # internal identity too
        assert c.u.dtype == np.float32


def test_logits_match_plain_unpadded_forward(fam):
    family, model, _, _, enc, block, *_ = fam
    for i, ids in enumerate(enc.input_ids):
        ref = _plain_last_logits(model, ids, enc.option_ids)
        mine = block.readout()[i]
        if family.startswith("gemma"):   # stored logits are pre-cap; output cap·tanh(z/cap)
            cap = block.meta.get("final_logit_softcapping")
            if cap is not None:
                assert cap == model.config.final_logit_softcapping
                mine = cap * np.tanh(mine / cap)
        assert np.abs(mine - ref).max() <= _tol(ref), (i, mine, ref)


def _residuals_at_junctions(model, family, ids) -> list[torch.Tensor]:
    """Actual residual stream (last position) at every junction, from the model's own
    modules: block inputs, mid-block residuals and the final-norm input."""
    arch = resolve(model)
    spec = arch.spec
    final_norm = arch.submodule(arch.base, spec.final_norm)
    seq, handles = [], []

    def grab(module, args):
        x = args[0]
        seq.append((x.view(1, -1, x.shape[-1]) if x.ndim == 2 else x)[0, -1].detach().clone())

    distinct = arch.distinct_blocks
    handles += [b.register_forward_pre_hook(grab) for b in distinct]
    mid = mid_residual(family)
    if mid:
        handles += [arch.submodule(b, mid).register_forward_pre_hook(grab) for b in distinct]
    handles.append(final_norm.register_forward_pre_hook(grab))
    try:
        with torch.no_grad():
            model(torch.tensor([ids]), use_cache=False)
    finally:
        for h in handles:
            h.remove()
    return seq, final_norm


def _lens_logits(model, final_norm, x, option_ids) -> np.ndarray:
    """The model's own final norm, output projection and head on a residual vector."""
    arch = resolve(model)
    with torch.no_grad():
        h = final_norm(x[None])
        if arch.spec.unembed_in is not None and arch.unembed_in is not None:
            h = arch.submodule(arch.base, arch.spec.unembed_in)(h)
        out = model.get_output_embeddings()(h)[0, option_ids] * arch.logit_scale
    return out.double().numpy()


def test_logit_lens_at_every_junction(fam):
    family, model, _, _, enc, block, head, _ = fam
    for c in (block, head):
        junctions = c.junctions
        cum = np.cumsum(c.u.astype(np.float64), axis=1)
        for i, ids in enumerate(enc.input_ids[:4]):
            seq, final_norm = _residuals_at_junctions(model, family, ids)
            assert len(seq) == len(junctions)
            for k, x in zip(junctions, seq):
                ref = _lens_logits(model, final_norm, x, enc.option_ids)
                mine = c.scale[i, -1] / c.scale[i, k] * cum[i, k] + c.bias
                assert np.abs(mine - ref).max() <= _tol(ref), (c.names[k], mine, ref)


def _parts_sum_to_blocks(block, split):
    sn = split.names
    for j, name in enumerate(block.names):
        parts = [k for k, n in enumerate(sn) if n == name or n.startswith(name + ".")]
        summed = split.u[:, parts].astype(np.float64).sum(axis=1)
        assert np.abs(summed - block.u[:, j]).max() <= 1e-5 * (1 + np.abs(block.u).max())
        np.testing.assert_allclose(split.scale[:, parts], block.scale[:, [j] * len(parts)],
                                   rtol=1e-6)
        assert [split.members[k].junction for k in parts[:-1]] == [False] * (len(parts) - 1)
        assert split.members[parts[-1]].junction == block.members[j].junction
    # different batches (and prefix-cache shapes): float32 rounding of the model's logits
    np.testing.assert_allclose(split.logits, block.logits, rtol=1e-5, atol=1e-5)


def test_heads_sum_to_their_block_member(fam):
    *_, block, head, _ = fam
    _parts_sum_to_blocks(block, head)


def test_neurons_sum_to_their_block_member(fam):
    family, model, tok, task, *_, block, _, neuron = fam
    if neuron is None:   # mixture of experts: the MLP member is the routed sum
        assert block.meta["moe"]
        with pytest.raises(ValueError, match="no dense MLP output projection"):
            extract(model, tok, task, granularity="neuron", progress=False)
        return
    _parts_sum_to_blocks(block, neuron)


def test_experts_sum_to_their_block_member(fam):
    family, model, tok, task, *_, block, _, _ = fam
    if family not in MOE:
        with pytest.raises(ValueError, match="no mixture-of-experts blocks"):
            extract(model, tok, task, granularity="expert", progress=False)
        return
    expert = extract(model, tok, task, granularity="expert", batch_size=3, progress=False)
    _parts_sum_to_blocks(block, expert)
    n_experts, top_k = 4, 2
    shared = family == "qwen2_moe"
    assert expert.n_members == 1 + 2 + 2 * (n_experts + shared)
    for layer in (0, 1):   # the router picked top_k of the experts: the others are exactly 0
        cols = [k for k, n in enumerate(expert.names) if n.startswith(f"L{layer}.mlp#0.x")]
        picked = (np.abs(expert.u[:, cols]) > 0).any(axis=2).sum(axis=1)
        assert np.all(picked == top_k)
