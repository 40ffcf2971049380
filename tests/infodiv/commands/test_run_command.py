"""End to end: ``infodiv run`` (run folders, stage skipping, interrupt/resume, reports) and
``infodiv demo`` on a small N."""

import json

import numpy as np
import pytest

from infodiv.cli import main
from infodiv.runfiles import model_slug, run_name
from infodiv.study.data import load_task, stratified_indices

FAST = ["--n-curve-orders", "10", "--n-bootstrap", "20", "--power-replicates", "2", "--quiet"]


@pytest.fixture(scope="module")
def stories_run(stories_dir, shared_data_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    argv = ["run", "--model", str(stories_dir), "--data-dir", str(shared_data_dir), "--n", "120",
            "--out", str(out), *FAST]
    assert main(argv) == 0
    return out / "stories260K-sst2-n120-0shot-block", argv


@pytest.mark.slow
def test_run_folder_layout_and_numbers(stories_run, tmp_path):
    folder, _ = stories_run
    dec = json.loads((folder / "decompositions" / "decompositions.json").read_text())
    assert dec["run"]["N"] == 120 and dec["run"]["M"] == 11
    for row in dec["ensemble"]["bias_diversity"]:
        assert row["max_abs_residual"] < 1e-9
    # Ensemble at k = M with the fixed readout is the model itself.
    fixed = dec["junction_curves"]["fixed"]
    assert abs(fixed["accuracy"][-1] - dec["run"]["accuracy"]) < 1e-12
    for name in ("decompositions/junction_curves.png", "decompositions/module_shares.png",
                 "curves/report.md", "report.html", "report.csv", "report.json", "run.json"):
        assert (folder / name).stat().st_size > 0, name
    run_doc = json.loads((folder / "run.json").read_text())
    assert set(run_doc["stages"]) == {"extract", "decompose", "curves"}
    assert run_doc["config"]["n"] == 120
    meta = json.loads((folder / "contributions" / "meta.json").read_text())["meta"]
    assert meta["model"]["name"] == "stories260K"


@pytest.mark.slow
def test_reports_hold_no_absolute_paths(stories_run):
    folder, _ = stories_run
    for name in ("report.html", "report.json", "report.csv", "curves/report.json",
                 "curves/report.md", "decompositions/decompositions.md"):
        text = (folder / name).read_text()
        assert str(folder.parent) not in text, name
        assert "/work/" not in text and "/tmp/" not in text, name


@pytest.mark.slow
def test_rerun_skips_unchanged_stages(stories_run, capsys):
    folder, argv = stories_run
    before = (folder / "decompositions" / "decompositions.json").read_text()
    capsys.readouterr()
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "extract: unchanged" in out and "decompose: unchanged, skipped" in out
    assert "curves: unchanged, skipped" in out
    assert (folder / "decompositions" / "decompositions.json").read_text() == before
    # a changed analysis setting reruns only the curves
    assert main([*argv[:-7], "--n-curve-orders", "12", *FAST[2:]]) == 0
    out = capsys.readouterr().out
    assert "decompose: unchanged" in out and "curves: unchanged" not in out


@pytest.mark.slow
def test_another_n_is_another_folder(stories_run, stories_dir, shared_data_dir):
    folder, argv = stories_run
    i = argv.index("--n")
    assert main([*argv[:i], "--n", "40", *argv[i + 2:]]) == 0
    other = folder.parent / "stories260K-sst2-n40-0shot-block"
    assert json.loads((other / "run.json").read_text())["config"]["n"] == 40
    assert json.loads((folder / "run.json").read_text())["config"]["n"] == 120


@pytest.mark.slow
def test_decompose_curves_report_accept_the_run_folder(stories_run, capsys):
    folder, _ = stories_run
    outputs = [folder / "decompositions" / "decompositions.json", folder / "curves" / "report.json"]
    before = [p.stat().st_mtime_ns for p in outputs]
    assert main(["decompose", str(folder), "--info-method", "gaussian"]) == 0
    assert main(["curves", str(folder), "--objective", "accuracy", "--n-curve-orders", "5",
                 "--n-triples", "5", "--n-bootstrap", "20", "--power-replicates", "2",
                 "--stability", "0", "--no-graph"]) == 0
    assert not (folder / "contributions" / "decompositions").exists()
    assert not (folder / "contributions" / "curves").exists()
    assert all(p.stat().st_mtime_ns > t for p, t in zip(outputs, before))   # rewritten in place
    assert main(["report", str(folder), "--out", str(folder / "again.html")]) == 0
    assert "report: " in capsys.readouterr().out
    assert (folder / "again.html").stat().st_size > 10_000
    assert main(["report", str(folder / "contributions"), "--out",
                 str(folder / "again2.html")]) == 0


@pytest.mark.slow
def test_interrupt_keeps_shards_and_resume_says_so(stories_dir, shared_data_dir, tmp_path,
                                                   monkeypatch, capsys):
    from extraction import shards

    argv = ["run", "--model", str(stories_dir), "--data-dir", str(shared_data_dir), "--n",
            "150", "--batch-size", "10", "--out", str(tmp_path), "--objective", "accuracy",
            *FAST]
    real_save, calls = shards.ShardStore.save, []

    def save_then_interrupt(self, i, arrays):
        real_save(self, i, arrays)
        calls.append(i)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(shards.ShardStore, "save", save_then_interrupt)
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert "interrupted: 150 of 150" not in err
    done = int(err.split("interrupted: ")[1].split(" of ")[0])
    assert 0 < done < 150 and "to resume" in err
    monkeypatch.setattr(shards.ShardStore, "save", real_save)
    assert main(argv) == 0
    assert f"resuming: {done} of 150 examples done" in capsys.readouterr().out
    folder = tmp_path / "stories260K-sst2-n150-0shot-block"
    resumed = json.loads((folder / "contributions" / "meta.json").read_text())["arrays_sha256"]
    # the same arrays as an uninterrupted run
    assert main([*argv[:9], "--out", str(tmp_path / "clean"), "--objective", "accuracy",
                 *FAST]) == 0
    clean = json.loads((tmp_path / "clean" / folder.name / "contributions" / "meta.json")
                       .read_text())["arrays_sha256"]
    assert resumed == clean


def test_stratified_indices_follow_the_split_proportions():
    labels = np.array([0] * 30 + [1] * 5 + [2] * 5 + [3] * 60 + [0] * 70 + [1] * 95
                      + [2] * 95 + [3] * 40)       # 400 rows, 100 of each class
    idx = stratified_indices(labels, 100)
    assert len(idx) == 100 and np.all(np.diff(idx) > 0)
    assert np.bincount(labels[idx]).tolist() == [25, 25, 25, 25]
    assert np.bincount(labels[:100]).tolist() == [30, 5, 5, 60]      # what --n alone gives
    odd = stratified_indices(np.array([0] * 7 + [1] * 3), 5)        # 3.5 / 1.5 -> 4 / 1
    assert np.bincount(np.array([0] * 7 + [1] * 3)[odd]).tolist() == [4, 1]


def test_stratified_ag_news(shared_data_dir):
    first = load_task("ag_news", data_dir=shared_data_dir, n=100)
    strat = load_task("ag_news", data_dir=shared_data_dir, n=100, stratify=True)
    assert np.bincount(strat.labels).tolist() == [25, 25, 25, 25]
    assert np.bincount(first.labels).min() < 25
    assert strat.meta["stratified"] and len(strat.meta["indices"]) == 100
    assert all(not f.startswith("/") for f in strat.meta["source_files"])


@pytest.mark.parametrize("model, slug", [
    ("HuggingFaceTB/SmolLM2-135M-Instruct", "SmolLM2-135M-Instruct"),
    ("../shared/models/stories260K/hf", "stories260K"),
    ("/x/models--org--Name/snapshots/" + "a" * 40, "Name"),
    ("smollm2-135m", "smollm2-135m"),
    ("/m/tiny.Q4.gguf", "tiny.Q4"),
])
def test_model_slug(model, slug):
    assert model_slug(model) == slug
    assert run_name(model, "sst2", 872, 2, "head", True) == f"{slug}-sst2-n872-2shot-head-strat"


@pytest.mark.slow
@pytest.mark.real_model
def test_demo_small_n(smollm2_available, tmp_path, capsys):
    """``infodiv demo`` end to end on 40 of the bundled AG News rows (all four classes; the
    full demo is 1000)."""
    assert main(["demo", "--out", str(tmp_path), "--n", "40", "--n-curve-orders", "10",
                 "--n-bootstrap", "20", "--power-replicates", "2", "--quiet"]) == 0
    folder = tmp_path / "smollm2-135m-ag_news-n40-0shot-block"
    meta = json.loads((folder / "contributions" / "meta.json").read_text())["meta"]
    assert meta["n_examples"] == 40 and meta["exactness_ok"]
    assert meta["task_meta"]["data_source"] == "bundled (infodiv/data)"
    out = capsys.readouterr().out
    assert "smollm2-135m on ag_news: N=40 M=61 C=4" in out and "report: " in out
    page = (folder / "report.html").read_text()
    assert page.index("id='verdicts'") < page.index("<details")   # the answer comes first
    from infodiv.commands.demo import CURVES

    CLAIMS = CURVES.claims

    entry = json.loads((folder / "curves" / "report.json").read_text())["objectives"]["accuracy"]
    # every claim of the demo is judged, or listed with the reason it cannot be on 40 rows
    assert set(entry["verdicts"]) | set(entry["not_tested"]) == set(CLAIMS)
    assert {"premise", "redundancy_cost"} <= set(CLAIMS) and "diminishing_returns" in entry[
        "verdicts"]
    # every interval of the demo's documents holds its estimate, with units (tests/_report_walk)
    from _report_walk import walk_report

    for name in ("report.json", "curves/report.json", "decompositions/decompositions.json"):
        result = walk_report(json.loads((folder / name).read_text()))
        assert result.checked > 10 and result.ok, (
            name, result.summary())


@pytest.mark.slow
def test_every_model_task_pair_and_one_combined_report(tmp_path, capsys):
    """Two tiny models x SST-2: two run folders and one page with the cross-model Figure 6."""
    from _tiny_models import tiny_model

    rng = np.random.default_rng(0)
    words = "the a movie film plot story was is good bad great awful not very fun boring".split()
    data = tmp_path / "data" / "glue" / "sst2"
    data.mkdir(parents=True)
    (data / "dev.tsv").write_text("sentence\tlabel\n" + "".join(
        " ".join(rng.choice(words, 6)) + f"\t{i % 2}\n" for i in range(30)))
    models = []
    for family in ("llama", "gpt2"):
        tiny_model(family, tmp_path / "models" / family)
        models.append(str(tmp_path / "models" / family))
    out = tmp_path / "runs"
    assert main(["run", "--model", *models, "--data-dir", str(tmp_path / "data"), "--out",
                 str(out), "--objective", "accuracy", "--info-method", "none", *FAST]) == 0
    for family in ("llama", "gpt2"):
        assert (out / f"{family}-sst2-n30-0shot-block" / "report.html").is_file()
    page = (out / "report.html").read_text()
    assert "All runs" in page and "Across runs: Figure 6" in page
    assert "combined report" in capsys.readouterr().out


def test_bare_clone_reads_the_bundled_sst2(monkeypatch, tmp_path):
    import hashlib

    from infodiv.data import bundled_data_dir
    from infodiv.study.data import resolve_data_dir

    monkeypatch.setenv("INFODIV_SHARED", str(tmp_path / "no-shared-here"))
    monkeypatch.delenv("INFODIV_DATA_DIR", raising=False)
    folder, label = resolve_data_dir("sst2")
    assert folder == bundled_data_dir() and "bundled" in label
    assert resolve_data_dir("rte")[0] is None     # only SST-2 and AG News's first rows are bundled
    assert resolve_data_dir("ag_news")[0] == bundled_data_dir()
    task = load_task("sst2", n=2000)
    assert len(task) == 872 and np.bincount(task.labels).tolist() == [428, 444]
    assert task.meta["source_files"] == ["glue/sst2/dev.tsv"]
    digest = hashlib.sha256((folder / "glue" / "sst2" / "dev.tsv").read_bytes()).hexdigest()
    assert digest in (folder / "README.md").read_text()    # the file its note describes


@pytest.mark.slow
def test_changed_code_or_default_reruns_the_analyses(stories_run, capsys, monkeypatch):
    """A stage key covers the code and every effective default, not only the typed options:
    a run made before a formula or a default changed is recomputed, never reused."""
    from infodiv.commands import run
    from infodiv.study import runfolder

    folder, argv = stories_run
    assert main(argv) == 0                        # settle: every stage fresh
    capsys.readouterr()
    real = runfolder.code_digest

    def patched(*packages):
        return real(*packages) + ("-changed" if "infodiv" in packages else "")

    monkeypatch.setattr(runfolder, "code_digest", patched)
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "extract: unchanged" in out            # extraction code untouched
    assert "decompose: settings or code changed" in out
    assert "curves: settings or code changed" in out
    monkeypatch.setattr(runfolder, "code_digest", real)
    assert main(argv) == 0                        # back to the real code: recomputed again
    capsys.readouterr()
    configure = run.configure

    def new_default(parser):                      # an untyped option's default changes
        configure(parser)
        parser.set_defaults(n_triples=150)

    monkeypatch.setattr(run, "configure", new_default)
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "decompose: unchanged" in out and "curves: settings or code changed" in out


def test_code_digest_follows_the_sources(tmp_path, monkeypatch):
    from infodiv.study import runfolder

    pkg = tmp_path / "digestpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("X = 1\n")
    monkeypatch.setitem(runfolder._PACKAGE_ROOTS, "digestpkg", pkg)
    first = runfolder.code_digest("digestpkg")
    runfolder.code_digest.cache_clear()
    assert runfolder.code_digest("digestpkg") == first
    (pkg / "__init__.py").write_text("X = 2\n")
    runfolder.code_digest.cache_clear()
    assert runfolder.code_digest("digestpkg") != first


@pytest.mark.slow
def test_a_damaged_stage_is_recomputed_and_says_so(stories_run, capsys):
    folder, argv = stories_run
    assert main(argv) == 0                        # settle: every stage fresh
    report = folder / "curves" / "report.json"
    good = report.read_text()
    report.write_text(good[: len(good) // 2])   # truncated
    capsys.readouterr()
    assert main(["report", str(folder)]) == 2
    assert "curves/report.json is missing or changed" in capsys.readouterr().err
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "curves: curves/report.json is missing or changed since infodiv curves wrote it; " \
           "recomputing" in out and "decompose: unchanged, skipped" in out
    assert json.loads(report.read_text())["run"]["N"] == 120


@pytest.mark.slow
def test_run_reads_a_task_file(stories_dir, tmp_path, capsys):
    rows = ["text,y"] + [f"the movie number {i} was {'good' if i % 2 else 'bad'},"
                         f"{'positive' if i % 2 else 'negative'}" for i in range(16)]
    data = tmp_path / "reviews.csv"
    data.write_text("\n".join(rows) + "\n")
    argv = ["run", "--model", str(stories_dir), "--task-file", str(data), "--template",
            "{text} Sentiment: {answer}", "--options", "negative,positive", "--label-field",
            "y", "--n", "16", "--out", str(tmp_path / "runs"), "--objective", "accuracy",
            "--n-curve-orders", "5", "--n-bootstrap", "20", "--power-replicates", "2", "--quiet"]
    assert main(argv) == 0
    folder = tmp_path / "runs" / "stories260K-reviews-n16-0shot-block"
    doc = json.loads((folder / "run.json").read_text())
    assert doc["config"]["label_field"] == "y" and doc["config"]["task"] == "reviews"
    assert "--task-file" in doc["command"] and "reviews.csv" in doc["command"]
    capsys.readouterr()
    # the same file with another template is another run
    assert main([*argv[:6], "{text} Review: {answer}", *argv[7:]]) == 2
    assert "holds a different run" in capsys.readouterr().err
