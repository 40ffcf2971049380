#!/usr/bin/env bash
# The depth experiment's training grid: K-hop pointer chasing (infodiv.zoo.hops), unshared
# depths 1 2 3 4 6 8 and layer-shared twins (each block executed twice in a row) at depths 2
# and 4, seeds 0 1 2, the same steps / schedule / tokenizer / training stream for every model.
# Order: the harder K first; within it one complete seed before the next (deepest model of a
# seed first); then the easier K.
#
# Resumable: rerun the same script and it continues (finished models are skipped, an
# interrupted one resumes from its last checkpoint, bit-identical on CPU). One torch thread at
# nice 10. Steps: 16000. Escape from the ln 4 plateau comes at 2700-5100 steps and the 2-hop
# composition needs thousands more after it; at 8000 steps the 8-block models ended at
# 0.82-0.87 held-out and one 4-block model never left chance.
#
# Parallel: SHARD=i/N trains every N-th model of each seed starting at i (N processes share
# the root safely); the depth order 8 6 3 4 1 2 deals the two shards of N = 2 about equal work
# (20 and 16 block executions per step).
#
# Usage:   scripts/depth_experiment.sh                      (foreground)
#          mkdir -p runs/depth && for i in 0 1; do SHARD=$i/2 nohup setsid \
#              scripts/depth_experiment.sh >> runs/depth/train.$i.log 2>&1 < /dev/null & done
# Output:  runs/depth/k<K>/ (depth.json, tokenizer/, heldout.jsonl + heldout.task.json,
#          models/<name>/state.pt while training, models/<name>/model/ with zoo.json when done)
set -euo pipefail
cd "$(dirname "$0")/.."

HOPS_ORDER=${HOPS_ORDER:-"2 1"}          # harder K first (HOPS_ORDER=4 adds the 4-hop grid)
OUT=${OUT:-runs/depth}
SHARD=${SHARD:-0/1}
SETTINGS=(--task hops --min-hops 1 --queries 16 --next-frac 0.5 --symbols 64 --n-heldout 2000
          --width 64 --heads 4 --mlp 128 --init-std 0.125 --batch-size 32
          --steps 16000 --warmup 100 --lr 3e-3 --checkpoint-every 100 --threads 1)

export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
export TQDM_MININTERVAL=${TQDM_MININTERVAL:-120}   # a progress line every 2 minutes in the log
mkdir -p "$OUT"
for K in $HOPS_ORDER; do
  root="$OUT/k$K"
  n_done=0 n_part=0
  if [ -d "$root/models" ]; then
    n_done=$(find "$root/models" -path '*/model/zoo.json' | wc -l)
    n_part=$(find "$root/models" -name state.pt | wc -l)
  fi
  if [ "$n_done" -gt 0 ] || [ "$n_part" -gt 0 ]; then
    echo "$(date -u +%FT%TZ) depth grid K=$K shard $SHARD: resuming ($n_done model(s) finished, $n_part checkpoint(s))"
  else
    echo "$(date -u +%FT%TZ) depth grid K=$K shard $SHARD: starting"
  fi
  for SEED in 0 1 2; do
    nice -n 10 infodiv zoo train --hops "$K" --root "$root" --seeds "$SEED" \
      --depths 8 6 3 4 1 2 --shared-depths 4 2 --shard "$SHARD" "${SETTINGS[@]}"
  done
done
echo "$(date -u +%FT%TZ) depth grid: all K done"
