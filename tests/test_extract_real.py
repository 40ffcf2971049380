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
