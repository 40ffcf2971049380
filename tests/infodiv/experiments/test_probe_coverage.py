"""The zoo's centred probe-bound interval covers the estimator's expectation.

A small version of benchmarks/bench_probe_coverage.py (class-conditional Gaussian members with a
known I(U;Y); the point and both intervals from infodiv.experiments.intervals): over R seeded
datasets the centred 95% interval must cover E[point] (mean point over further independent datasets)
at least as often as a true 95% rate explains (tests/_binomial.py), and the raw percentile interval
of the resamples, which leans below its point, must not: the check has power against an
uncentred interval.
"""

import importlib.util

import numpy as np
import pytest
from _binomial import binomial_floor
from _paths import ROOT

from infodiv.experiments.intervals import probe_bound, replicates, resample_interval, shared_indices

_PATH = ROOT / "benchmarks" / "bench_probe_coverage.py"
_SPEC = importlib.util.spec_from_file_location("bench_probe_coverage", _PATH)
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)

N, M, B, R, N_EXPECT = 800, 9, 20, 20, 100


def _signal(information=1.3, n_members=M):
    snr = bench.solve_snr(information, n_mc=20_000)
    return snr / np.sqrt(bench.snr_factor(n_members))


def test_benchmark_replicate_is_the_zoo_replicate():
    """The benchmark's probe replicate probe_bound(run.take(idx)) is the probe figure of the
    zoo's own replicates (model_figures on every resample), and its centred interval is the
    percentile interval of the replicates centred on the point."""
    rng = np.random.default_rng(5)
    run = bench.as_run(*bench.gaussian_members(200, 3, _signal(n_members=3), rng))
    idx = shared_indices(run.labels, 20, random_state=3)
    ours = np.array([probe_bound(run.take(i)) for i in idx[:3]])
    zoo = replicates(run, idx[:3])["probe_bound"]
    np.testing.assert_array_equal(ours, zoo)
    point = probe_bound(run)
    iv = resample_interval(point, ours)
    np.testing.assert_allclose(iv["ci95"], np.percentile(ours - ours.mean() + point, [2.5, 97.5]))


@pytest.mark.slow
def test_centred_interval_covers_the_expectation_at_its_nominal_level():
    signal = _signal()
    root = np.random.SeedSequence(2026)
    cover_seed, expect_seed = root.spawn(2)
    expect = bench.expectation_points(expect_seed, N_EXPECT, N, M, signal).mean()
    rows = [bench.replicate(s, N, M, signal, B) for s in cover_seed.spawn(R)]
    centred = bench.coverage([r["centred_lo"] for r in rows], [r["centred_hi"] for r in rows],
                             expect)
    raw = bench.coverage([r["raw_lo"] for r in rows], [r["raw_hi"] for r in rows], expect)
    floor = binomial_floor(0.95, R)
    assert centred["rate"] >= floor, (centred, floor)
    # the resamples' lean (fewer distinct rows per cross-fitting half) pushes the raw interval
    # below E[point]: an uncentred interval fails the same check
    assert raw["rate"] < floor and raw["target_above_interval"] > 0.5, (raw, floor)
