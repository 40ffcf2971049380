"""Calibration and power of the per-triple violations verdict on real runs (issue 9).

    python benchmarks/violations_calibration.py [--runs DIR ...] [--objectives OBJ ...]
        [--surrogates 40] [--full 5] [--out benchmarks/results/violations.json]

For each run folder and objective: the label-permutation null of the violations claim
(:mod:`infodiv.claims.violations`: 200 fixed DR chains, K = 200, the report's), then
``--surrogates`` shuffled-label and planted-XOR surrogates through the claim's power shortcut
(one fit per surrogate, examples reweighted, B = 200: what the engine's power detector uses)
judged by

- ``violations``: the claim's rule, :func:`infodiv.inference.verdicts.violation_test`
  (step-down min-z label-permutation test over triples);
- ``violations_normal_bh``: the earlier rule (p_t = Φ((d_t − m₀_t)/se_t), Benjamini–Hochberg),
  for comparison on the same surrogates;

``power`` is the detection rate on the planted pair the report uses for that objective
(``planted_style``: noise-cancelling pairs for readouts), ``power_planted_xor`` the XOR pair's;

with Wilson 95% intervals. ``--full`` shuffled-label copies also go through the full refitting
pipeline (two-level bootstrap, calibration and split refitted on every resample, B = 60) to
compare the shortcut with the real run's own path; the real run's verdict is the refitted one
(B = 100). Each (run, objective) is written as soon as it is done and skipped when already in
the output file (``--force`` recomputes): the run resumes after an interruption.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import norm

from extraction.contributions import Contributions
from infodiv.claims import CLAIMS
from infodiv.inference import permutation_null, surrogate_power, two_level_bootstrap
from infodiv.inference.claim import Design, Replicate
from infodiv.inference.engine import ClaimStatistics
from infodiv.inference.power import wilson_interval
from infodiv.inference.surrogates import make_surrogate, planted_style
from infodiv.inference.verdicts import violation_test
from infodiv.reports.serialize import write_json
from infodiv.submodularity import benjamini_hochberg

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "violations.json"
RUNS = ("runs/smollm2-135m-sst2-block", "runs/stories260k-sst2-block")
OBJECTIVES = ("cross_entropy_calibrated", "accuracy_calibrated")
N_TRIPLES, N_NULL, B_FULL, B_REAL = 200, 200, 60, 100


def normal_bh(d, se, m0, alpha=0.05) -> np.ndarray:
    """The earlier rule (for comparison only)."""
    ex = np.asarray(d) - m0
    se = np.asarray(se)
    p = np.where(se > 0, norm.cdf(ex / np.where(se > 0, se, 1.0)), 1.0)
    return benjamini_hochberg(p, alpha) & (ex < 0) & (np.asarray(d) < 0)


CLAIM = CLAIMS["violations"]


def design_of(objective: str) -> Design:
    """The violations claim's design: 200 fixed DR chains, 2 random orders per replicate."""
    return Design(objective, n_orders=2, n_triples=N_TRIPLES)


def shortcut(design: Design, run, rng, n_bootstrap: int = 200) -> dict:
    """The claim's power shortcut on ``run``: per-chain differences of one fit and their
    example-bootstrap se (examples reweighted), as the engine's power detector computes it."""
    return CLAIM.quick(Replicate(run, design, rng), rng.spawn(1)[0], n_bootstrap)


class BothRules:
    """Detector: the claim's violation rule and the earlier one on the same shortcut
    statistics, plus the shortcut se relative to the null sd (median over triples)."""

    def __init__(self, design: Design, null: np.ndarray):
        self.design, self.null = design, null
        self.m0, self.s0 = np.nanmean(null, axis=0), np.nanstd(null, axis=0, ddof=1)

    def __call__(self, run, rng) -> dict:
        tri = shortcut(self.design, run, rng)
        d, se = tri["value"], tri["se"]
        return {"violations": bool(violation_test(d, se, self.null)["significant"].any()),
                "violations_normal_bh": bool(normal_bh(d, se, self.m0).any()),
                "se_over_null_sd_ge_1": bool(np.median(se / self.s0) >= 1)}


def _rate(hits) -> dict:
    k, n = int(sum(hits)), len(hits)
    return {"rate": k / n, "n_detected": k, "n": n, "ci": list(wilson_interval(k, n))}


def one_case(run_dir: str, objective: str, n_surrogates: int, n_full: int, seed: int) -> dict:
    c0 = time.process_time()
    run = Contributions.load(ROOT / run_dir)
    design = design_of(objective)
    pipe = ClaimStatistics([CLAIM], design)
    nd = np.asarray(permutation_null(run, pipe, n_permutations=N_NULL, random_state=seed,
                                     progress=True)[CLAIM.name].distribution)
    m0, s0 = np.nanmean(nd, axis=0), np.nanstd(nd, axis=0, ddof=1)
    zk = (nd - m0) / np.where(s0 > 0, s0, 1.0)
    both = BothRules(design, nd)
    power = surrogate_power(run, both, kinds=("planted_synergy", "shuffled_labels"),
                            n_replicates=n_surrogates, random_state=seed, progress=False)
    # the planted pair this objective can read (the report's), beside the XOR pair
    style = planted_style(objective)
    cancel = (surrogate_power(run, both, kinds=("planted_synergy",), n_replicates=n_surrogates,
                              surrogate_kwargs={"planted_synergy": {"style": "cancel"}},
                              random_state=seed, progress=False)["planted_synergy"]
              if style == "cancel" else None)
    out = {"run": run_dir, "objective": objective, "n_examples": run.n_examples,
           "n_members": run.n_members, "n_triples": N_TRIPLES, "n_permutations": N_NULL,
           "n_surrogates": n_surrogates, "seed": seed,
           "false_positive": power["shuffled_labels"]["violations"],
           "false_positive_normal_bh": power["shuffled_labels"]["violations_normal_bh"],
           "power_planted_xor": power["planted_synergy"]["violations"],
           "power_planted_xor_normal_bh": power["planted_synergy"]["violations_normal_bh"],
           "planted_style": style,
           "power": (cancel or power["planted_synergy"])["violations"],
           "power_normal_bh": (cancel or power["planted_synergy"])["violations_normal_bh"],
           "null_min_z_q05": float(np.quantile(zk.min(axis=1), 0.05)),
           "independent_normal_min_z_q05": float(norm.ppf(0.05 / N_TRIPLES)),
           "detector": "the violations claim's shortcut (fit once per surrogate, examples "
                       "reweighted, B = 200), judged against the real run's label null"}
    # the real run, refitted (the report's own path)
    boot = two_level_bootstrap(run, pipe, n_bootstrap=B_REAL, n_mc=3, random_state=seed,
                               progress=False)
    st = boot[CLAIM.name]
    vt = violation_test(st.value, st.se, nd)
    out["real_run"] = {"violations": bool(vt["significant"].any()),
                       "significant_violation_rate_corrected": float(vt["significant"].mean()),
                       "min_p_adjusted": float(vt["p_adjusted"].min()),
                       "violations_normal_bh": bool(normal_bh(st.value, st.se, m0).any()),
                       "n_bootstrap": B_REAL,
                       "se_refit_over_null_sd_median": float(np.median(st.se / s0))}
    # a few shuffled copies through the full refitting pipeline
    full, old, ratio = [], [], []
    for r in range(n_full):
        sur = make_surrogate(run, "shuffled_labels", random_state=10_000 + r)
        b = two_level_bootstrap(sur, pipe, n_bootstrap=B_FULL, n_mc=2, random_state=r,
                                progress=False)
        s = b[CLAIM.name]
        full.append(bool(violation_test(s.value, s.se, nd)["significant"].any()))
        old.append(bool(normal_bh(s.value, s.se, m0).any()))
        ratio.append(float(np.median(s.se / s0)))
        print(f"  full pipeline, shuffled copy {r}: new {full[-1]} old {old[-1]}", flush=True)
    if n_full:
        out["full_pipeline_shuffled"] = {"violations": _rate(full),
                                         "violations_normal_bh": _rate(old),
                                         "n_bootstrap": B_FULL,
                                         "se_refit_over_null_sd_median": ratio}
    out["cpu_s"] = time.process_time() - c0
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", nargs="+", default=list(RUNS), help="run folders")
    ap.add_argument("--objectives", nargs="+", default=list(OBJECTIVES), help="objectives")
    ap.add_argument("--surrogates", type=int, default=40, help="surrogates per kind")
    ap.add_argument("--full", type=int, default=5,
                    help="shuffled copies through the full refitting pipeline")
    ap.add_argument("--seed", type=int, default=0, help="random_state")
    ap.add_argument("--out", type=Path, default=OUT, help="output JSON")
    ap.add_argument("--force", action="store_true", help="recompute cases already in --out")
    args = ap.parse_args(argv)
    for r in args.runs:
        if not (ROOT / r).exists():
            print(f"violations_calibration: no run folder {r}", file=sys.stderr)
            return 2
    doc = json.loads(args.out.read_text()) if args.out.exists() else {"cases": {}}
    for r in args.runs:
        for obj in args.objectives:
            key = f"{Path(r).name}:{obj}"
            if key in doc["cases"] and not args.force:
                print(f"{key}: already in {args.out} (resuming; --force recomputes)")
                continue
            print(f"{key}: running", flush=True)
            doc["cases"][key] = one_case(r, obj, args.surrogates, args.full, args.seed)
            write_json(args.out, doc)
            c = doc["cases"][key]
            print(f"{key}: FP {c['false_positive']['rate']:.3f} (normal BH "
                  f"{c['false_positive_normal_bh']['rate']:.3f}), power ({c['planted_style']}) "
                  f"{c['power']['rate']:.3f}, planted XOR {c['power_planted_xor']['rate']:.3f}"
                  f", {c['cpu_s']:.0f} CPU s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
