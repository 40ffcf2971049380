"""``infodiv decompose RUN --inference 0`` draws no example resample anywhere: Figures 3/5/7 in
every variant and the model-based information terms give their point estimates (the same as
with resamples), recorded with ``n_bootstrap`` 0, interval and p None and the reason; the
markdown, the summary rows and the figures print no interval and no "nan"; nothing is said on
stderr."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from _synthetic_runs import saved_tiny_run

from infodiv.cli import main

NO_RESAMPLES = "no example resamples (--inference 0)"
NAN = re.compile(r"\bnan\b", re.IGNORECASE)


@pytest.fixture
def resample_counter(monkeypatch):
    """Every example resample the decomposition could draw, counted: the correlation bootstrap
    (series recomputed) and the replicates of a pipeline (model-based terms, depth)."""
    import infodiv.inference.correlations as correlations
    import infodiv.inference.replicates as replicates

    drawn = []
    for module in (correlations, replicates):
        real = module.bootstrap_indices

        def counted(*a, _real=real, _where=module.__name__, **k):
            drawn.append(_where)
            return _real(*a, **k)

        monkeypatch.setattr(module, "bootstrap_indices", counted)
    return drawn


def _run_folder(tmp_path):
    root = tmp_path / "run"
    saved_tiny_run(root / "contributions")
    (root / "run.json").write_text(json.dumps({"config": {"seed": 0}, "stages": {}}))
    return root


def test_inference_zero_draws_no_resample_and_records_point_estimates(tmp_path, capsys,
                                                                      resample_counter):
    from extraction.contributions import Contributions
    from infodiv.reports.summary import collect
    from infodiv.study.decompose import information_terms, variant_correlations
    from infodiv.study.seeds import SeedPlan

    root = _run_folder(tmp_path)
    assert main(["decompose", str(root), "--inference", "0", "--info-method", "usable",
                 "gaussian"]) == 0
    err = capsys.readouterr().err
    assert err == "", err                     # no note, no warning
    assert resample_counter == []             # not one example resample drawn
    out = root / "decompositions"
    doc = json.loads((out / "decompositions.json").read_text())

    fig = doc["figures_every_variant"]
    assert fig["n_bootstrap"] == 0 and fig["no_interval"] == NO_RESAMPLES
    assert fig["p_value"] is None and "replicates" not in fig
    assert len(fig["rows"]) == 36 and (out / "figure3_variants.png").is_file()
    for row in fig["rows"]:
        assert row["ci"] is None and row["p_bootstrap"] is None and row["ci_widened"] is None
        assert row["no_interval"] == NO_RESAMPLES and np.isfinite(row["r"])
    inf = doc["information_inference"]
    assert inf["settings"]["n_resamples"] == 0 and inf["settings"]["n_null"] == 0
    gauss = {k: v for k, v in inf["methods"]["gaussian"].items() if isinstance(v, dict)}
    assert set(gauss) >= {"joint", "relevancy", "diversity", "bound_lower", "bound_upper"}
    for term in gauss.values():
        assert term["n_bootstrap"] == 0 and term["ci"] is None
        assert term["no_interval"] == NO_RESAMPLES and np.isfinite(term["value"])
        assert "p" not in term and "corrected" not in term     # no null either (K = 0)
    assert "depth" not in doc

    # the same point estimates as a run with resamples (B = 20, the fewest a positive
    # --inference draws: the point estimates do not depend on B), computed here
    contrib = Contributions.load(root / "contributions")
    seed = SeedPlan(0).integer("decompose")
    ref_fig, _ = variant_correlations(contrib, n_bootstrap=20, random_state=seed)
    assert resample_counter                    # the counter does see resamples
    assert [r["r"] for r in fig["rows"]] == [r["r"] for r in ref_fig["rows"]]
    assert all(r["ci"][0] <= r["r"] <= r["ci"][1] for r in ref_fig["rows"])
    ref_info, ref_inf = information_terms(contrib, ("gaussian",), seed, inference=20, n_null=0)
    assert ref_inf["methods"]["gaussian"]["joint"]["n_bootstrap"] == 20
    assert doc["information"]["gaussian"] == ref_info["gaussian"]
    assert {k: v["value"] for k, v in gauss.items()} == {
        k: v["value"] for k, v in ref_inf["methods"]["gaussian"].items() if isinstance(v, dict)}

    # the markdown: values, no interval, no nan
    md = (out / "decompositions.md").read_text()
    assert not NAN.search(md), NAN.findall(md)
    assert "B = 0: no example resamples (--inference 0)" in md and "no label permutations" in md
    fig_rows = [line for line in md.splitlines() if line.startswith("| logit/")]
    gauss_rows = [line for line in md.splitlines() if line.startswith("| gaussian |")]
    assert len(fig_rows) == 6 and len(gauss_rows) == 7
    for line in fig_rows + gauss_rows:
        assert "no interval (inference 0)" in line and "[" not in line, line
    r0 = fig["rows"][0]
    assert f"| {r0['variant']} | {r0['measure']} | 0 | {r0['r']:.3f} | no interval " \
           "(inference 0) | — |" in md
    # the page's rows: the values, no interval, the reason
    rows = [r for r in collect(root)["rows"] if "gaussian" in r["estimator"]
            and r["section"].startswith("Information: intervals")]
    assert rows and all(r["low"] is None and r["high"] is None and NO_RESAMPLES in r["estimator"]
                        and np.isfinite(r["value"]) for r in rows)


def test_model_based_terms_without_resamples_keep_a_label_null_when_asked():
    """``--inference 0 --info-null K``: the observed values without interval, the label null's
    mean and p, the null-corrected value without interval; the markdown says so."""
    from _synthetic_runs import synthetic

    from infodiv.inference.information_terms import information_inference
    from infodiv.reports.information_md import information_lines

    run = synthetic(n=60, m=3, c=2, signal=0.8)
    zero = information_inference(run, ("gaussian",), n_resamples=0, n_null=19)
    ref = information_inference(run, ("gaussian",), n_resamples=20, n_null=19)
    z, r = zero["methods"]["gaussian"], ref["methods"]["gaussian"]
    for term in ("joint", "relevancy", "diversity", "bound_lower", "bound_upper"):
        assert z[term]["value"] == r[term]["value"] and z[term]["ci"] is None
        assert z[term]["null_mean"] == r[term]["null_mean"] and z[term]["p"] == r[term]["p"]
        assert z[term]["corrected"] == pytest.approx(r[term]["corrected"], abs=1e-12)
        assert z[term]["corrected_ci"] is None
    assert "p" not in z["redundancy"]          # label-free: no null, as with resamples
    md = "\n".join(information_lines({"information_inference": zero}))
    assert not NAN.search(md), NAN.findall(md)
    assert "K = 19 label permutations" in md
    row = next(line for line in md.splitlines() if line.startswith("| gaussian | joint"))
    assert row.count("no interval (inference 0)") == 2 and "[" not in row


def test_correlations_accept_zero_resamples_and_refuse_too_few():
    from _synthetic_runs import synthetic

    from infodiv.inference.correlations import fisher_z_average, junction_correlations

    run = synthetic(n=60, m=5, c=2, signal=0.8)
    res = junction_correlations(run, variants=("logit/mean",), n_bootstrap=0)
    assert res["n_bootstrap"] == 0 and res["replicates"] == {}
    assert all(r["ci"] is None and r["p_bootstrap"] is None for r in res["rows"])
    for bad in (1, 19, -1):
        with pytest.raises(ValueError, match="0 \\(no resample\\) or >= 20"):
            junction_correlations(run, variants=("logit/mean",), n_bootstrap=bad)
    with pytest.raises(ValueError, match="replicates"):
        fisher_z_average({"t": res}, "logit/mean", "mse")
