"""No figure of a run is a byte copy of another: each PNG the decomposition stage writes is
drawn once, and the variant that equals the default figure is listed under its name."""

from __future__ import annotations

import hashlib


def test_decomposition_figures_are_all_distinct(tmp_path):
    from infodiv.controls import conditionally_independent_ensemble
    from infodiv.reports.decomposition import decomposition_report

    run = conditionally_independent_ensemble(120, 4, mu=0.5, random_state=0)
    doc = decomposition_report(run, tmp_path, info_methods=(), inference=0)
    digests = {}
    for png in sorted(tmp_path.glob("*.png")):
        digests.setdefault(hashlib.sha256(png.read_bytes()).hexdigest(), []).append(png.name)
    copies = [names for names in digests.values() if len(names) > 1]
    assert copies == [], f"byte copies: {copies}"
    files = doc["figures_every_variant"]["files"]
    assert "junction_curves.png" in files and "junction_curves_logit_mean.png" not in files
    assert all((tmp_path / f).is_file() for f in files)
