"""Fine-tuning machinery of the zoo on a tiny saved model; SmolLM2 itself opt-in.

The tiny model stands in for SmolLM2 (same code path: ``extraction.load_model`` of a folder,
top-k freezing, shared training loop, ``save_pretrained``). The real SmolLM2-135M run loads a
135M-parameter GGUF (40-100 s on 2 shared cores) and is opt-in: ``INFODIV_TEST_SMOLLM2=1``.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from infodiv.experiments.configs import ModelSpec  # noqa: E402
from infodiv.experiments.train import TrainConfig  # noqa: E402


@pytest.fixture(scope="module")
def small_task(shared_data_dir):
    from infodiv.experiments.data import subset, zoo_tasks
    from infodiv.experiments.tokenizer import train_tokenizer

    train, held = zoo_tasks(shared_data_dir)
    train = subset(train, range(0, 5600, 14))            # 400 rows
    return train_tokenizer(train, vocab_size=500), train, subset(held, range(48))


def test_finetune_top_block_only(small_task, tmp_path):
    from safetensors.torch import load_file

    from extraction import extract, load_model
    from infodiv.experiments.configs import build_model, save_model
    from infodiv.experiments.finetune import finetune

    tok, train, held = small_task
    base = tmp_path / "base"
    save_model(build_model(ModelSpec(2, width=32, heads=2, mlp=64, max_len=48), tok), tok, base)
    cfg = TrainConfig(steps=60, batch_size=16, lr=3e-3, warmup=5, checkpoint_every=20)
    lines = []
    part = finetune(base, train, tmp_path / "ft", cfg, train_top=1, max_len=48,
                    stop_after=25, progress=False, log=lines.append)
    assert not part["finished"] and part["step"] == 25
    rec = finetune(base, train, tmp_path / "ft", cfg, train_top=1, max_len=48,
                   heldout_task=held, progress=False, log=lines.append)
    assert "resuming at step 25/60" in lines[-1]
    assert rec["finished"] and rec["n_members"] == 5 and rec["prefix_cache"]
    assert (tmp_path / "ft" / "prefix_cache" / "cache.json").is_file()
    # from a random base with a frozen tied head only the top block learns: a clear drop
    assert np.mean(rec["losses"][-10:]) < np.mean(rec["losses"][:10]) - 0.1
    a, b = load_file(base / "model.safetensors"), load_file(tmp_path / "ft/model/model.safetensors")
    frozen = [k for k in a if ".layers.0." in k or "embed" in k]
    trained = [k for k in a if ".layers.1." in k]
    assert frozen and all(torch.equal(a[k], b[k]) for k in frozen)
    assert trained and not any(torch.equal(a[k], b[k]) for k in trained if "norm" not in k)
    per_block = sum(v.numel() for k, v in a.items() if ".layers.1." in k)
    assert rec["trainable_params"] == per_block + a["model.norm.weight"].numel()
    model, tok2 = load_model(tmp_path / "ft" / "model", device="cpu")
    run = extract(model, tok2, held, progress=False, max_length=48)
    assert run.meta["exactness_ok"]
    acc = float((run.logits.argmax(1) == held.labels).mean())
    assert acc == pytest.approx(rec["heldout"]["accuracy"], abs=1e-12)
    from infodiv.experiments.finetune import finetune_name

    assert rec["model"] == finetune_name(base, 1, 0) == "base-ft-top1-s0"
    assert finetune_name(tmp_path / "zoo-L2" / "model", None, 2) == "zoo-L2-ft-s2"
    with pytest.raises(ValueError, match="train_top"):
        finetune(base, train, tmp_path / "bad", cfg, train_top=3, progress=False)


@pytest.mark.real_model
@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("INFODIV_TEST_SMOLLM2") != "1",
                    reason="opt-in: INFODIV_TEST_SMOLLM2=1 (loads SmolLM2-135M, minutes on CPU)")
def test_smollm2_finetune_steps(small_task, tmp_path, smollm2_available):
    from infodiv.experiments.data import option_tokens, subset
    from infodiv.experiments.finetune import finetune

    _, train, held = small_task
    cfg = TrainConfig(steps=3, batch_size=4, lr=1e-4, warmup=1, checkpoint_every=3)
    rec = finetune("smollm2-135m", subset(train, range(16)), tmp_path / "ft", cfg,
                   train_top=2, max_len=64, heldout_task=subset(held, range(8)), progress=False)
    assert rec["finished"] and rec["n_members"] == 61
    from extraction import load_model

    model, tok = load_model(tmp_path / "ft" / "model", device="cpu")
    assert [t for _, t in option_tokens(tok, held).values()] == [
        "ĠWorld", "ĠSports", "ĠBusiness", "ĠScience"]
