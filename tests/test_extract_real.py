"""Extraction on real weights: stories260K (all 872 SST-2 dev examples) and SmolLM2-135M."""

from __future__ import annotations

import numpy as np
import pytest


def _check_exact(c):
    err = c.exactness_error()
    assert np.all(err <= 1e-4 * (1 + np.abs(c.logits).max(axis=1)))
    assert c.meta["exactness_ok"]
    assert c.meta["max_exactness_error"] == pytest.approx(err.max(), rel=1e-6, abs=1e-9)


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
