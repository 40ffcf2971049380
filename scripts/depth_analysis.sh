#!/usr/bin/env bash
# The depth experiment's analysis: every finished model of the K-hop pointer-chasing grid
# (scripts/depth_experiment.sh -> runs/depth/k<K>) analysed on its root's held-out file, then
# docs/results/depth/summary.json, README.md and the figures written from all of them.
#
# Per model (infodiv.experiments.depth_analysis): exact extraction of the contributions, held-out
# accuracy, usable information I(U;Y) with its interval, the verdicts of the paper's claims
# through the inference engine (B example resamples, K label permutations, power and
# shuffled-label rates on POWER surrogates of each kind), Theorem 8's bounds, and replicates on
# example resamples shared by every model of the root. Across models (infodiv.experiments.depth_across):
# seed-and-example intervals per depth, Table 1 form (shared twins vs unshared at equal
# parameters and at equal executions), the truncated model after b blocks vs the trained
# depth-b model, growth laws across depth.
#
# Resumable: a model already analysed with the same settings is reused (the run says how many);
# a model still training is listed as training on the page and analysed on a later run. Safe to
# run while the training script runs: it reads the roots and writes only runs/depth/k<K>/analysis/
# and docs/results/depth/.
#
# Usage:   scripts/depth_analysis.sh                 (sizes below; override by environment)
#          B=50 K=49 POWER=10 scripts/depth_analysis.sh
# Output:  runs/depth/k<K>/analysis/<model>.json (+ contributions/<model>/), docs/results/depth/
#          (summary.json, README.md, figures, bundle/)
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-runs/depth}
DOCS=${DOCS:-docs/results/depth}
B=${B:-100}               # example resamples of the claims (everything refitted)
K=${K:-99}                # label permutations of the claims' null
POWER=${POWER:-20}        # surrogates of each kind (power, shuffled-label rate)
REPORT=${REPORT:-20}      # B = K of the Theorem 8 report
RESAMPLES=${RESAMPLES:-100}   # example resamples shared by the models of a root

export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
HOPS_ORDER=${HOPS_ORDER:-"3 2 1"}   # as scripts/depth_experiment.sh (hardest K first)
roots=()
for K_HOPS in $HOPS_ORDER; do     # a root joins once training has created it
  [ -f "$OUT/k$K_HOPS/depth.json" ] && roots+=("$OUT/k$K_HOPS")
done
if [ "${#roots[@]}" -eq 0 ]; then
  echo "depth_analysis: no depth root under $OUT (run scripts/depth_experiment.sh first)" >&2
  exit 2
fi
extra=()
[ -f docs/results/zoo/summary.json ] && extra+=(--contrast docs/results/zoo/summary.json)
nice -n 5 infodiv zoo depth-report "${roots[@]}" --out "$DOCS" \
  --n-bootstrap "$B" --n-permutations "$K" --n-power "$POWER" --report-resamples "$REPORT" \
  --resamples "$RESAMPLES" --depths 8 6 4 3 2 1 --shared-depths 4 2 --seeds 0 1 2 --width 64 \
  --planned-hops $HOPS_ORDER --quiet "${extra[@]}"
# the committed bundle (contributions, records, held-out files, checksums) from which
# 'infodiv zoo depth-reproduce' recomputes every record and the page without the checkpoints
infodiv zoo depth-bundle "${roots[@]}" --bundle "$DOCS/bundle"
