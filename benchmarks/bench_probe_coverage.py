"""Coverage of the zoo's probe-bound intervals by simulation (issue 12).

    python benchmarks/bench_probe_coverage.py [--members 5 17 33] [--replicates 200]
        [--resamples 100] [--n 2000] [--expectation 1000] [--state runs/probe_coverage]
        [--out benchmarks/results/probe_coverage.json] [--force]

The zoo quotes, for every model, the probe lower bound on I(U;Y) (bits; H(Y) − cross-fitted
cross-entropy of a logistic probe on all members, :func:`infodiv.experiments.intervals.probe_bound`)
with a 95% interval from ``B`` stratified example resamples (:func:`infodiv.experiments.intervals.
shared_indices`), the probe refitted on each with the grouped cross-fitting split
(:func:`infodiv.setfunctions.base.duplicate_groups`), and the replicates centred on the
full-sample point (:data:`infodiv.experiments.intervals.CENTRED`); the raw percentile interval is
kept (:func:`infodiv.experiments.intervals.resample_interval`: ``ci95`` centred, ``resample_ci95``
raw). This benchmark asks whether those intervals cover what they claim to, on data with a known
answer.

Data (:func:`gaussian_members`): C classes of equal size n/C (the zoo's held-out set is fixed,
and the stratified resamples keep its class counts, so the class counts are fixed here too);
M members ``u_m = a·w_m·e_y + √ρ·z + √(1−ρ)·ε_m`` with ``w_m = (m + 1)/M`` (later members carry
more, as in a residual stream), one noise vector ``z ~ N(0, I_C)`` shared by all members
(members are correlated, ρ = 0.5) and independent ``ε_m ~ N(0, I_C)``. The classes share one
covariance ``A ⊗ I_C`` (``A = ρ·J + (1−ρ)·I``), so the Bayes posterior is exactly a
multinomial logistic model in the stacked features: the probe's population bound (its
infinite-sample limit) is I(U;Y) itself. Writing ``v = A⁻¹w`` and ``q = wᵀA⁻¹w``, the
posterior logits are ``a·Σ_m v_m·u_{m,c}`` = ``s²·δ_{c,y} + s·ξ_c`` with ``s² = a²q`` and
independent ``ξ_c ~ N(0, 1)``, so (:func:`bayes_information`)

    I(U;Y) = log2 C + E[log2 softmax(s²·e_y + s·ξ)_y]

by Monte Carlo on ``--mc`` draws (one scalar SNR; its standard error is reported), and the
signal scale ``a`` is solved for I(U;Y) = ``--information`` bits (the zoo's probe bounds are
1.1–1.4 bits) by bisection on ``s`` with common random numbers.

Targets: (a) the estimator's expectation at this n, E[point], estimated by the mean point over
``--expectation`` further independent datasets (its standard error is reported); (b) I(U;Y)
(= the population probe bound, checked by one probe fitted on ``--population`` rows and scored
on as many others). For each of ``--replicates`` independent datasets (one seeded stream per
replicate) the point and both intervals are computed by the zoo's own functions; coverage of
each target by each interval is counted, with Wilson 95% intervals
(:func:`infodiv.inference.power.wilson_interval`), miss rates on each side, mean widths, the
point's sampling spread against the resamples' spread, and the resamples' own lean
(resample mean − point; the zoo's was −0.03 to −0.17 bits).

The probe replicate of the zoo is ``model_figures(run.take(idx))["probe_bound"]``
(:func:`infodiv.experiments.intervals.replicates`) = ``probe_bound(run.take(idx))``; this benchmark
calls the latter to skip the zoo's other figures (tests/infodiv/experiments/test_probe_coverage.py
checks that the two agree). Replicates are saved every 10 under ``--state`` (git-ignored); a rerun
with the same settings resumes and says so; ``--replicates`` can be raised later (replicate i keeps
its seed).

The committed benchmarks/results/probe_coverage.json: n = 2000, B = 100 (the zoo's resample
count), M = 5 and 17 at R = 200 and M = 33 at R = 100 (its replicates cost 6 CPU s each), 500
expectation datasets (``--members 5 17 --replicates 200 --expectation 500``, then
``--members 33 --replicates 100 --expectation 500``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from extraction.contributions import Contributions, Member

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "probe_coverage.json"
STATE = ROOT / "runs" / "probe_coverage"
N_CLASSES, RHO, LEVEL = 4, 0.5, 0.95
FIELDS = ("point", "resample_mean", "resample_sd", "raw_lo", "raw_hi", "centred_lo",
          "centred_hi")


def member_weights(n_members: int) -> np.ndarray:
    """Signal profile w_m = (m + 1)/M."""
    return np.arange(1, n_members + 1, dtype=np.float64) / n_members


def noise_matrix(n_members: int, rho: float = RHO) -> np.ndarray:
    """Member noise correlation A = ρ·J + (1 − ρ)·I (the covariance is A ⊗ I_C)."""
    return rho * np.ones((n_members, n_members)) + (1 - rho) * np.eye(n_members)


def snr_factor(n_members: int, rho: float = RHO) -> float:
    """q = wᵀA⁻¹w: the posterior SNR is s² = a²·q."""
    w = member_weights(n_members)
    return float(w @ np.linalg.solve(noise_matrix(n_members, rho), w))


def bayes_information(snr, n_classes: int = N_CLASSES, *, n_mc: int = 400_000,
                      random_state=0) -> tuple[float, float]:
    """I(U;Y) in bits (and its Monte Carlo standard error) of the module's model at posterior
    SNR ``s = snr``: log2 C + E[log2 softmax(s²·e_y + s·ξ)_y], ξ ~ N(0, I_C) (class y = 0 by
    symmetry; the classes are equally likely)."""
    xi = np.random.default_rng(random_state).standard_normal((int(n_mc), n_classes))
    logits = snr * xi
    logits[:, 0] += snr * snr
    top = logits.max(axis=1, keepdims=True)
    log_post = logits[:, 0] - (top[:, 0] + np.log(np.exp(logits - top).sum(axis=1)))
    terms = np.log2(n_classes) + log_post / np.log(2)
    return float(terms.mean()), float(terms.std(ddof=1) / np.sqrt(terms.size))


def solve_snr(information: float, n_classes: int = N_CLASSES, *, n_mc: int = 400_000,
              random_state=0) -> float:
    """The posterior SNR s giving I(U;Y) = ``information`` bits (bisection, common random
    numbers: I is increasing in s for a fixed draw of ξ)."""
    if not 0 < information < np.log2(n_classes):
        raise ValueError(f"information must lie in (0, log2 C = {np.log2(n_classes):g}) bits, "
                         f"got {information}")
    lo, hi = 0.0, 20.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        got, _ = bayes_information(mid, n_classes, n_mc=n_mc, random_state=random_state)
        lo, hi = (mid, hi) if got < information else (lo, mid)
    return 0.5 * (lo + hi)


def gaussian_members(n: int, n_members: int, signal: float, rng, *, n_classes: int = N_CLASSES,
                     rho: float = RHO) -> tuple[np.ndarray, np.ndarray]:
    """``(u [n, M, C], labels [n])`` of the module's model: n/C examples per class (order
    shuffled), u_m = a·w_m·e_y + √ρ·z + √(1−ρ)·ε_m with a = ``signal``."""
    if n % n_classes:
        raise ValueError(f"n must be a multiple of C = {n_classes}, got {n}")
    y = rng.permutation(np.repeat(np.arange(n_classes), n // n_classes))
    z = rng.standard_normal((n, 1, n_classes))
    eps = rng.standard_normal((n, n_members, n_classes))
    u = np.sqrt(rho) * z + np.sqrt(1 - rho) * eps
    u += signal * member_weights(n_members)[None, :, None] * np.eye(n_classes)[y][:, None, :]
    return u, y


def as_run(u, y) -> Contributions:
    """A Contributions run of members ``u`` (one embed, then attn/mlp writes; zero bias)."""
    n, m, c = u.shape
    members = [Member("embed", "embed", -1, junction=True)] + [
        Member(f"L{i // 2}.{'attn' if i % 2 == 0 else 'mlp'}", "attn" if i % 2 == 0 else "mlp",
               i // 2, junction=i % 2 == 1) for i in range(m - 1)]
    bias = np.zeros(c, dtype=np.float32)
    u32 = u.astype(np.float32)
    return Contributions(u32, bias, y, u32.sum(axis=1) + bias, np.ones((n, m), np.float32),
                         members, [f"option{j}" for j in range(c)], None, {})


def replicate(seed: np.random.SeedSequence, n: int, n_members: int, signal: float,
              n_resamples: int) -> dict:
    """One dataset: the zoo's point, raw replicates, raw and centred 95% intervals."""
    from infodiv.experiments.intervals import probe_bound, resample_interval, shared_indices

    data_seed, boot_seed = seed.spawn(2)
    run = as_run(*gaussian_members(n, n_members, signal, np.random.default_rng(data_seed)))
    point = probe_bound(run)
    idx = shared_indices(run.labels, n_resamples,
                         random_state=int(boot_seed.generate_state(1)[0]))
    reps = np.array([probe_bound(run.take(i)) for i in idx])
    iv = resample_interval(point, reps)
    return {"point": point, "resample_mean": iv["resample_mean"],
            "resample_sd": float(reps.std(ddof=1)),
            "raw_lo": iv["resample_ci95"][0], "raw_hi": iv["resample_ci95"][1],
            "centred_lo": iv["ci95"][0], "centred_hi": iv["ci95"][1]}


def expectation_points(seed: np.random.SeedSequence, count: int, n: int, n_members: int,
                       signal: float) -> np.ndarray:
    """The zoo's point on ``count`` further independent datasets (one stream each)."""
    from infodiv.experiments.intervals import probe_bound

    return np.array([probe_bound(as_run(*gaussian_members(n, n_members, signal,
                                                          np.random.default_rng(s))))
                     for s in seed.spawn(count)])


def population_check(seed, size: int, n_members: int, signal: float) -> float:
    """A probe fitted on ``size`` rows and scored on ``size`` others (bits): the probe's
    large-sample bound, which should reach I(U;Y) in this well-specified model."""
    from infodiv.setfunctions import ProbeSetFunction

    u, y = gaussian_members(2 * size, n_members, signal, np.random.default_rng(seed))
    return float(ProbeSetFunction(u, y).scores(np.arange(n_members)).mean())


def coverage(lo, hi, target: float) -> dict:
    """Coverage of ``target`` by the intervals [lo, hi] (one per replicate) with its Wilson
    95% interval and the miss rate on each side."""
    from infodiv.inference.power import wilson_interval

    lo, hi = np.asarray(lo), np.asarray(hi)
    k, r = int(((lo <= target) & (target <= hi)).sum()), lo.size
    return {"covered": k, "replicates": r, "rate": k / r, "wilson95": list(wilson_interval(k, r)),
            "target_below_interval": float((target < lo).mean()),
            "target_above_interval": float((target > hi).mean())}


def summarise(reps: dict, expect: np.ndarray, truth: float, truth_se: float) -> dict:
    """Coverage, bias, spread and width figures of one configuration."""
    e = float(expect.mean())
    e_se = float(expect.std(ddof=1) / np.sqrt(expect.size))
    pts = reps["point"]
    out = {"expectation": {"value": e, "se": e_se, "datasets": int(expect.size)},
           "information": {"value": truth, "mc_se": truth_se},
           "point": {"mean": float(pts.mean()), "sd": float(pts.std(ddof=1)),
                     "minus_expectation": float(pts.mean() - e),
                     "expectation_minus_information": e - truth,
                     "expectation_minus_information_se": e_se},
           "resamples": {"lean_mean": float((reps["resample_mean"] - pts).mean()),
                         "lean_range": [float(np.min(reps["resample_mean"] - pts)),
                                        float(np.max(reps["resample_mean"] - pts))],
                         "sd_mean": float(reps["resample_sd"].mean()),
                         "sd_over_point_sd": float(reps["resample_sd"].mean() / pts.std(ddof=1)),
                         "raw_misses_own_point": float(((pts < reps["raw_lo"])
                                                        | (pts > reps["raw_hi"])).mean())}}
    for kind in ("raw", "centred"):
        lo, hi = reps[f"{kind}_lo"], reps[f"{kind}_hi"]
        out[kind] = {"width_mean": float((hi - lo).mean()),
                     "expectation": coverage(lo, hi, e),
                     "information": coverage(lo, hi, truth),
                     "lower_end_below_information": float((lo <= truth).mean())}
    return out


def run_config(n_members: int, args, seed: np.random.SeedSequence, previous=None,
               log=print) -> dict:
    """Every figure of one M (resumes from ``args.state``; ``previous``: this M's entry of an
    earlier output, whose coverage CPU time is kept when the state predates storing it)."""
    from tqdm import tqdm

    q = snr_factor(n_members)
    snr = solve_snr(args.information, n_mc=args.mc)
    signal = snr / np.sqrt(q)
    truth, truth_se = bayes_information(snr, n_mc=args.mc, random_state=1)
    cover_seed, expect_seed, pop_seed = seed.spawn(3)
    key = {"n": args.n, "members": n_members, "resamples": args.resamples, "signal": signal,
           "seed": list(map(int, seed.spawn_key)), "entropy": int(seed.entropy), "version": 1}
    state = Path(args.state) / f"M{n_members}.npz"
    done, cpu_before = {f: [] for f in FIELDS}, 0.0
    if state.is_file() and not args.force:
        with np.load(state, allow_pickle=False) as z:
            if json.loads(str(z["key"])) == key:
                done = {f: list(z[f]) for f in FIELDS}
                log(f"M = {n_members}: resuming after {len(done['point'])} replicates ({state})")
                cpu_before = float(z["cpu_s"]) if "cpu_s" in z.files else float("nan")
    if np.isnan(cpu_before) and previous and previous.get("replicates") == len(done["point"]):
        cpu_before = previous["cpu_s"].get("coverage", previous["cpu_s"].get("coverage_this_run"))
    t0 = time.process_time()
    seeds = cover_seed.spawn(args.replicates)
    for i in tqdm(range(len(done["point"]), args.replicates), desc=f"M={n_members}",
                  file=sys.stderr):
        row = replicate(seeds[i], args.n, n_members, signal, args.resamples)
        for f in FIELDS:
            done[f].append(row[f])
        if (i + 1) % 10 == 0 or i + 1 == args.replicates:
            state.parent.mkdir(parents=True, exist_ok=True)
            np.savez(state, key=json.dumps(key), cpu_s=cpu_before + time.process_time() - t0,
                     **{f: np.asarray(done[f]) for f in FIELDS})
    cover_cpu = cpu_before + time.process_time() - t0
    t0 = time.process_time()
    expect = expectation_points(expect_seed, args.expectation, args.n, n_members, signal)
    population = population_check(pop_seed, args.population, n_members, signal)
    extra_cpu = time.process_time() - t0
    reps = {f: np.asarray(done[f][: args.replicates], np.float64) for f in FIELDS}
    doc = {"members": n_members, "n": args.n, "classes": N_CLASSES, "rho": RHO,
           "signal_scale": signal, "posterior_snr": snr, "replicates": args.replicates,
           "n_resamples": args.resamples, "level": LEVEL,
           "population_probe": {"value": population, "fit_rows": args.population,
                                "scored_rows": args.population},
           **summarise(reps, expect, truth, truth_se),
           "cpu_s": {"coverage": cover_cpu, "coverage_per_replicate": cover_cpu / args.replicates,
                     "expectation_and_population": extra_cpu},
           "replicate_values": {f: reps[f] for f in FIELDS}}
    return doc


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--members", type=int, nargs="+", default=[5, 17, 33])
    p.add_argument("--replicates", type=int, default=200)
    p.add_argument("--resamples", type=int, default=100)
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--information", type=float, default=1.3)
    p.add_argument("--expectation", type=int, default=1000)
    p.add_argument("--population", type=int, default=50_000)
    p.add_argument("--mc", type=int, default=400_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--state", default=str(STATE))
    p.add_argument("--force", action="store_true")
    args = p.parse_args(argv)
    bad = [f"--{k} must be >= {lim}, got {v}" for k, v, lim in (
        ("replicates", args.replicates, 2), ("resamples", args.resamples, 20),
        ("expectation", args.expectation, 2), ("n", args.n, 8), ("population", args.population, 8))
        if v < lim] + [f"--members must be >= 2, got {m}" for m in args.members if m < 2]
    if args.n % N_CLASSES:
        bad.append(f"--n must be a multiple of {N_CLASSES}, got {args.n}")
    if not 0 < args.information < np.log2(N_CLASSES):
        bad.append(f"--information must lie in (0, 2) bits, got {args.information}")
    if bad:
        print(f"bench_probe_coverage: {bad[0]}", file=sys.stderr)
        return 2
    from infodiv.reports.serialize import write_json

    out = Path(args.out)
    doc = json.loads(out.read_text()) if out.is_file() else {}
    configs = {c["members"]: c for c in doc.get("configs", [])}
    roots = np.random.SeedSequence(args.seed).spawn(max(args.members) + 1)
    for m in args.members:
        configs[m] = run_config(m, args, roots[m], previous=configs.get(m))
        doc = {"benchmark": "probe_coverage", "description": __doc__.split("\n\n")[2],
               "targets": {"expectation": "E[point] at this n: mean point over independent "
                                          "datasets", "information": "I(U;Y) = the probe's "
                                                                     "population bound here"},
               "configs": [configs[k] for k in sorted(configs)]}
        write_json(out, doc)
        c = configs[m]
        print(f"M = {m}: I = {c['information']['value']:.3f}, E[point] = "
              f"{c['expectation']['value']:.3f}; coverage of E[point] raw "
              f"{c['raw']['expectation']['rate']:.3f}, centred "
              f"{c['centred']['expectation']['rate']:.3f}; of I raw "
              f"{c['raw']['information']['rate']:.3f}, centred "
              f"{c['centred']['information']['rate']:.3f} (R = {c['replicates']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
