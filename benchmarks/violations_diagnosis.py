"""Why the earlier per-triple violation rule was anti-conservative on real runs (issue 9).

    python benchmarks/violations_diagnosis.py RUN_DIR OBJECTIVE K S_FIX S_FULL B OUT.json

The real run's label null (K permutations of the violations claim's statistic, 200 fixed
chains), then ``S_FIX`` shuffled-label surrogates through the claim's power shortcut (one fit,
examples reweighted, B = 200) and the first ``S_FULL`` of them also through the full refitting
two-level bootstrap (``B`` resamples). Per surrogate: the number of triples that the earlier
rule (normal p = Φ((d − m₀)/se), BH) flags with the shortcut's se (``fix_n_old``), with
max(se, null sd) (``fix_n_max``) and with the null sd alone (``fix_n_null``); the median over
triples of se / null sd (``*_se_ratio``); the spread over triples of (d − m₀)/null sd
(``*_z_sd``: 1 if every triple were a standard normal null draw); the same for the full
pipeline (``full_*``). Measured on SmolLM2-135M SST-2, calibrated cross-entropy (K = 100, 20
shortcut / 6 full surrogates, B = 60): benchmarks/results/violations_diagnosis.json.
"""

import json
import sys
import time

import numpy as np
from violations_calibration import CLAIM, design_of, normal_bh, shortcut  # one copy each

from extraction.contributions import Contributions
from infodiv.inference.bootstrap import two_level_bootstrap
from infodiv.inference.engine import ClaimStatistics
from infodiv.inference.nulls import permutation_null
from infodiv.inference.surrogates import make_surrogate


def main(argv) -> int:
    if len(argv) != 7:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    run_dir, obj, out_path = argv[0], argv[1], argv[6]
    k, s_fix, s_full, b = (int(a) for a in argv[2:6])
    c = Contributions.load(run_dir)
    design = design_of(obj)
    pipe = ClaimStatistics([CLAIM], design)
    t0 = time.process_time()
    null = permutation_null(c, pipe, n_permutations=k, random_state=1, progress=False)
    nd = np.asarray(null[CLAIM.name].distribution)
    m0, sd0 = np.nanmean(nd, 0), np.nanstd(nd, 0, ddof=1)

    def rule(d, se):
        return int(normal_bh(d, se, m0).sum())

    rows = []
    for r in range(max(s_fix, s_full)):
        sur = make_surrogate(c, "shuffled_labels", random_state=1000 + r)
        row = {"r": r}
        if r < s_fix:
            st = shortcut(design, sur, np.random.default_rng(r))
            d, se = np.asarray(st["value"]), np.asarray(st["se"])
            row.update(fix_n_old=rule(d, se), fix_se_ratio=float(np.median(se / sd0)),
                       fix_z_sd=float(np.std((d - m0) / sd0)),
                       fix_n_max=rule(d, np.maximum(se, sd0)), fix_n_null=rule(d, sd0))
        if r < s_full:
            boot = two_level_bootstrap(sur, pipe, n_bootstrap=b, n_mc=2, random_state=r,
                                       progress=False)
            e = boot[CLAIM.name]
            d, se = np.asarray(e.value), np.asarray(e.se)
            row.update(full_n_old=rule(d, se), full_se_ratio=float(np.median(se / sd0)),
                       full_z_sd=float(np.std((d - m0) / sd0)),
                       full_n_max=rule(d, np.maximum(se, sd0)), full_n_null=rule(d, sd0))
        rows.append(row)
        print(row, round(time.process_time() - t0), flush=True)
    summary = {key: {"surrogates_firing": sum(1 for x in rows if x.get(key, 0) > 0),
                     "n": sum(1 for x in rows if key in x)}
               for key in ("fix_n_old", "fix_n_max", "fix_n_null", "full_n_old", "full_n_max",
                           "full_n_null")}
    json.dump({"run": run_dir, "objective": obj, "K": k, "B": b, "rows": rows,
               "summary": summary, "sd0_median": float(np.median(sd0)),
               "cpu_s": time.process_time() - t0}, open(out_path, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
