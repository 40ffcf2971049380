"""The converted copy of a GGUF model (:mod:`extraction.gguf_cache`): the copy gives the same
tokens and logits as the GGUF itself, is found by content hash, ignored when incomplete, and
not written when the cache is off."""

from __future__ import annotations

import json

import numpy as np
import pytest

from extraction import gguf_cache
from extraction.models import load_model

PROMPTS = ["What label best describes this news article?\n Stocks fell on Monday as oil rose."
           " Business", "Éléphant naïve — 3.14 ≥ π? 日本語 tokens\n\tand tabs  ",
           "<|im_start|>user"]


def _tokens(tok):
    return [tok(p)["input_ids"] for p in PROMPTS]


@pytest.mark.slow
def test_copy_equals_the_gguf(smollm2_available, tmp_path, monkeypatch):
    import torch

    monkeypatch.setenv("INFODIV_CACHE", str(tmp_path))
    model, tok = load_model("smollm2-135m", device="cpu")         # from the GGUF; writes
    sha = model.infodiv_source["weights_sha256"]
    folder = gguf_cache.cached_copy(sha)
    assert folder is not None and folder.parent == tmp_path / "gguf"
    assert json.loads((folder / "complete.json").read_text())["gguf_sha256"] == sha
    assert "quantization_config" not in json.loads((folder / "config.json").read_text())
    again, tok2 = load_model("smollm2-135m", device="cpu")        # from the copy
    assert again.infodiv_source == model.infodiv_source           # the GGUF stays the identity
    assert _tokens(tok2) == _tokens(tok)
    assert (tok2.pad_token_id, tok2.eos_token_id) == (tok.pad_token_id, tok.eos_token_id)
    assert tok2.chat_template == tok.chat_template
    ids = torch.tensor([_tokens(tok)[0]])
    with torch.inference_mode():
        a, b = model(ids).logits.numpy(), again(ids).logits.numpy()
    assert np.array_equal(a, b)
    # an incomplete copy (no completion record) is not read
    (folder / "complete.json").unlink()
    assert gguf_cache.cached_copy(sha) is None


def test_cache_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("INFODIV_CACHE", "off")
    assert gguf_cache.cache_root() is None and gguf_cache.cached_copy("ab" * 32) is None
    assert gguf_cache.write_copy(None, None, "ab" * 32, "x.gguf") is None
    monkeypatch.setenv("INFODIV_CACHE", str(tmp_path / "c"))
    assert gguf_cache.cache_root() == tmp_path / "c"
    assert gguf_cache.cached_copy(None) is None
