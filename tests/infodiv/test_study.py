"""A study's settings reach every record unchanged, its seed plan gives every procedure its own
stream, and no command re-parses an argument list."""

from __future__ import annotations

import ast
from dataclasses import fields

import numpy as np
import pytest
from _paths import ROOT

from infodiv.claims import claim_names
from infodiv.inference import dependent_ensemble
from infodiv.study import InferenceSettings, SeedPlan, StudySettings
from infodiv.study.curves import curves_stage

#: sizes that differ from every default, so a size dropped or replaced on the way shows
SIZES = dict(n_bootstrap=23, n_permutations=21, power_replicates=3, n_orders=4, n_mc=3,
             n_random=7)


@pytest.fixture(scope="module")
def run():
    r = dependent_ensemble(160, 5, signal=0.6, rho=0.3, random_state=3)
    r.meta.update(model="synthetic", task="sizes")
    return r


@pytest.fixture(scope="module")
def sized_doc(run, tmp_path_factory):
    s = StudySettings().with_settings(objectives=("accuracy",), n_curve_orders=12, n_triples=6,
                                      stability=0, graph=False, seed=5, **SIZES)
    return curves_stage(run, tmp_path_factory.mktemp("curves"), s, log=lambda *a: None), s


def _records(doc):
    out = []
    for obj, entry in doc["objectives"].items():
        out += [(obj, name, r) for name, r in entry["verdicts"].items()]
    out += [("selection", name, r)
            for name, r in doc["selection"]["inference"]["verdicts"].items()]
    return out


def test_non_default_sizes_are_recorded_in_every_verdict_record(sized_doc):
    doc, s = sized_doc
    recs = _records(doc)
    assert {n for _, n, _ in recs} == {*s.curves.claims, *claim_names("selection")}
    for obj, name, r in recs:
        assert (r["n_bootstrap"], r["n_permutations"], r["n_mc"], r["n_orders"]) == (
            23, 21, 3, 4), (obj, name)
        assert r["power"]["n"] == r["false_positive"]["n"] == 3, (obj, name)
        assert r["n_power_bootstrap"] == 23, (obj, name)   # the power check's B is B
    assert doc["settings"]["n_bootstrap"] == 23 and doc["settings"]["n_permutations"] == 21
    assert doc["selection"]["n_random"] == 7 == doc["settings"]["n_random"]
    assert doc["settings"]["n_curve_orders"] == 12 and doc["settings"]["seed"] == 5


def test_sizes_of_a_named_objective_reach_its_records_only(run, tmp_path):
    """``--objective-sizes``: the named objective's verdicts at its own B = K and power, the
    other objective's and the selection's at the study's, every record saying which."""
    from infodiv.cli import build_parser
    from infodiv.commands.options import study_settings

    args = build_parser().parse_args(["run", "--model", "m", "--objective", "accuracy",
                                      "accuracy_calibrated", "--n-bootstrap", "23",
                                      "--objective-sizes", "accuracy_calibrated=20,2"])
    s = study_settings(args).with_settings(n_curve_orders=12, n_triples=6, stability=0,
                                           graph=False, power_replicates=3, n_orders=4, n_mc=3,
                                           n_random=7)
    assert s.inference.sizes_by_objective == (("accuracy_calibrated", 20, 2),)
    doc = curves_stage(run, tmp_path, s, log=lambda *a: None)
    for obj, name, r in _records(doc):
        b, power = (20, 2) if obj == "accuracy_calibrated" else (23, 3)
        assert (r["n_bootstrap"], r["n_permutations"]) == (b, b), (obj, name)
        assert r["power"]["n"] == power, (obj, name)
    assert doc["settings"]["sizes_by_objective"]["accuracy_calibrated"]["n_bootstrap"] == 20
    with pytest.raises(SystemExit):   # one clear line from argparse, exit 2
        build_parser().parse_args(["run", "--objective-sizes", "mi_readout=10,2"])
    with pytest.raises(ValueError, match="twice"):
        InferenceSettings(sizes_by_objective=(("accuracy", 20, 1), ("accuracy", 30, 1)))


def test_the_answer_figure_ends_at_the_curves_f_all(run, tmp_path):
    """A fitted objective's answer figure uses the curves' cross-fitting split, so the page
    has one value of f(all) (the figure's own seed draws its orders and resamples only)."""
    s = StudySettings().with_settings(objectives=("accuracy_calibrated", "mi_readout"),
                                      n_curve_orders=4, stability=0, graph=False,
                                      verdicts=False, selection_verdicts=False, n_bootstrap=20)
    doc = curves_stage(run, tmp_path, s, log=lambda *a: None)
    for obj, entry in doc["objectives"].items():
        assert entry["answer_curves"]["real"]["mean"][-1] == pytest.approx(
            entry["point"]["f_all"], abs=1e-12), obj


def test_every_replicate_of_a_study_draws_its_own_stream(run, tmp_path, monkeypatch):
    """Over a whole curves stage (two objectives, the selection claims), every replicate's
    stream (bootstrap, null, Monte-Carlo rerun, power surrogate) is a SeedSequence of the one
    study seed, and none lies inside another's branch: a replicate draws from its key's
    children, so a key that extends another's would share its numbers."""
    import infodiv.inference.power as power
    import infodiv.inference.replicates as replicates

    seen = []
    one, task = replicates._one, power._power_task

    def spy_one(run, pipeline, kind, seed, stratify):
        seen.append((seed.entropy, seed.spawn_key))
        return one(run, pipeline, kind, seed, stratify)

    def spy_task(t, rng):
        seen.append((t[3].entropy, t[3].spawn_key))
        return task(t, rng)

    monkeypatch.setattr(replicates, "_one", spy_one)
    monkeypatch.setattr(power, "_power_task", spy_task)
    s = StudySettings().with_settings(objectives=("accuracy", "accuracy_calibrated"),
                                      claims=("diminishing_returns", "redundancy_cost"),
                                      n_curve_orders=6, n_triples=4, stability=0, graph=False,
                                      n_bootstrap=20, power_replicates=2, n_mc=2, seed=11)
    curves_stage(run, tmp_path, s, log=lambda *a: None)
    assert len(seen) > 100 and {e for e, _ in seen} == {11}
    keys = sorted({k for _, k in seen})
    assert len(keys) == len(seen), "two replicates drew the same stream"
    nested = [(a, b) for a in keys for b in keys if a != b and b[:len(a)] == a]
    assert not nested, f"{len(nested)} streams lie inside another's branch: {nested[:2]}"


def test_seed_plan_names_streams_independently_of_order():
    a, b = SeedPlan(3), SeedPlan(3)
    first = a.sequence("curves", "accuracy", "verdicts").generate_state(4)
    b.sequence("selection", "accuracy", "verdicts")   # another procedure first
    assert np.array_equal(first, b.sequence("curves", "accuracy", "verdicts").generate_state(4))
    assert not np.array_equal(first, a.sequence("curves", "mi_readout", "verdicts")
                              .generate_state(4))
    assert not np.array_equal(first, SeedPlan(4).sequence("curves", "accuracy", "verdicts")
                              .generate_state(4))
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        SeedPlan(-1)
    with pytest.raises(ValueError, match="one or more non-empty names"):
        a.sequence()


def test_settings_check_their_values_and_names():
    with pytest.raises(ValueError, match="n_bootstrap must be >= 20, got 5"):
        InferenceSettings(n_bootstrap=5)
    with pytest.raises(ValueError, match="n_permutations must be >= 20"):
        InferenceSettings(n_permutations=10)
    with pytest.raises(ValueError, match=r"1 unknown setting\(s\) \['n_boot'\]"):
        StudySettings().with_settings(n_boot=30)
    with pytest.raises(ValueError, match="selection claim"):
        StudySettings().with_settings(claims=("greedy_beats_random",))
    s = StudySettings().with_settings(n_bootstrap=40, objectives=("accuracy",), seed=2)
    assert (s.inference.n_bootstrap, s.inference.k, s.curves.objectives, s.seed) == (
        40, 40, ("accuracy",), 2)


def test_every_setting_name_is_unique_across_the_stages():
    names = [f.name for stage in fields(StudySettings) if stage.name != "seed"
             for f in fields(getattr(StudySettings(), stage.name))]
    assert len(names) == len(set(names))


def test_n_bootstrap_of_the_demo_reaches_every_size_of_the_study():
    from infodiv.cli import build_parser
    from infodiv.commands.demo import demo_settings

    s = demo_settings(build_parser().parse_args(["demo", "--n", "8", "--n-bootstrap", "27",
                                                 "--workers", "1"]))
    assert (s.inference.n_bootstrap, s.inference.k) == (27, 27)
    assert s.curves.claims == claim_names(("curve", "control"), default=True)


def _calls(tree, names):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name in names:
                yield node.lineno, name


def test_no_module_but_the_cli_parses_an_argument_list():
    """Only ``infodiv/cli.py`` calls ``parse_args`` or ``build_parser``: no command or
    experiment builds argv for another command's parser."""
    found = []
    for path in sorted((ROOT / "infodiv").rglob("*.py")):
        if path.relative_to(ROOT).as_posix() == "infodiv/cli.py":
            continue
        for line, name in _calls(ast.parse(path.read_text()), {"parse_args", "build_parser"}):
            found.append(f"{path.relative_to(ROOT)}:{line} {name}")
    assert not found, found


def test_the_argv_check_sees_a_reparse(tmp_path):
    code = "def run(args):\n    p = build_parser()\n    return p.parse_args(['run'])\n"
    assert [n for _, n in _calls(ast.parse(code), {"parse_args", "build_parser"})] == [
        "build_parser", "parse_args"]


def test_the_design_document_states_the_defaults_of_every_setting():
    from infodiv.study.settings import defaults_table

    text = (ROOT / "docs" / "design.md").read_text()
    table = text.split("<!-- defaults-table -->\n", 1)[1].split("\n<!-- /defaults-table -->")[0]
    assert table == defaults_table()
