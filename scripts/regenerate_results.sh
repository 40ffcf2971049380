#!/usr/bin/env bash
# Regenerate everything under docs/results/ (except docs/results/zoo/).
#
#   scripts/regenerate_results.sh [STAGE ...]     # stages: extract curves claims decompositions
#                                                 # readme (default) and heads (M = 301, opt-in)
#
# Resumable: every step writes runs/.regen/<step>.done when it finishes and is skipped when that
# marker exists (delete the marker, or the whole runs/.regen/, to redo a step); extractions resume
# by themselves. Long steps run niced, one thread, logging to runs/.regen/<step>.log.
# Needs ../shared/data and ../shared/models (the layout of /work/shared).
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${SHARED:-../shared}
DATA=$SHARED/data
RES=docs/results
MARK=runs/.regen
mkdir -p "$MARK"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
NICE="nice -n ${REGEN_NICE:-19}"
# REGEN_SNAPSHOT=1: import the library from a git-archive snapshot of HEAD (runs/.regen/code-<commit>)
# instead of the working tree, so that uncommitted edits of other engineers in a shared checkout
# do not leak into a long run; each part then records that commit (.regen_commit)
if [[ -n ${REGEN_SNAPSHOT:-} ]]; then
  SNAP=$MARK/code-$(git rev-parse --short HEAD)
  if [[ ! -e $SNAP/.regen_commit ]]; then
    mkdir -p "$SNAP"
    git archive HEAD infodiv estimators extraction | tar -x -C "$SNAP"
    git rev-parse HEAD >"$SNAP/.regen_commit"
  fi
  export PYTHONPATH=$PWD/$SNAP${PYTHONPATH:+:$PYTHONPATH}
  echo "[regen] library code from $SNAP"
else   # this checkout's code (not whatever an editable install points at)
  export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
fi

step() {  # step NAME COMMAND...: run once, log, mark done
  local name=$1; shift
  if [[ -e $MARK/$name.done ]]; then echo "[regen] $name: done before, skipped"; return 0; fi
  echo "[regen] $name: $* (log $MARK/$name.log)"
  local t0=$SECONDS
  $NICE "$@" >"$MARK/$name.log" 2>&1 || { echo "[regen] $name FAILED, see $MARK/$name.log"; return 1; }
  echo "$((SECONDS - t0)) s wall" >"$MARK/$name.done"
  echo "[regen] $name: finished in $((SECONDS - t0)) s"
}

TASKS=(sst2 rte wic boolq ag_news arc_easy)

stage_extract() {
  step extract-stories260k-block infodiv extract --model "$SHARED/models/stories260K/hf" --task sst2 \
    --data-dir "$DATA" --out runs/stories260k-sst2-block --quiet
  step extract-smollm2-block infodiv extract --model smollm2-135m --task sst2 --data-dir "$DATA" \
    --out runs/smollm2-135m-sst2-block --quiet
  for t in "${TASKS[@]}"; do
    step "extract-smollm2-$t-n400" infodiv extract --model smollm2-135m --task "$t" --n 400 \
      --data-dir "$DATA" --out "runs/smollm2-135m-$t-n400" --quiet
  done
}

PY="python scripts/regenerate_results.py"
OBJ4=(accuracy_calibrated mi_readout accuracy)

curves_block() {  # both block runs, all three objectives (the first, calibrated accuracy, also carries
  # selection, greedy stability and the layer graph); extra arguments go to every call
  $NICE $PY curves runs/smollm2-135m-sst2-block $RES/smollm2-135m-sst2-block --objectives "${OBJ4[@]}" \
    --power accuracy_calibrated=20 mi_readout=20 accuracy=20 "$@"
  $NICE $PY curves runs/stories260k-sst2-block $RES/stories260k-sst2-block --objectives "${OBJ4[@]}" \
    --power accuracy_calibrated=20 mi_readout=20 accuracy=20 "$@"
}

NEW_CLAIMS=(premise redundancy_cost gains_vs_control marginal_gain_redundancy)

new_claims() {  # RUN OUT: the claims that tell redundancy from a ceiling (Theorem 7's premise,
  # the redundancy cost, the gain profile against the conditionally independent control, marginal
  # gain against redundancy) on the page's three objectives, B = K = 200, power 20;
  # Theorem 8's Eq. 12 report once (its statistic reads the member vectors, not the objective;
  # ~2 CPU s per usable-information fit at n = 872, so B = K = 20, no power: a report never
  # detects); then the page merged again (its default parts reused, every claim part added)
  $NICE $PY curves "$1" "$2" --objectives "${OBJ4[@]}" --claims "${NEW_CLAIMS[@]}" \
    --power accuracy_calibrated=20 mi_readout=20 accuracy=20
  $NICE $PY curves "$1" "$2" --objectives accuracy_calibrated --claims theorem8 --resamples 20 \
    --n-permutations 60
  $NICE $PY curves "$1" "$2" --objectives "${OBJ4[@]}" --power accuracy_calibrated=20 mi_readout=20 \
    accuracy=20
}

stage_claims() {  # the block pages' new claims (claim parts, resumable), merged onto the pages
  new_claims runs/smollm2-135m-sst2-block $RES/smollm2-135m-sst2-block
  new_claims runs/stories260k-sst2-block $RES/stories260k-sst2-block
}

stage_curves() {  # B = K = 200 example resamples / label permutations, 200 orders, 200 triples;
  # power: 20 surrogates of each claim's matched kind and of shuffled labels (per-example
  # objectives fit once per surrogate)
  # the curves step resumes per objective (runs/.regen/parts/), so it is not marked done
  curves_block
  step information-smollm2-block $PY information runs/smollm2-135m-sst2-block \
    $RES/inference/smollm2-135m-sst2-block --resamples 200
}

stage_decompositions() {  # Figures 3/4/5 over six tasks (n = 400 each), every variant, B = 200
  local dirs=()
  for t in "${TASKS[@]}"; do dirs+=("runs/smollm2-135m-$t-n400"); done
  # per task: what 'infodiv decompose' writes (every-variant Figures 3/5/7; Gaussian and copula
  # information terms under B = 200 example resamples and K = 200 label permutations), one
  # resumable part each; across tasks: Figure 3 with bootstrap p (series recomputed) and the
  # Fisher-z average
  $NICE $PY decompositions "${dirs[@]}" --out $RES/decompositions --resamples 200
}

curves_heads() {  # head level (M = 301): the block pages' three objectives at the same sizes
  # (B = K = 200, power 20), one page; greedy stability over 3 replicates and no selection
  # verdicts (a selection replicate reruns greedy over 301 members); the first part alone, the
  # other two together, then merged
  local H=runs/smollm2-135m-sst2-head
  $NICE $PY curves $H $RES/smollm2-135m-sst2-head --objectives accuracy_calibrated \
    --power accuracy_calibrated=20 --stability 3 --selection-resamples 0 --parts-only --with-first "$@"
  $NICE $PY curves $H $RES/smollm2-135m-sst2-head --objectives mi_readout accuracy \
    --power mi_readout=20 accuracy=20 --parts-only "$@"
  $NICE $PY curves $H $RES/smollm2-135m-sst2-head --objectives "${OBJ4[@]}" \
    --power accuracy_calibrated=20 mi_readout=20 accuracy=20 --stability 3 --selection-resamples 0 "$@"
}

stage_heads() {  # head level: not in the default stages (about 20 min of CPU)
  step extract-smollm2-head infodiv extract --model smollm2-135m --task sst2 --data-dir "$DATA" \
    --granularity head --out runs/smollm2-135m-sst2-head --quiet
  curves_heads
}

stage_readme() { $PY readme; }

stages=("$@")
[[ ${#stages[@]} -eq 0 ]] && stages=(extract curves claims decompositions readme)
for s in "${stages[@]}"; do
  case $s in
    extract|curves|claims|decompositions|heads|readme) "stage_$s" ;;
    *) echo "regenerate_results.sh: unknown stage '$s' (extract curves claims decompositions heads readme)" >&2; exit 2 ;;
  esac
done
