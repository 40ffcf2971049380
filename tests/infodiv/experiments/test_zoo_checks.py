"""The zoo's settings records check their integer fields where they declare them
(:mod:`infodiv.experiments.checks`); ``infodiv zoo`` builds its ``--task hops`` and ``depth-report``
options from those records and refuses negative counts when it parses them, as ``infodiv
validate`` refuses too few samples or seeds."""

from __future__ import annotations

import dataclasses
import re

import pytest

from infodiv.cli import build_parser, main
from infodiv.commands.fields import fields_of as _fields
from infodiv.commands.zoo import HOPS_OPTIONS
from infodiv.commands.zoo_depth import DEPTH_OPTIONS
from infodiv.experiments.configs import ModelSpec
from infodiv.experiments.depth_analysis import DepthSettings
from infodiv.experiments.hops import HopsTask

#: every integer field of each record and its lowest value, written out here (not read back
#: from the records' declarations)
LOWS = {
    ModelSpec: {"depth": 1, "repeats": 1, "seed": 0, "width": 1, "heads": 1, "mlp": 1,
                "max_len": 1},
    HopsTask: {"hops": 1, "min_hops": 1, "symbols": 1, "queries": 1, "n_heldout": 1,
               "heldout_seed": 0, "n_mixed_heldout": 0},
    DepthSettings: {"n_bootstrap": 20, "n_permutations": 39, "n_power": 0, "n_mc": 2,
                    "n_orders": 2, "n_triples": 1, "report_resamples": 20, "resamples": 20,
                    "random_state": 0},
}
REQUIRED = {ModelSpec: {"depth": 2}, HopsTask: {}, DepthSettings: {}}
WORDS = {1: "a positive integer", 0: "a non-negative integer"}


@pytest.mark.parametrize("record", list(LOWS), ids=lambda r: r.__name__)
def test_every_integer_field_is_refused_below_its_bound(record):
    ints = {f.name for f in dataclasses.fields(record) if f.type == "int"}
    assert ints == set(LOWS[record])
    for name, low in LOWS[record].items():
        what = WORDS.get(low, f"an integer >= {low}")
        for bad in (low - 1, True, float(low)):
            message = f"{name} must be {what}, got {bad!r}"
            with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
                record(**{**REQUIRED[record], name: bad})


def test_report_resamples_zero_means_one_fit():
    assert DepthSettings(report_resamples=0).report_resamples == 0
    assert DepthSettings(report_resamples=20).report_resamples == 20


def test_hops_and_depth_options_build_the_records():
    parser = build_parser()
    train = ["zoo", "train", "--task", "hops"]
    assert set(HOPS_OPTIONS) == {f.name for f in dataclasses.fields(HopsTask)}
    assert _fields(parser.parse_args(train), HopsTask, HOPS_OPTIONS) == HopsTask()
    args = parser.parse_args([*train, "--hops", "3", "--symbols", "40", "--next-frac", "0.25",
                              "--heldout-seed", "9"])
    assert _fields(args, HopsTask, HOPS_OPTIONS) == HopsTask(hops=3, symbols=40, next_frac=0.25,
                                                             heldout_seed=9)
    report = ["zoo", "depth-report", "root"]
    assert _fields(parser.parse_args(report), DepthSettings, DEPTH_OPTIONS) == DepthSettings()
    args = parser.parse_args([*report, "--seed", "3", "--n-power", "0", "--objective",
                              "mi_usable"])
    assert _fields(args, DepthSettings, DEPTH_OPTIONS) == DepthSettings(
        random_state=3, n_power=0, objective="mi_usable")


def test_counts_that_skip_at_zero_refuse_negatives(capsys, tmp_path):
    for flag in ("--curves-inference", "--curves-power", "--resamples", "--probe-null",
                 "--information-null"):
        with pytest.raises(SystemExit) as exc:
            main(["zoo", "report", "--root", str(tmp_path / "none"), flag, "-1"])
        err = capsys.readouterr().err.strip()
        assert exc.value.code == 2 and "\n" not in err, err
        assert f"argument {flag}: must be at least 0, got -1" in err, err
    assert not (tmp_path / "none").exists()


def test_validate_refuses_too_few_samples_or_seeds(capsys):
    for argv, needle in ((["--n", "9"], "--n: must be at least 10, got 9"),
                         (["--seeds", "0"], "--replicates: must be at least 1, got 0")):
        with pytest.raises(SystemExit) as exc:
            main(["validate", *argv])
        err = capsys.readouterr().err.strip()
        assert exc.value.code == 2 and "\n" not in err and needle in err, err
