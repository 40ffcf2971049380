"""Benchmark: power and false-positive rates of the information claims at the real n.

The claims :mod:`infodiv.claims.premise`, :mod:`~infodiv.claims.redundancy_cost` and
:mod:`~infodiv.claims.gains_vs_control` run through :func:`infodiv.inference.engine.evaluate`
on synthetic members built like real ones (:mod:`estimators.members_truth`: class-conditional
structure, a shared latent that makes the members strongly dependent given Y, small member
noise; n = 1000, M = 61). Two engine runs per case, rates from the engine's own surrogates:

- ``real``: the members as drawn (dependent given Y: every claim should be detected). Power on
  planted redundancy built from them; the *premise-true rate* is each claim's detection rate
  on the run's conditionally independent control (every member permuted within its class: the
  premise true, no redundancy, so any detection is a false positive), obtained by running each
  claim a second time under the name ``<claim>@premise_true`` with that control as its
  surrogate; the shuffled-label rate.
- ``premise_true``: the conditionally independent control of the same draw as the run (every
  claim should be silent). Power on planted redundancy built from it (the matched case on a
  base where nothing else is planted) and the shuffled-label rate.

Detection rates carry Wilson 95% intervals. Process CPU seconds per engine run are recorded
(no timing claims). Results go to ``benchmarks/results/information_claims.json`` (one key per
objective and case; a rerun replaces only the keys it computes).

Run: ``python benchmarks/bench_information_claims.py [--power 20 --b 20 --k 39]``;
``--claims marginal_gain_redundancy --triples 40`` for the marginal-gain claim (its (S, x)
pairs come from the design's chains);
``--objective mi_usable --n 500 --members 16`` for the usable-information variant (a full-set
fit costs seconds there).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from estimators.members_truth import member_cases
from infodiv.claims import CLAIMS
from infodiv.inference.claim import Design
from infodiv.inference.engine import evaluate
from infodiv.inference.surrogates import conditionally_independent, with_arrays
from infodiv.inference.synthetic import dependent_ensemble

OUT = Path(__file__).resolve().parent / "results" / "information_claims.json"
NAMES = ("premise", "redundancy_cost", "gains_vs_control")
#: a usable-information g(k) costs M fits per order, so only the gap runs there
NAMES_BY_OBJECTIVE = {"mi_usable": ("redundancy_cost",)}


def members_run(case: str, n: int, n_members: int, seed: int):
    """A run of ``n`` examples of the members_truth case ``case`` (M = ``n_members``)."""
    model = dataclasses.replace(member_cases()[case], n_members=n_members)
    u, y = model.sample(n, np.random.default_rng(seed))
    template = dependent_ensemble(n, n_members, n_options=u.shape[2], random_state=seed)
    run = with_arrays(template, u=u, labels=y)
    run.meta["model"] = f"members_truth:{case}:M{n_members}"
    return run


def claims(names, with_control: bool, copies: int | None = None) -> list:
    out = [CLAIMS[n] for n in names]
    if copies:      # a planted case of another size than the registry's
        out = [dataclasses.replace(c, surrogate_kwargs=lambda run, design: {
            "n_copies": copies}) for c in out]
    if with_control:
        out += [dataclasses.replace(CLAIMS[n], name=f"{n}@premise_true",
                                    surrogate="conditionally_independent",
                                    surrogate_kwargs=None) for n in names]
    return out


def matched_cases(run, args) -> dict:
    """Per claim: its matched surrogate kind and that kind's settings on ``run`` (the
    registry's, or ``--copies``)."""
    design = Design(args.objective, n_orders=args.orders, n_triples=args.triples)
    out = {}
    for c in claims(args.claims or NAMES_BY_OBJECTIVE.get(args.objective, NAMES), False,
                    args.copies):
        kw = c.surrogate_kwargs(run, design) if c.surrogate_kwargs is not None else {}
        out[c.name] = {"kind": c.surrogate, **kw}
    return out


def summary(rec) -> dict:
    return {"estimate": rec.estimate, "interval": rec.interval, "p": rec.p,
            "null_mean": rec.null_mean, "detected": rec.detected, "finding": rec.finding,
            "power": rec.power, "shuffled_label_rate": rec.false_positive,
            "flags": [f["kind"] if isinstance(f, dict) and "kind" in f else f
                      for f in rec.flags], "extra": rec.extra}


def one(run, with_control, args) -> dict:
    design = Design(args.objective, n_orders=args.orders, n_triples=args.triples)
    c0 = time.process_time()
    names = args.claims or NAMES_BY_OBJECTIVE.get(args.objective, NAMES)
    recs = evaluate(run, claims(names, with_control, args.copies), design, n_bootstrap=args.b,
                    n_permutations=args.k, n_mc=2, n_power=args.power,
                    random_state=args.seed)["records"]
    out = {"cpu_s": time.process_time() - c0, "claims": {}}
    for name in names:
        doc = summary(recs[name])
        if with_control:
            doc["premise_true_rate"] = recs[f"{name}@premise_true"].power
        out["claims"][name] = doc
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", default="binary_M61")
    ap.add_argument("--objective", default="accuracy_calibrated")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--members", type=int, default=61)
    ap.add_argument("--b", type=int, default=20)
    ap.add_argument("--k", type=int, default=39)
    ap.add_argument("--power", type=int, default=20)
    ap.add_argument("--orders", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--copies", type=int, default=None,
                    help="planted copies of the matched case (default: the registry's; "
                    "the kind stays the claim's)")
    ap.add_argument("--claims", type=lambda s: tuple(s.split(",")), default=None,
                    help="comma-separated subset of " + ",".join(NAMES)
                    + " (or marginal_gain_redundancy, with --triples)")
    ap.add_argument("--triples", type=int, default=0,
                    help="DR chains of the design (the marginal-gain claim's (S, x) pairs)")
    args = ap.parse_args(argv)
    run = members_run(args.case, args.n, args.members, args.seed)
    control = conditionally_independent(run, random_state=args.seed + 1)
    results = json.loads(OUT.read_text()) if OUT.exists() else {}
    key = f"{args.objective}/{args.case}/n{args.n}/M{args.members}/K{args.k}"
    if args.claims:
        key += "/" + ",".join(args.claims)
    if args.copies:
        key += f"/copies{args.copies}"
    if args.triples:
        key += f"/T{args.triples}"
    with threadpool_limits(1):
        doc = {"sizes": {"n": args.n, "M": args.members, "B": args.b, "K": args.k,
                         "n_triples": args.triples,
                         "n_power": args.power, "n_orders": args.orders, "seed": args.seed,
                         "matched_cases": matched_cases(run, args)},
               "real": one(run, True, args)}
        print(key, "real", json.dumps({k: (v["detected"], v["power"]["rate"],
                                           v["premise_true_rate"]["rate"],
                                           v["shuffled_label_rate"]["rate"])
                                       for k, v in doc["real"]["claims"].items()}), flush=True)
        doc["premise_true"] = one(control, False, args)
        print(key, "premise_true", json.dumps({k: (v["detected"], v["power"]["rate"],
                                                   v["shuffled_label_rate"]["rate"])
                                               for k, v in doc["premise_true"]["claims"]
                                               .items()}), flush=True)
    results = json.loads(OUT.read_text()) if OUT.exists() else results
    results[key] = doc
    OUT.write_text(json.dumps(results, indent=1, default=float) + "\n")


if __name__ == "__main__":
    main()
