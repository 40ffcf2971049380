#!/usr/bin/env bash
# The depth experiment's training grid: K-hop pointer chasing (infodiv.zoo.hops), unshared
# depths 1 2 3 4 6 8 and layer-shared twins (each block executed twice) at depths 2 and 4,
# seeds 0 1 2, the same steps / schedule / tokenizer for every model; the harder K first,
# seed-major (one complete seed before the next), then the easier K.
#
# Resumable: rerun the same script and it continues (finished models are skipped, an
# interrupted one resumes from its last checkpoint). One torch thread at nice 10.
#
# Usage:   scripts/depth_experiment.sh                 (foreground)
#          nohup setsid scripts/depth_experiment.sh >> runs/depth/train.log 2>&1 &
# Output:  runs/depth/k<K>/ (depth.json, tokenizer/, heldout.jsonl + heldout.task.json,
#          models/<name>/model with zoo.json once finished)
set -euo pipefail
cd "$(dirname "$0")/.."

HOPS_ORDER=${HOPS_ORDER:-"4 2"}          # harder K first
OUT=${OUT:-runs/depth}
COMMON=(--task hops --min-hops 1 --symbols 64 --n-heldout 2000
        --depths 1 2 3 4 6 8 --shared-depths 2 4 --seeds 0 1 2
        --width 64 --heads 4 --mlp 128 --batch-size 32
        --steps 3000 --warmup 100 --lr 3e-3 --checkpoint-every 100 --threads 1 --quiet)

export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
mkdir -p "$OUT"
for K in $HOPS_ORDER; do
  root="$OUT/k$K"
  n_done=$(ls -d "$root"/models/*/model/zoo.json 2>/dev/null | wc -l)
  if [ "$n_done" -gt 0 ] || ls -d "$root"/models/*/state.pt >/dev/null 2>&1; then
    echo "$(date -u +%FT%TZ) depth grid K=$K: resuming ($n_done model(s) finished)"
  else
    echo "$(date -u +%FT%TZ) depth grid K=$K: starting"
  fi
  nice -n 10 infodiv zoo train --hops "$K" --root "$root" "${COMMON[@]}"
done
echo "$(date -u +%FT%TZ) depth grid: all K done"
