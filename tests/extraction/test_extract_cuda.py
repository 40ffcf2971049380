"""The CUDA path of ``extract`` (skipped without a GPU; ``benchmarks/gpu_check.sh`` runs it).

On a GPU: tiny models of a few families (RMS and LayerNorm, learned positions, soft-cap,
mixture of experts) in float32 and bfloat16 on ``cuda`` and through ``device_map="auto"``
must pass the exactness check against the model's own logits (bf16 model, float32
projections) and agree with the CPU float32 extraction within the dtype's tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _tiny_models import tiny_model
from _tiny_tasks import tiny_task

from extraction.models import load_model
from extraction.runner import EXACTNESS_RTOL, extract

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

FAMILIES = ["llama", "gpt2", "gemma2", "qwen2_moe"]


@pytest.fixture(scope="module", params=FAMILIES)
def cpu_run(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    model, tok = tiny_model(request.param, folder)
    return folder, tok, extract(model, tok, tiny_task(), batch_size=3, progress=False)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("placement", ["cuda", "device_map"])
def test_cuda_extraction_is_exact_and_matches_cpu(cpu_run, dtype, placement):
    folder, tok, ref = cpu_run
    model, _ = load_model(folder, device=placement, dtype=dtype)
    got = extract(model, tok, tiny_task(), batch_size=3, progress=False)
    assert got.meta["device"].startswith("cuda") and got.meta["dtype"] == dtype
    assert got.meta["projection_dtype"] == "float32" and got.u.dtype == np.float32
    assert got.meta["max_relative_exactness_error"] <= EXACTNESS_RTOL[dtype]
    scale = 1 + np.abs(ref.u).max()
    tol = 1e-4 if dtype == "float32" else 0.1      # bf16 keeps 8 bits of mantissa
    assert np.abs(got.u - ref.u).max() <= tol * scale
