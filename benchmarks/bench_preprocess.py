"""kNN ``preprocess`` on the ground-truth suite (estimators.groundtruth); writes
benchmarks/results/preprocess_groundtruth.json.

Every case except the 61-variable one (where kNN is known to fail and warns) at n = 2000, 5
seeds, the same samples as ``infodiv validate`` (seed ``[s, crc32(case)]``), ``method="knn"``
with ``preprocess`` = standardize, rank, none (entropies: ``None``, i.e. standardize, in place
of rank, which they refuse): mean error and RMSE in bits per quantity.
"""

from __future__ import annotations

import json
import time
import warnings
import zlib
from pathlib import Path

import numpy as np

from estimators.groundtruth import cases

OUT = Path(__file__).resolve().parent / "results" / "preprocess_groundtruth.json"


def suite_samples(n: int, seeds: int):
    """``(name, case, samples)`` per ground-truth case except the 61-variable one, with the
    samples of ``infodiv validate`` (seed ``[s, crc32(name)]``)."""
    for name, case in cases().items():
        if name == "highdim_tc":
            continue
        ci = zlib.crc32(name.encode())
        yield name, case, [case.sample(n, np.random.default_rng([s, ci])) for s in range(seeds)]


def main(n=2000, seeds=5):
    warnings.simplefilter("ignore")
    rows = []
    for name, case, samples in suite_samples(n, seeds):
        for q in case.quantities:
            row = {"case": name, "quantity": q.name, "true_bits": float(q.true_bits)}
            for pre in ("standardize", "rank", "none"):
                p = None if (pre == "rank" and q.name.startswith("H(")) else pre
                v = np.array([q.estimate(d, method="knn", random_state=s, preprocess=p)
                              for s, d in enumerate(samples)])
                row[pre] = {"error_bits": float(v.mean() - q.true_bits),
                            "rmse_bits": float(np.sqrt(np.mean((v - q.true_bits) ** 2)))}
            rows.append(row)
            print(f"{name:<24} {q.name:<9} " + "  ".join(
                f"{p} {row[p]['rmse_bits']:.4f}" for p in ("standardize", "rank", "none")),
                flush=True)
    wins = {p: sum(min(("standardize", "rank", "none"), key=lambda m: r[m]["rmse_bits"]) == p
                   for r in rows) for p in ("standardize", "rank", "none")}
    OUT.write_text(json.dumps({"n": n, "seeds": seeds, "rows": rows, "lowest_rmse_count": wins,
                               "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
                              indent=1) + "\n")
    print(wins, f"wrote {OUT}")


if __name__ == "__main__":
    main()
