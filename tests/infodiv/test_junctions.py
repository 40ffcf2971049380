"""Junction curves, the Figure 3 / Figure 4 / Table 1 tables and their figures.

Synthetic Contributions are built from random arrays with ``logits = u.sum(1) + bias``; every
junction point is checked against the direct decomposition of the prefix's members (to 1e-10
relative, see tests/estimators/test_ensemble.py). The real run is stories260K on all 872 SST-2
dev examples (fixture ``stories_sst2``; skipped when ../shared is absent).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.special import logsumexp

from estimators.ensemble import bias_diversity, paper_eq14
from extraction.contributions import Contributions, Member
from infodiv.junctions import junction_curves
from infodiv.reports.figures import (
    plot_correlations,
    plot_junction_curves,
    plot_module_shares,
    standardize,
)
from infodiv.runs import ensemble_arrays
from infodiv.tables import correlation_table, fisher_z_mean, module_shares, sharing_table

TOL = 1e-10


def make_contrib(seed, *, n=30, layers=3, c=3, heads=0, bias=True, spread=2.0, model="tiny",
                 task="sst2"):
    """Random Contributions: embed, then per layer attention (optionally split into heads, only
    the last head a junction) and MLP; logits = u.sum(1) + bias."""
    rng = np.random.default_rng(seed)
    members = [Member("embed", "embed")]
    for layer in range(layers):
        if heads:
            members += [Member(f"L{layer}.attn#0.h{h}", "attn", layer, head=h,
                               junction=h == heads - 1) for h in range(heads)]
        else:
            members.append(Member(f"L{layer}.attn#0", "attn", layer))
        members.append(Member(f"L{layer}.mlp#0", "mlp", layer))
    m = len(members)
    u = (spread * rng.standard_normal((n, m, c))).astype(np.float32)
    b = (rng.standard_normal(c) if bias else np.zeros(c)).astype(np.float32)
    y = rng.integers(0, c, n)
    scale = np.exp(0.3 * rng.standard_normal((n, m))).astype(np.float32)
    return Contributions(u, b, y, u.astype(np.float64).sum(1) + b, scale, members,
                         [f"o{i}" for i in range(c)], meta={"model": model, "task": task})


def close(a, b, scale):
    a, b = np.asarray(a), np.asarray(b)
    assert np.all(np.abs(a - b) <= TOL * (1 + np.abs(scale))), float(np.max(np.abs(a - b)))


def direct(contrib, k, readout, space, scale):
    """The prefix's members decomposed directly with the estimators (float64 throughout)."""
    u = contrib.u.astype(np.float64)[:, :k]
    if readout == "logit_lens":
        s = contrib.scale.astype(np.float64)
        u = u * (s[:, -1] / s[:, k - 1])[:, None, None]
    b = contrib.bias.astype(np.float64)
    y = contrib.labels
    if space == "paper_eq14":
        r = paper_eq14(u, y, scale=scale, bias=b)
        sq = (r.mse, r.bias, r.diversity)
    else:
        r = bias_diversity(u, y, space=space, scale=scale, bias=b)
        sq = (r.loss, r.bias, r.diversity)
    ce = bias_diversity(u, y, loss="cross_entropy", scale=scale, bias=b)
    acc = ((u.sum(1) + b).argmax(1) == y).mean()
    return (acc, *sq, ce.loss, ce.bias, ce.diversity)


CONFIGS = list(itertools.product(("fixed", "logit_lens"), ("logit", "probability", "paper_eq14"),
                                 ("mean", "sum")))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), with_bias=st.booleans(), heads=st.sampled_from([0, 2]),
       spread=st.sampled_from([0.1, 3.0, 3e3]))
def test_every_junction_point_is_the_direct_decomposition(seed, with_bias, heads, spread):
    contrib = make_contrib(seed, n=12, layers=2, heads=heads, bias=with_bias, spread=spread)
    fields = ("accuracy", "mse", "bias", "diversity", "cross_entropy", "ce_bias",
              "ce_diversity")
    for readout, space, scale in CONFIGS:
        cur = junction_curves(contrib, readout=readout, space=space, scale=scale)
        np.testing.assert_array_equal(cur.k, contrib.junctions + 1)
        for i, k in enumerate(cur.k):
            want = direct(contrib, k, readout, space, scale)
            got = [getattr(cur, f)[i] for f in fields]
            size = abs(want[2]) + abs(want[5]) + 1
            assert got[0] == want[0]
            close(got[1:], want[1:], size)
            close(got[1], got[2] - got[3], size)            # mse = bias − diversity at every k
            close(got[4], got[5] - got[6], size)


def test_all_prefixes_with_the_fixed_readout():
    contrib = make_contrib(1, heads=3)
    cur = junction_curves(contrib, at="all", space="probability")
    assert cur.k.tolist() == list(range(1, contrib.n_members + 1))
    for k in (1, 2, 5):
        want = direct(contrib, k, "fixed", "probability", "mean")
        close([cur.mse[k - 1], cur.ce_diversity[k - 1]], [want[1], want[6]], 10)
    assert cur.diversity[0] == 0 and cur.ce_diversity[0] == 0     # one member: no diversity


def test_tiling_over_examples_does_not_change_results():
    contrib = make_contrib(2, n=25)
    a = junction_curves(contrib, readout="logit_lens", space="probability", scale="sum")
    b = junction_curves(contrib, readout="logit_lens", space="probability", scale="sum",
                        block_bytes=1)
    for f in ("accuracy", "mse", "bias", "diversity", "cross_entropy", "ce_diversity"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))


def test_cross_entropy_can_be_skipped():
    contrib = make_contrib(7, heads=2)
    full = junction_curves(contrib, readout="logit_lens")
    lean = junction_curves(contrib, readout="logit_lens", cross_entropy=False)
    assert lean.cross_entropy is None and lean.ce_diversity is None
    for f in ("accuracy", "mse", "bias", "diversity"):
        np.testing.assert_array_equal(getattr(full, f), getattr(lean, f))


@pytest.mark.parametrize("readout", ["fixed", "logit_lens"])
def test_full_depth_reproduces_the_model(readout):
    contrib = make_contrib(3, n=200, c=4, heads=2)
    cur = junction_curves(contrib, readout=readout, scale="sum")
    assert cur.k[-1] == contrib.n_members
    assert cur.accuracy[-1] == contrib.accuracy() == cur.model_accuracy
    z = contrib.logits.astype(np.float64)
    model_ce = (logsumexp(z, axis=1) - z[np.arange(200), contrib.labels]).mean() / np.log(2)
    close(cur.cross_entropy[-1], model_ce, 1e4)            # float32 logits: 1e-6 relative


def test_bad_input():
    contrib = make_contrib(4, heads=2)
    with pytest.raises(ValueError, match="defined only at junction members"):
        junction_curves(contrib, readout="logit_lens", at="all")
    for kw, msg in [({"readout": "lens"}, "readout must be"), ({"space": "bits"}, "space must"),
                    ({"scale": "max"}, "scale must"), ({"at": "some"}, "at must")]:
        with pytest.raises(ValueError, match=msg):
            junction_curves(contrib, **kw)
    contrib.scale[0, 2] = 0.0
    with pytest.raises(ValueError, match="1 non-positive"):
        junction_curves(contrib, readout="logit_lens")
    contrib.u[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="contrib.u contains 1 NaN"):
        junction_curves(contrib)
    contrib = make_contrib(5)
    contrib.labels[3] = 7
    with pytest.raises(ValueError, match=r"contrib.labels must lie in \[0, 3\)"):
        junction_curves(contrib)


# ---------------------------------------------------------------------------- tables
@pytest.fixture(scope="module")
def runs():
    return [make_contrib(10 * i + j, n=40, layers=4, c=2, model=model, task=task)
            for i, model in enumerate(("base", "base-LS"))
            for j, task in enumerate(("sst2", "rte", "boolq"))]


def test_correlation_table_matches_scipy_and_fisher_z(runs):
    table = correlation_table(runs)
    assert len(table) == 2 * 4 * 3 * 2                   # (3 tasks + Avg.) × 3 measures × 2
    cur = junction_curves(runs[1])
    row = table.select(model="base", task="rte", measure="diversity", method="spearman")[0]
    rho = stats.spearmanr(cur.accuracy, cur.diversity)
    assert (row["r"], row["p"], row["n"]) == (rho.statistic, rho.pvalue, cur.k.size)
    per_task = [r["r"] for r in table.select(model="base-LS", measure="mse", method="pearson")
                if r["task"] != "Avg."]
    avg = table.select(model="base-LS", task="Avg.", measure="mse", method="pearson")[0]
    close(avg["r"], np.tanh(np.arctanh(per_task).mean()), 1)
    assert np.isnan(avg["p"]) and avg["n"] == 3


def test_fisher_z_mean():
    close(fisher_z_mean([0.2, 0.8], [13, 53]), np.tanh((10 * np.arctanh(0.2)
                                                        + 50 * np.arctanh(0.8)) / 60), 1)
    close(fisher_z_mean([0.5, np.nan], [10, 10]), 0.5, 1)   # tanh(artanh(r)) rounds
    assert np.isnan(fisher_z_mean([np.nan], [10]))


def test_constant_accuracy_gives_nan_not_a_crash():
    contrib = make_contrib(6, n=20, c=2)
    contrib.u[:, :, 0] += 1e3                               # option 0 always wins
    table = correlation_table([contrib])
    per_task = [r for r in table.to_records() if r["task"] != "Avg."]
    assert all(np.isnan(r["r"]) for r in per_task)


def test_module_shares_add_to_one(runs):
    table = module_shares(runs)
    for model, task, term in itertools.product(("base", "base-LS"), ("sst2", "rte", "Avg."),
                                               ("bias", "diversity")):
        rows = table.select(model=model, task=task, term=term)
        assert [r["group"] for r in rows] == ["embed", "attn", "mlp"]
        close(sum(r["share"] for r in rows), 1.0, 1)
    res = bias_diversity(**ensemble_arrays(runs[0]))
    row = table.select(model="base", task="sst2", term="diversity", group="mlp")[0]
    close(row["part"], res.by_group["mlp"].diversity_part, 1)
    precomputed = module_shares({("base", "sst2"): res})      # results keyed by (model, task)
    assert precomputed.rows[:6] == table.rows[:6]
    avg = table.select(model="base", task="Avg.", term="bias", group="attn")[0]["share"]
    close(avg, np.mean([r["share"] for r in table.select(model="base", term="bias",
                                                         group="attn")
                        if r["task"] != "Avg."]), 1)


def test_sharing_table(runs):
    base, shared = runs[:3], runs[3:]
    table = sharing_table(shared, base)
    assert table.columns[:3] == ("task", "accuracy [base]", "accuracy [base-LS]")
    assert table.column("task") == ["sst2", "rte", "boolq", "Avg."]
    eq = paper_eq14(shared[1].u, shared[1].labels, bias=shared[1].bias)
    row = table.to_records()[1]
    assert row["accuracy [base-LS]"] == shared[1].accuracy()
    close([row["mse [base-LS]"], row["diversity [base-LS]"]], [eq.mse, eq.diversity], 1)
    close(table.to_records()[-1]["bias [base]"],
          np.mean([paper_eq14(r.u, r.labels, bias=r.bias).bias for r in base]), 1)
    ce = sharing_table(shared, base, variant="cross_entropy")
    close(ce.to_records()[0]["mse [base]"],
          bias_diversity(**ensemble_arrays(base[0]), loss="cross_entropy").loss, 1)
    keyed = sharing_table({r.meta["task"]: r for r in shared},
                          {r.meta["task"]: r for r in base}, names=("A", "B"))
    assert keyed.rows[1][1:] == table.rows[1][1:] and keyed.columns[1] == "accuracy [A]"
    with pytest.raises(ValueError, match="different tasks"):
        sharing_table(shared[:2], base)


# ---------------------------------------------------------------------------- figures
def test_figures_are_written(runs, tmp_path):
    curves = [junction_curves(r) for r in runs]
    fig = plot_junction_curves(curves, tmp_path / "fig5.png")
    line = next(ln for ln in fig.axes[min(4, len(curves))].get_lines() if ln.get_label() == "mse")
    np.testing.assert_allclose(line.get_ydata(), curves[0].mse)     # first run, absolute
    fig = plot_junction_curves(curves, standardized=True)
    line = next(ln for ln in fig.axes[min(4, len(curves))].get_lines() if ln.get_label() == "mse")
    np.testing.assert_allclose(line.get_ydata(), standardize(curves[0].mse))
    plot_correlations(correlation_table(curves), tmp_path / "fig3.png")
    plot_module_shares(module_shares(runs), tmp_path / "fig4.png")
    for name in ("fig3.png", "fig4.png", "fig5.png"):
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


# ---------------------------------------------------------------------------- real run
@pytest.mark.real_model
@pytest.mark.parametrize("readout", ["fixed", "logit_lens"])
def test_stories260k_sst2_full_depth_reproduces_model_accuracy(stories_sst2, readout):
    contrib = stories_sst2
    assert contrib.n_examples == 872
    cur = junction_curves(contrib, readout=readout, scale="sum")
    assert cur.k[-1] == contrib.n_members
    assert cur.accuracy[-1] == contrib.accuracy()
    z = contrib.logits.astype(np.float64)
    model_ce = (logsumexp(z, axis=1) - z[np.arange(872), contrib.labels]).mean() / np.log(2)
    assert abs(cur.cross_entropy[-1] - model_ce) < 1e-4
    paper = junction_curves(contrib, readout=readout)
    close(paper.mse, paper.bias - paper.diversity, paper.bias)
