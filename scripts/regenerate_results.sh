#!/usr/bin/env bash
# Regenerate everything under docs/results/ (except docs/results/zoo/).
#
#   scripts/regenerate_results.sh [STAGE ...]     # stages: extract (extract-blocks: the two
#                                                 # block runs only) curves claims decompositions
#                                                 # readme (default) and heads (M = 301, opt-in)
#                                                 # and agnews (= agnews-select agnews-block
#                                                 # agnews-head: SmolLM2 on AG News, opt-in)
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

stage_extract_blocks() {  # the two block runs of the SST-2 pages only (not the six n = 400 runs)
  step extract-stories260k-block infodiv extract --model "$SHARED/models/stories260K/hf" --task sst2 \
    --data-dir "$DATA" --out runs/stories260k-sst2-block --quiet
  step extract-smollm2-block infodiv extract --model smollm2-135m --task sst2 --data-dir "$DATA" \
    --out runs/smollm2-135m-sst2-block --quiet
}

stage_extract() {
  stage_extract_blocks
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

new_claims() {  # RUN OUT [MERGE ARGS]: the claims that tell redundancy from a ceiling (Theorem
  # 7's premise, the redundancy cost, the gain profile against the conditionally independent
  # control, marginal gain against redundancy) on the page's three objectives, B = K = 200,
  # power 20;
  # Theorem 8's Eq. 12 report once (its statistic reads the member vectors, not the objective;
  # ~2 CPU s per usable-information fit at n = 872, so B = 20, K = 60, no power: a report never
  # detects); then the page merged again (its default parts reused, every claim part added;
  # MERGE ARGS: the page's own merge flags, e.g. the head page's stability and selection sizes)
  local run=$1 out=$2; shift 2
  $NICE $PY curves "$run" "$out" --objectives "${OBJ4[@]}" --claims "${NEW_CLAIMS[@]}" \
    --power accuracy_calibrated=20 mi_readout=20 accuracy=20
  $NICE $PY curves "$run" "$out" --objectives accuracy_calibrated --claims theorem8 \
    --resamples 20 --n-curve-orders 60
  $NICE $PY curves "$run" "$out" --objectives "${OBJ4[@]}" --power accuracy_calibrated=20 \
    mi_readout=20 accuracy=20 "$@"
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
    --power accuracy_calibrated=20 --stability 3 --no-selection-verdicts --parts-only --with-first "$@"
  $NICE $PY curves $H $RES/smollm2-135m-sst2-head --objectives mi_readout accuracy \
    --power mi_readout=20 accuracy=20 --parts-only "$@"
  $NICE $PY curves $H $RES/smollm2-135m-sst2-head --objectives "${OBJ4[@]}" \
    --power accuracy_calibrated=20 mi_readout=20 accuracy=20 --stability 3 --no-selection-verdicts "$@"
}

stage_heads() {  # head level: not in the default stages (about 75 min of CPU): the curves parts,
  # then the new claims and Theorem 8's report on the same page
  step extract-smollm2-head infodiv extract --model smollm2-135m --task sst2 --data-dir "$DATA" \
    --granularity head --out runs/smollm2-135m-sst2-head --quiet
  curves_heads
  new_claims runs/smollm2-135m-sst2-head $RES/smollm2-135m-sst2-head --stability 3 \
    --no-selection-verdicts
}

# SmolLM2-135M-Instruct on AG News (the paper's rows 0-1999 of ../shared/data/ag_news/test.csv).
# The prompt setting is chosen on held-out rows 2000-2399 (never analysed) by the model's own
# accuracy: 0-shot, the chat template, 4 fixed demonstrations drawn among rows 2400.. (so the
# same draw precedes the analysed rows); the winner is then extracted on rows 0-1999.
AG=runs/agnews
AG_SELECT=(zero-shot chat-template fixed-4-shot)
ag_flags() {  # the extract flags of a prompt setting
  case $1 in
    zero-shot) ;;
    chat-template) echo --chat-template ;;
    fixed-4-shot) echo --shots 4 --fixed-demos --demo-start 2400 ;;
  esac
}

_children_cpu() {  # user + sys CPU seconds of this shell's finished children (bash 'times')
  times >"$MARK/.times"
  awk 'NR == 2 { s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] }
                 printf "%.1f\n", s }' "$MARK/.times"
}

cpu_step() {  # cpu_step NAME COMMAND...: step, with the command's CPU seconds in NAME.cpu
  local name=$1 t0 t1
  if [[ -e $MARK/$name.done ]]; then step "$@"; return; fi
  _children_cpu >"$MARK/.t0"; t0=$(<"$MARK/.t0")
  step "$@"
  _children_cpu >"$MARK/.t1"; t1=$(<"$MARK/.t1")
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }' >"$MARK/$name.cpu"
}

stage_agnews_select() {  # the prompt settings on the held-out rows, compared
  local s
  for s in "${AG_SELECT[@]}"; do
    # shellcheck disable=SC2046
    cpu_step "agnews-select-$s" infodiv extract --model smollm2-135m --task ag_news --data-dir "$DATA" \
      --start 2000 --n 400 $(ag_flags "$s") --out "$AG/select-$s" --quiet
  done
  $PY agnews-select "${AG_SELECT[@]/#/$AG/select-}" --out "$AG/prompt_selection.json"
}

agnews_winner() { python -c "import json; print(json.load(open('$AG/prompt_selection.json'))['chosen'])"; }

stage_agnews_block() {  # the chosen setting's block run and page (after agnews-select)
  local win; win=$(agnews_winner)
  agnews_extract "$win" block
  agnews_page "$AG/smollm2-agnews-$win-block" $RES/smollm2-135m-agnews-block 200 20 10 20 \
    "agnews-extract-$win-block"
}

stage_agnews_head() {  # the chosen setting's head run (M = 301) and page, smaller sizes (selection
  # verdicts at B = 20: raw accuracy needs no fit, so one greedy over 301 heads is ~2.4 CPU s)
  local win; win=$(agnews_winner)
  local AG_INFO=   # 301 heads: the raw readout only (the information objective refits per set)
  agnews_extract "$win" head
  agnews_page "$AG/smollm2-agnews-$win-head" $RES/smollm2-135m-agnews-head 50 10 3 20 \
    "agnews-extract-$win-head"
}

stage_agnews() { stage_agnews_select; stage_agnews_block; stage_agnews_head; }

agnews_extract() {  # SETTING GRANULARITY: the analysed rows 0-1999 under the chosen setting
  # shellcheck disable=SC2046
  cpu_step "agnews-extract-$1-$2" infodiv extract --model smollm2-135m --task ag_news \
    --data-dir "$DATA" --n 2000 $(ag_flags "$1") --granularity "$2" \
    --out "$AG/smollm2-agnews-$1-$2" --quiet
}

AG_OBJ=(accuracy)   # the raw readout's accuracy, at the page's sizes
AG_INFO=mi_readout  # usable information of the calibrated readout (bits; Theorem 7's objective),
AG_INFO_B=50        # at smaller sizes: every member set refits the calibration (one curves part
AG_INFO_POWER=10    # at B = 200 took more than 12 CPU minutes on 1000 rows)

agnews_page() {  # RUN OUT B POWER STABILITY SELECTION_B EXTRACT_STEP: one AG News
  # page. The curves part of the accuracy (B = K example resamples / label permutations, POWER
  # surrogates of each kind; greedy stability and selection verdicts), the information
  # objective's part (AG_INFO_B, AG_INFO_POWER, 50 curve orders), the control claims' parts of
  # both at the same sizes, Theorem 8's report (B = 20, K = 60, as on the SST-2 pages), the
  # merge, the decompositions (usable information terms, B = 20) and the page's own JSON with
  # the answer generated from the records; every part resumable (runs/.regen/parts)
  local run=$1 out=$2 b=$3 pw=$4 stab=$5 sel=$6 ext=$7
  $NICE $PY curves "$run" "$out" --objectives "${AG_OBJ[@]}" --power "${AG_OBJ[0]}=$pw" \
    --resamples "$b" --stability "$stab" $([ "$sel" = 0 ] && echo --no-selection-verdicts) \
    --parts-only --with-first
  local info=(); [ -n "$AG_INFO" ] && info=("$AG_INFO")
  [ -n "$AG_INFO" ] && $NICE $PY curves "$run" "$out" --objectives "$AG_INFO" \
    --power "$AG_INFO=$AG_INFO_POWER" --resamples "$AG_INFO_B" --n-curve-orders 50 --stability 0 \
    --no-graph --parts-only
  $NICE $PY curves "$run" "$out" --objectives "${AG_OBJ[@]}" --claims "${NEW_CLAIMS[@]}" \
    --power "${AG_OBJ[0]}=$pw" --resamples "$b"
  [ -n "$AG_INFO" ] && $NICE $PY curves "$run" "$out" --objectives "$AG_INFO" \
    --claims "${NEW_CLAIMS[@]}" --power "$AG_INFO=$AG_INFO_POWER" --resamples "$AG_INFO_B"
  $NICE $PY curves "$run" "$out" --objectives "${AG_OBJ[0]}" --claims theorem8 --resamples 20 \
    --n-curve-orders 60
  $NICE $PY curves "$run" "$out" --objectives "${AG_OBJ[@]}" "${info[@]}" \
    --power "${AG_OBJ[0]}=$pw" ${info:+"$AG_INFO=$AG_INFO_POWER"} --resamples "$b" \
    --stability "$stab" $([ "$sel" = 0 ] && echo --no-selection-verdicts)
  $NICE $PY agnews-decompose "$run" "$out" --resamples 20
  $PY agnews-page "$run" "$out" --selection "$AG/prompt_selection.json" \
    --steps "${AG_SELECT[@]/#/agnews-select-}" "$ext"
}

stage_readme() { $PY readme; }

stages=("$@")
[[ ${#stages[@]} -eq 0 ]] && stages=(extract curves claims decompositions readme)
for s in "${stages[@]}"; do
  case $s in
    extract|curves|claims|decompositions|heads|agnews|readme) "stage_$s" ;;
    extract-blocks) stage_extract_blocks ;;
    agnews-select|agnews-block|agnews-head) "stage_${s//-/_}" ;;
    *) echo "regenerate_results.sh: unknown stage '$s' (extract extract-blocks curves claims decompositions heads agnews agnews-select agnews-block agnews-head readme)" >&2; exit 2 ;;
  esac
done
