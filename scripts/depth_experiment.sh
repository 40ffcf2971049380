#!/usr/bin/env bash
# The depth experiment's training grid: K-hop pointer chasing (infodiv.experiments.hops) at
# K = 3, 2, 1, unshared depths 1 2 3 4 6 8 and layer-shared twins (each block executed twice in a
# row) at depths 2 and 4, seeds 0 1 2, the same steps / schedule / tokenizer / training stream
# for every model. Order: the hardest K first; within it one complete seed before the next
# (deepest model of a seed first); then the easier K.
#
# One training rule for every model (infodiv.experiments.restarts): a model whose mean loss over
# its last 160 steps is still on the chance plateau (>= 0.95 ln 4) at step RESTART_CHECK restarts
# from a new initialisation, at most MAX_RESTARTS times, every attempt recorded in its zoo.json.
# A share HELDOUT_FRAC of the training sequences asks the held-out question itself (K hops, one
# question); the rest mix 1..K hops with 16 questions. Each root also holds a second held-out set
# of N_MIXED questions of 1..K hops in equal shares (heldout_mixed.jsonl).
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
# On a GPU: DEVICE=cuda JOBS=N runs every model as its own job, N at a time (deepest first, the
# harder K first), each bounded by DEADLINE_S seconds from the start (0: none); a job cut by the
# deadline leaves its last checkpoint (every 100 steps), which resumes on CPU or GPU. A job's
# progress goes to $OUT/logs/k<K>-<name>.log. Start CUDA MPS first (nvidia-cuda-mps-control -d)
# so that the jobs share the GPU instead of time-slicing it.
#
# Usage:   scripts/depth_experiment.sh                      (foreground)
#          DEVICE=cuda JOBS=15 DEADLINE_S=400 scripts/depth_experiment.sh
#          mkdir -p runs/depth && for i in 0 1; do SHARD=$i/2 nohup setsid \
#              scripts/depth_experiment.sh >> runs/depth/train.$i.log 2>&1 < /dev/null & done
# Output:  runs/depth/k<K>/ (depth.json, tokenizer/, heldout.jsonl + heldout.task.json,
#          models/<name>/state.pt while training, models/<name>/model/ with zoo.json when done)
set -euo pipefail
cd "$(dirname "$0")/.."

HOPS_ORDER=${HOPS_ORDER:-"3 2 1"}        # hardest K first
OUT=${OUT:-runs/depth}
SHARD=${SHARD:-0/1}
SETTINGS=(--task hops --min-hops 1 --queries 16 --next-frac 0.5 --symbols 64 --n-heldout 2000
          --width 64 --heads 4 --mlp 128 --init-std 0.125 --batch-size 32
          --steps "${STEPS:-16000}" --warmup 100 --lr 3e-3 --checkpoint-every 100 --threads 1
          --heldout-frac "${HELDOUT_FRAC:-0.25}" --n-mixed-heldout "${N_MIXED:-2000}"
          --restart-check "${RESTART_CHECK:-6000}" --max-restarts "${MAX_RESTARTS:-2}"
          --restart-window 160)

DEVICE=${DEVICE:-cpu}
JOBS=${JOBS:-1}
DEADLINE_S=${DEADLINE_S:-0}
# a sub-grid when time is short: DEPTHS="1 2 3 4" SHARED_DEPTHS="" SEEDS="0 1" (same recipe)
read -r -a DEPTHS <<< "${DEPTHS:-8 6 3 4 1 2}"
read -r -a SHARED_DEPTHS <<< "${SHARED_DEPTHS-4 2}"
read -r -a SEEDS <<< "${SEEDS:-0 1 2}"

export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
export TQDM_MININTERVAL=${TQDM_MININTERVAL:-120}   # a progress line every 2 minutes in the log
mkdir -p "$OUT"
if [ "$JOBS" -gt 1 ]; then
  # one job per model: "K seed unshared-depth shared-depth" (one of the two depths empty)
  end=$(( $(date +%s) + DEADLINE_S ))
  mkdir -p "$OUT/logs"
  jobs_file=$(mktemp)
  for K in $HOPS_ORDER; do
    # the root (settings, tokenizer, held-out file) once, before the jobs share it
    infodiv zoo train --hops "$K" --root "$OUT/k$K" --seeds 0 --depths --shared-depths \
      --device "$DEVICE" --quiet "${SETTINGS[@]}"
    for SEED in "${SEEDS[@]}"; do   # longest first: block executions per step
      { for D in "${DEPTHS[@]}"; do echo "$D $K $SEED $D -"; done
        for D in "${SHARED_DEPTHS[@]}"; do echo "$((2 * D)) $K $SEED - $D"; done
      } | sort -s -k1,1nr | cut -d' ' -f2-
    done >> "$jobs_file"
  done
  job() {   # K seed depth shared-depth
    local left=0 d=() s=() name
    [ "$3" = - ] || d=("$3")
    [ "$4" = - ] || s=("$4")
    if [ "$3" = - ]; then name="L$4-share2-s$2"; else name="L$3-s$2"; fi
    if [ "$DEADLINE_S" -gt 0 ]; then
      left=$(( end - $(date +%s) ))
      [ "$left" -gt 10 ] || return 0
    fi
    timeout "$left" infodiv zoo train --hops "$1" --root "$OUT/k$1" --seeds "$2" \
      --depths "${d[@]}" --shared-depths "${s[@]}" --device "$DEVICE" "${SETTINGS[@]}" \
      > "$OUT/logs/k$1-$name.log" 2>&1 || true
  }
  export -f job
  export OUT DEVICE DEADLINE_S end
  export SETTINGS_STR="${SETTINGS[*]}"
  echo "$(date -u +%FT%TZ) depth grid on $DEVICE: $(wc -l < "$jobs_file") model(s), $JOBS at a time"
  xargs -P "$JOBS" -L 1 bash -c 'SETTINGS=($SETTINGS_STR); job "$@"' _ < "$jobs_file"
  rm -f "$jobs_file"
  for K in $HOPS_ORDER; do
    echo "k$K: $(find "$OUT/k$K/models" -path '*/model/zoo.json' 2>/dev/null | wc -l) model(s) finished"
  done
  exit 0
fi
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
  for SEED in "${SEEDS[@]}"; do
    nice -n 10 infodiv zoo train --hops "$K" --root "$root" --seeds "$SEED" \
      --depths "${DEPTHS[@]}" --shared-depths "${SHARED_DEPTHS[@]}" --shard "$SHARD" \
      --device "$DEVICE" "${SETTINGS[@]}"
  done
done
echo "$(date -u +%FT%TZ) depth grid: all K done"
