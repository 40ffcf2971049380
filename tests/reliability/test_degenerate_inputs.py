"""Degenerate inputs: no impossible number leaves the library without an EstimatorWarning or an
exact value, and damaged user files end in one line (exit 2, no traceback).

The usable-information one-member case, the warnings' wording and the 1e154 warning are in
``tests/estimators/test_degenerate_inputs.py`` and ``test_estimator_warnings.py``; here are the
exact values (computed independently: −inf, 0, closed-form Gaussian entropies, extended-precision
squares) and the command line.
"""

from __future__ import annotations

import json
import struct
import warnings

import numpy as np
import pytest
from _cli_checks import one_line_error

import estimators as E
from estimators.diagnostics import EstimatorWarning
from extraction.contributions import Contributions, Member
from extraction.taskfiles import load_task_file


def _gaussian_bits(sigma: float) -> float:
    """Differential entropy of N(mu, sigma^2) in bits: log2(sigma sqrt(2 pi e))."""
    return 0.5 * np.log2(2 * np.pi * np.e * sigma ** 2)


# ------------------------------------------------------------------ exact special cases
@pytest.mark.parametrize("method", ["gaussian", "knn", "binned", "copula"])
def test_one_member_decomposition_is_exact_for_every_method(method):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    u = rng.normal(size=(300, 1, 3)) + (y[:, None, None] == np.arange(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EstimatorWarning)
        d = E.information_decomposition(u, y, method=method)
    assert d.diversity == 0.0 and d.residual == 0.0
    assert d.relevancy == d.joint and d.relevancies == (d.joint,)
    assert d.redundancy == 0.0 and d.conditional_redundancy == 0.0


@pytest.mark.parametrize("method", ["gaussian", "knn", "binned", "copula", "chain"])
@pytest.mark.parametrize("make", [lambda x: np.c_[x, x], lambda x: np.c_[x, 2 * x - 3],
                                  lambda x: np.c_[x, np.full_like(x, 7.0)]],
                         ids=["repeated", "affine", "constant"])
def test_a_degenerate_continuous_entropy_is_minus_inf_with_a_warning(method, make):
    x = np.random.default_rng(1).normal(5, 3, 1000)
    with pytest.warns(EstimatorWarning, match=r"x: column 1 is .*−∞.*returned as -inf"):
        h = E.entropy(make(x), method=method)
    assert h == -np.inf


def test_a_constant_is_minus_inf_as_a_float_and_zero_as_an_integer():
    with pytest.warns(EstimatorWarning, match=r"column 0 is constant \(3 in all n=500"):
        assert E.entropy(np.full(500, 3.0), method="knn") == -np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert E.entropy(np.full(500, 3)) == 0.0    # Shannon entropy of a point mass


@pytest.mark.parametrize("mu, sigma", [(5.0, 3.0), (-1e3, 1e-2), (1e6, 1e3)])
def test_binned_entropy_is_right_for_shifted_and_scaled_data(mu, sigma):
    x = np.random.default_rng(2).normal(mu, sigma, 20000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EstimatorWarning)
        h = E.entropy(x, method="binned", bins=32)
    assert h == pytest.approx(_gaussian_bits(sigma), abs=0.05)


def test_binned_entropy_with_too_few_samples_per_bin_warns():
    x = np.random.default_rng(3).normal(5, 3, 50)
    with pytest.warns(EstimatorWarning, match=r"x: 50 samples fill \d+ bins .*fewer than 10"):
        h = E.entropy(x, method="binned", bins=1000)
    assert h < _gaussian_bits(3.0) - 1   # the bias the warning announces


def _squared_loss_longdouble(u, y):
    """Mean ||onehot(y) - mean_m u_m||^2 / C in extended precision (range ~1e4932)."""
    v = u.astype(np.longdouble)
    t = np.eye(u.shape[2], dtype=np.longdouble)[y]
    return ((t - v.mean(axis=1)) ** 2).sum(axis=1).mean() / u.shape[2]


@pytest.mark.skipif(np.finfo(np.longdouble).maxexp < 2000, reason="no extended precision here")
def test_bias_diversity_beyond_1e154_is_exact_where_float64_can_hold_it():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 4, 200)
    u = rng.normal(size=(200, 3, 4)) * 4e153   # squares of the largest entries overflow
    assert np.abs(u).max() > 1.34e154   # its square is beyond float64's 1.8e308
    truth = _squared_loss_longdouble(u, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)     # no numpy overflow leaks out
        with pytest.warns(EstimatorWarning, match=r"u: magnitude .* computed on u·2\^-"):
            r = E.bias_diversity(u, y)
    assert np.isfinite(r.loss)
    assert float(r.loss) == pytest.approx(float(truth), rel=1e-12)
    assert r.loss == pytest.approx(r.bias - r.diversity, rel=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.warns(EstimatorWarning, match=r"e\+20\d is beyond about 1e154"):
            assert E.bias_diversity(u * 1e47, y).loss == np.inf   # beyond float64: inf


# ------------------------------------------------------------------ task rows
@pytest.mark.parametrize("row, needle", [
    ('{"text": null, "label": "pos"}', "field 'text' is null"),
    ('{"label": "pos"}', "field 'text' is missing"),
    ('{"text": ["a", "b"], "label": "pos"}', "field 'text' holds a JSON list"),
])
def test_a_task_row_without_text_is_refused_with_its_line(tmp_path, row, needle):
    path = tmp_path / "t.jsonl"
    path.write_text('{"text": "good", "label": "pos"}\n' + row + "\n")
    with pytest.raises(ValueError, match=rf"t.jsonl: line 2, {needle}"):
        load_task_file(path, template="{text} Sentiment: {answer}", options=["neg", "pos"],
                       label_field="label")


@pytest.fixture
def model_folder(tmp_path):
    """A folder that passes the model check; loading it would fail (``no_model_load``)."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama"}')
    header = json.dumps({"w": {"dtype": "F32", "shape": [6], "data_offsets": [0, 24]}}).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header
                                               + b"\0" * 24)
    return folder


@pytest.mark.parametrize("row, needle", [
    ('{"text": null, "label": "pos"}', "line 2, field 'text' is null"),
    ('{"text": "bad", "label": null}', "line 2, column 'label'"),
])
def test_cli_task_rows_with_nulls_are_one_line(capsys, no_model_load, tmp_path, model_folder,
                                                row, needle):
    path = tmp_path / "t.jsonl"
    path.write_text('{"text": "good", "label": "pos"}\n' + row + "\n")
    for cmd in ("extract", "run"):
        one_line_error(capsys, [cmd, "--model", str(model_folder), "--task-file", str(path),
                                "--template", "{text} Sentiment: {answer}", "--options",
                                "neg,pos", "--label-field", "label", "--out",
                                str(tmp_path / "o")], needle)


# ------------------------------------------------------------------ run folders
def _contributions(n=40, classes=2, seed=0) -> Contributions:
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(n, 3, 2)).astype(np.float32)
    members = [Member("embed", "embed"), Member("L0", "attn", 0), Member("L1", "attn", 1)]
    return Contributions(u, np.zeros(2, np.float32), np.arange(n) % classes, u.sum(1),
                         np.ones((n, 3)), members, ["a", "b"],
                         meta={"task": "t", "n_examples": n, "model": {"model_id": "m"}})


@pytest.mark.parametrize("text, needle", [
    ("[1, 2, 3]", "holds a list, not a JSON object"),
    ('{"stages": {', "is not valid JSON"),
    ("null", "holds a NoneType, not a JSON object"),
])
def test_a_damaged_run_json_is_one_line_for_every_command(capsys, tmp_path, text, needle):
    root = tmp_path / "run"
    _contributions().save(root / "contributions")
    (root / "run.json").write_text(text)
    for argv in (["report", str(root)], ["decompose", str(root)], ["curves", str(root)],
                 ["select", str(root)], ["decompose", str(root / "contributions")]):
        one_line_error(capsys, argv, "run.json is corrupt", needle, "--overwrite")
    assert (root / "run.json").read_text() == text   # nothing rewritten


def test_curves_on_labels_of_one_class_is_refused_in_one_line(capsys, tmp_path):
    run = _contributions(classes=1).save(tmp_path / "one")
    one_line_error(capsys, ["curves", str(run), "--no-inference"], "1 class")
    assert not (run / "curves" / "report.json").exists()


def test_a_run_json_object_is_still_read(tmp_path):
    from infodiv.runfiles import find_run

    root = tmp_path / "run"
    _contributions().save(root / "contributions")
    (root / "run.json").write_text(json.dumps({"command": "infodiv run", "stages": {}}))
    assert find_run(root) == (root / "contributions", root)


# ------------------------------------------------------------------ every promise of a warning
#: (file, words of the promise on one line, the tests that hold it to its word)
_EW = "tests/estimators/test_estimator_warnings.py::"
_HY = "tests/estimators/test_usable_information.py::test_gaussian_above_label_entropy_warns"
_DIM = _EW + "test_knn_dimension_warning_names_the_advice"
_LNC = ("tests/estimators/test_estimators_lnc.py::"
        "test_lnc_warns_that_it_overcorrects_above_ten_dimensions")
_COLLECT = ("tests/infodiv/test_warncollect.py::"
            "test_500_and_3_warnings_are_two_lines_with_their_counts_and_ranges")
_HERE = "tests/reliability/test_degenerate_inputs.py::"
PROMISES = [
    ("README.md", "A warning is said once per stage and kind", [_COLLECT]),
    ("README.md", "`warning (curves, 37×)", [_COLLECT]),
    ("README.md", "the fragment is scored with a warning",
     ["tests/extraction/test_option_rule.py::test_fragment_without_a_whole_token_is_scored_with_a_warning"]),
    ("README.md", "prints a warning and sets",
     ["tests/infodiv/test_subset.py::test_stability_warning_fires_on_noise_only"]),
    ("README.md", "with a warning when they exceed H(Y)", [_HY]),
    ("README.md", "`EstimatorWarning` names the argument and the numbers",
     [_EW + "test_exact_linear_dependence_warns_with_the_argument_names",
      _EW + "test_near_singular_covariance_warns",
      _EW + "test_overflowing_scale_warns_and_mi_is_rescaled",
      _HERE + "test_binned_entropy_with_too_few_samples_per_bin_warns"]),
    ("README.md", "returned as −inf (with the warning)",
     [_HERE + "test_a_degenerate_continuous_entropy_is_minus_inf_with_a_warning"]),
    ("README.md", "each kind of warning once",
     ["tests/repository/test_notebooks.py::test_the_output_checks_catch_text_figures_and_repeated_warnings",
      _COLLECT]),
    ("docs/adding_a_family.md", "the run warns and falls back",
     ["tests/extraction/test_extract_savings.py::test_reference_check_catches_a_wrong_cache"]),
    ("docs/performance.md", "falls back, with a warning, if they disagree",
     ["tests/extraction/test_extract_savings.py::test_first_batch_check_catches_a_wrong_pruning"]),
    ("docs/estimators.md", "| kNN above 10 joint dimensions | `EstimatorWarning`", [_DIM]),
    ("docs/estimators.md", "an `EstimatorWarning` fires when a label-information term", [_HY]),
    ("docs/estimators.md", "(warns) |", [_HY]),
    ("docs/estimators.md", "and both warn)", [_DIM, _LNC]),
    ("docs/estimators.md", "it warns there)", [_LNC]),
    ("docs/estimators.md", "estimators warn above 10 joint dimensions", [_DIM]),
    ("docs/estimators.md", "## Warnings instead of silent mode switches",
     [_EW + "test_integer_coded_measurement_warns_and_float_is_right",
      _EW + "test_duplicated_rows_warn_with_counts",
      _EW + "test_repeated_variable_in_tc_warns", _DIM]),
    ("docs/estimators.md", "`estimators.diagnostics.EstimatorWarning` (tests in",
     [_EW + "test_clean_inputs_do_not_warn"]),
    ("docs/design.md", "warn when a term exceeds H(Y)", [_HY]),
    ("docs/estimators.md", "| warns for `given=` / `z` / any argument |",
     [_EW + "test_float_labels_as_given_warn"]),
]


def test_every_promise_of_a_warning_has_a_test_that_exists():
    import ast

    from _paths import ROOT

    for file, words, tests in PROMISES:
        assert words in (ROOT / file).read_text(), (file, words)
        for node in tests:
            path, name = node.split("::")
            tree = ast.parse((ROOT / path).read_text())
            assert name in {f.name for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)}, node


def test_no_promise_of_a_warning_is_left_without_a_test():
    """Every README / docs line that says something warns is one of :data:`PROMISES`."""
    from _paths import ROOT

    files = ["README.md"] + sorted(p.relative_to(ROOT).as_posix()
                                   for p in (ROOT / "docs").glob("*.md"))
    for file in files:
        said = [w for f, w, _ in PROMISES if f == file]
        for i, line in enumerate((ROOT / file).read_text().splitlines(), 1):
            if "warn" in line.lower():
                assert any(w in line for w in said), f"{file}:{i} promises a warning: {line}"
