"""End to end: ``infodiv run`` on the real stories260K model and SST-2 (the README's main job)."""

import json

from infodiv.cli import main


def test_run_end_to_end_on_stories260k(stories_dir, shared_data_dir, tmp_path):
    out = tmp_path / "run"
    argv = ["run", "--model", str(stories_dir), "--data-dir", str(shared_data_dir), "--n", "120",
            "--out", str(out), "--n-permutations", "20", "--quiet"]
    assert main(argv) == 0
    dec = json.loads((out / "decompositions" / "decompositions.json").read_text())
    assert dec["run"]["N"] == 120 and dec["run"]["M"] == 11
    for row in dec["ensemble"]["bias_diversity"]:
        assert row["max_abs_residual"] < 1e-9
    # Ensemble at k = M with the fixed readout is the model itself.
    fixed = dec["junction_curves"]["fixed"]
    assert abs(fixed["accuracy"][-1] - dec["run"]["accuracy"]) < 1e-12
    for name in ("junction_curves.png", "module_shares.png", "decompositions.md"):
        assert (out / "decompositions" / name).stat().st_size > 0
    assert (out / "curves" / "report.md").is_file()
    assert "decompositions.md" in (out / "README.md").read_text()
    # Rerunning resumes from the finished run directory and gives the same numbers.
    assert main(argv) == 0
    again = json.loads((out / "decompositions" / "decompositions.json").read_text())
    assert again["ensemble"] == dec["ensemble"]
