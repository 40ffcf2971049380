"""Extraction on real weights: stories260K (all 872 SST-2 dev examples) and SmolLM2-135M."""

from __future__ import annotations

import numpy as np
import pytest


def _check_exact(c):
    """Both the stored error against the model's own output logits and the identity on the
    stored arrays are within the float32 tolerance (they differ by float32 re-summation only,
    e.g. the '.rest' members of neuron top-k)."""
    tol = 1e-4 * (1 + np.abs(c.logits).max(axis=1))
    err = c.exactness_error()
    assert np.all(err <= tol)
    assert np.all(np.array(c.meta["exactness_error"]) <= tol)
    assert c.meta["exactness_reference"].startswith("model output")
    assert c.meta["max_exactness_error"] == pytest.approx(err.max(), rel=0.1, abs=1e-6)


def test_stories260k_sst2_all_examples(stories_sst2):
    c = stories_sst2
    assert c.u.shape == (872, 11, 2)
    assert c.names == ["embed"] + [f"L{i}.{k}#0" for i in range(5) for k in ("attn", "mlp")]
    _check_exact(c)
    assert c.options == ["negative", "positive"]
    assert c.meta["task"] == "sst2" and c.meta["n_examples"] == 872
    assert c.meta["model"]["weights_sha256"].startswith("407a7c58")
    assert c.meta["dtype"] == "float32" and c.meta["n_truncated"] == 0
    assert np.bincount(c.labels).tolist() == [428, 444]
    assert np.all(c.scale > 0) and np.all(np.isfinite(c.u))
    assert c.bias.shape == (2,) and np.all(c.bias == 0)   # RMSNorm, no LM-head bias


@pytest.fixture(scope="module")
def smollm2(smollm2_available):
    from extraction.models import load_model

    return load_model("smollm2-135m", device="cpu")


@pytest.mark.slow
@pytest.mark.real_model
def test_smollm2_sst2_exact(smollm2, shared_data_dir):
    """200 SST-2 examples, M = 61, exact; head granularity M = 301 on 4 examples.
    GGUF load ~20-30 s, extraction ~15 s with one thread."""
    import torch
    from _tiny_models import torch_threads

    from extraction.prompts import encode_task
    from extraction.runner import extract
    from extraction.tasks import get_task

    model, tok = smollm2
    assert model.infodiv_source["weights_sha256"].startswith("b179c9523d0e6a0f")
    task = get_task("sst2", data_dir=shared_data_dir, n=200)
    with torch_threads(1):   # ~4x faster than 2 threads on 2 shared cores
        c = extract(model, tok, task, progress=False)
        h = extract(model, tok, get_task("sst2", data_dir=shared_data_dir, n=4),
                    granularity="head", progress=False)
    assert c.u.shape == (200, 61, 2)
    _check_exact(c)
    enc = encode_task(tok, task, max_length=None)
    for i in (0, 57, 199):   # the stored logits are the model's own, unpadded
        with torch.no_grad():
            ref = model(torch.tensor([enc.input_ids[i]])).logits[0, -1, enc.option_ids]
        assert np.abs(ref.numpy() - c.logits[i]).max() <= 1e-4 * (1 + ref.abs().max().item())
    assert h.u.shape == (4, 1 + 30 * 9 + 30, 2)   # 301 members
    _check_exact(h)
    np.testing.assert_allclose(h.logits, c.logits[:4], rtol=1e-5, atol=1e-5)


def test_stories260k_boolq_few_shot_drops_demonstrations_and_warns(stories_dir,
                                                                   shared_data_dir):
    # a 1-shot BoolQ prompt does not fit stories260K's 512-token context: the demonstration is
    # dropped (and recorded) instead of failing the whole task, and 'False' is scored on '▁'
    from _tiny_models import torch_threads

    from extraction.models import load_model
    from extraction.runner import extract
    from extraction.tasks import get_task

    model, tok = load_model(stories_dir, device="cpu", dtype="float32")
    task = get_task("boolq", data_dir=shared_data_dir, n=40, shots=1)
    with torch_threads(1), pytest.warns(UserWarning, match="bare whitespace token '▁'"):
        c = extract(model, tok, task, progress=False)
    _check_exact(c)
    dropped = np.array(c.meta["demos_dropped"])
    assert dropped.max() == 1 and 0 < dropped.sum() < 40
    assert c.meta["option_tokens"][0] == "▁" and c.meta["whitespace_options"] == ["False"]


@pytest.mark.slow
@pytest.mark.real_model
def test_smollm2_chat_template_neurons_and_full_vocab(smollm2, shared_data_dir):
    """Chat template kept byte for byte (read at '…assistant\\n'), neuron granularity with
    top-k, the full 49152-token vocabulary: all exact against the model's own logits."""
    import torch
    from _tiny_models import torch_threads

    from extraction.prompts import encode_task
    from extraction.runner import extract
    from extraction.tasks import get_task

    model, tok = smollm2
    # 4 prompts: caching the 24-token prefix saves 72 tokens, more than its check costs
    task = get_task("sst2", data_dir=shared_data_dir, n=4)
    two = get_task("sst2", data_dir=shared_data_dir, n=2)
    with torch_threads(1):
        chat = extract(model, tok, task, chat_template=True, progress=False)
        neuron = extract(model, tok, two, granularity="neuron", neuron_top_k=16, progress=False)
        full = extract(model, tok, two, vocab="full", progress=False)
    _check_exact(chat)
    # the template's system turn and user header (24 tokens) are computed once and cached
    assert chat.meta["savings"]["prefix_cache"] == "used"
    assert chat.meta["savings"]["prefix_cache_tokens"] == 24
    assert chat.meta["option_tokens"] == ["negative", "positive"]
    enc = encode_task(tok, task, max_length=None, chat_template=True)
    for i in (0, 2):
        msgs = [{"role": "user", "content": task.prompt(i)}]
        ids = tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=True,
                                      return_dict=True)["input_ids"]
        assert enc.input_ids[i] == list(ids) and tok.decode(ids).endswith("assistant\n")
        with torch.no_grad():
            ref = model(torch.tensor([ids])).logits[0, -1, enc.option_ids].numpy()
        assert np.abs(ref - chat.logits[i]).max() <= 1e-4 * (1 + np.abs(ref).max())
    assert neuron.n_members == 1 + 30 + 30 * 17
    _check_exact(neuron)
    opts = [full.option_ids.tolist().index(i) for i in neuron.option_ids]
    for j, name in enumerate(full.names):   # neurons + rest sum to the block member
        parts = [k for k, n in enumerate(neuron.names) if n == name or n.startswith(name + ".")]
        assert np.abs(neuron.u[:, parts].sum(1) - full.u[:, j][:, opts]).max() < 1e-4
    assert full.u.shape == (2, 61, 49152) and full.meta["max_relative_exactness_error"] < 1e-4
