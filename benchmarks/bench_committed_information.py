"""Benchmark: on every committed real run, I(U;Y) lies in [H(Y) − CE(own logits) − interval, H(Y)].

For each Contributions run directory (default: every ``docs/results/zoo/contributions/*``, the
27 zoo models and the fine-tuned SmolLM2; more with ``--runs DIR ...``):

- ``h_y``: plug-in label entropy (bits);
- ``own``: ``H(Y) − CE`` of the model's own option logits (``meta``'s logits, no fitting: a
  lower bound on I(U;Y) in expectation, since U determines the logits);
- ``I``: the default usable information of the whole member array
  (:func:`estimators.usable.usable_information` with the run's constant offset, families chosen
  by nested cross-validation), its 95% interval and bracket;
- ``ok``: ``own − (I − interval low) ≤ I ≤ H(Y)`` — the check of issue "information that is
  valid on real members": the estimate is not below the no-fitting bound by more than its own
  interval, and never above H(Y).

With ``--decompose NAME ...`` (run folder names) the full valid decomposition of those runs is
added under ``decompositions`` (:func:`infodiv.information.valid_terms`: relevancy on the whole
member vectors, label-null debiased; D = I(U;Y) − relevancy with its paired bootstrap interval;
no label null of D: each permutation reruns the whole procedure) — the new values of the
results pages' information figures (``docs/results/information_changes.md``).

Results go to ``benchmarks/results/committed_information.json`` (one entry per run, keyed by
its folder name; an entry whose run fingerprint is unchanged is reused: resumable).
Run: ``python benchmarks/bench_committed_information.py [--runs DIR ...] [--decompose NAME ...]``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "committed_information.json"
ZOO = ROOT / "docs" / "results" / "zoo" / "contributions"


def own_information(logits, labels) -> tuple[float, float]:
    """``(H(Y), H(Y) − CE(softmax(logits)))`` in bits, by numpy."""
    y = np.asarray(labels)
    p = np.bincount(y) / len(y)
    h_y = float(-(p[p > 0] * np.log2(p[p > 0])).sum())
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=1, keepdims=True)
    logq = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    ce = float(-logq[np.arange(len(y)), y].mean() / np.log(2))
    return h_y, h_y - ce


def measure(run_dir: Path) -> dict:
    """The entry of one run (module docstring)."""
    from estimators.usable import usable_information
    from extraction.contributions import Contributions
    from infodiv.inference.information_terms import member_bias

    run = Contributions.load(run_dir)
    t0 = time.process_time()
    h_y, own = own_information(run.logits, run.labels)
    ui = usable_information(run.u, run.labels, bias=member_bias(run), random_state=0)
    low, high = ui.interval
    ok = bool(own - (ui.estimate - low) <= ui.estimate <= h_y)
    return {"fingerprint": run.meta.get("fingerprint"), "model": str(run.meta.get("model")),
            "N": run.n_examples, "M": run.n_members, "C": run.n_options,
            "accuracy": float(run.accuracy()), "h_y": h_y, "own": own,
            "usable": ui.estimate, "interval": [float(low), float(high)],
            "bracket": [ui.lower, ui.upper], "upper_kind": ui.upper_kind,
            "families": list(ui.folds), "family_values": ui.family_values,
            "usable_minus_own": ui.estimate - own, "ok": ok,
            "cpu_s": time.process_time() - t0}


def decompose(run_dir: Path) -> dict:
    """The valid decomposition of one run (module docstring), bits."""
    from extraction.contributions import Contributions
    from infodiv.inference.information_terms import member_bias
    from infodiv.information import valid_terms

    run = Contributions.load(run_dir)
    t0 = time.process_time()
    t = valid_terms(run.u, run.labels, bias=member_bias(run), n_classes=run.n_options,
                    random_state=0)
    keep = ("joint", "joint_interval", "joint_lower", "joint_upper", "relevancy",
            "relevancy_interval", "relevancy_raw", "diversity", "diversity_interval", "h_y",
            "error_lower_bound", "error_upper_bound")
    return {"fingerprint": run.meta.get("fingerprint"),
            **{k: (list(map(float, t[k])) if isinstance(t[k], (list, tuple)) else t[k])
               for k in keep},
            "max_member": float(max(t["relevancies"])), "cpu_s": time.process_time() - t0}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", nargs="*", type=Path, default=[],
                    help="more Contributions run directories (default: the zoo's)")
    ap.add_argument("--decompose", nargs="*", default=[],
                    help="run folder names whose full valid decomposition is added")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    dirs = sorted(p.parent for p in ZOO.glob("*/meta.json")) + list(args.runs)
    doc = json.loads(args.out.read_text()) if args.out.is_file() else {"runs": {}}
    with threadpool_limits(1):
        for d in tqdm(dirs, desc="runs"):
            name = d.name
            fp = json.loads((d / "meta.json").read_text()).get("meta", {}).get("fingerprint")
            old = doc["runs"].get(name)
            if old and old.get("fingerprint") == fp and fp is not None:
                continue
            doc["runs"][name] = {"dir": str(d.resolve().relative_to(ROOT))
                                 if d.resolve().is_relative_to(ROOT) else str(d),
                                 **measure(d)}
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(doc, indent=1))
        by_name = {d.name: d for d in dirs}
        for name in tqdm(args.decompose, desc="decompositions"):
            if name not in by_name:
                raise SystemExit(f"--decompose: no run folder named {name!r}")
            fp = json.loads((by_name[name] / "meta.json").read_text())["meta"].get("fingerprint")
            old = doc.setdefault("decompositions", {}).get(name)
            if old and old.get("fingerprint") == fp and fp is not None:
                continue
            doc["decompositions"][name] = decompose(by_name[name])
            args.out.write_text(json.dumps(doc, indent=1))
    runs = doc["runs"].values()
    doc["summary"] = {"n_runs": len(doc["runs"]), "n_ok": sum(r["ok"] for r in runs),
                      "max_usable_minus_h_y": max(r["usable"] - r["h_y"] for r in runs),
                      "min_usable_minus_own": min(r["usable_minus_own"] for r in runs)}
    args.out.write_text(json.dumps(doc, indent=1))
    print(json.dumps(doc["summary"]))
    return doc


if __name__ == "__main__":
    main()
