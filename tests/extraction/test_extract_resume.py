"""Resume after a hard kill, and corrupt-shard detection (extraction.shards)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest
from _paths import ROOT
from _tiny_models import tiny_model
from _tiny_tasks import assert_same_run, word_records

from extraction.contributions import Contributions
from extraction.shards import ShardStore, partial_dir

SCRIPT = textwrap.dedent("""
    import json, sys, time, warnings
    import numpy as np, torch
    torch.set_num_threads(1)
    import extraction.shards as shards
    from transformers import PreTrainedTokenizerFast
    from extraction.models import load_model
    from extraction.runner import extract
    from extraction.tasks import Task

    folder, out, sleep = sys.argv[1], sys.argv[2], float(sys.argv[3])
    model, _ = load_model(folder, device="cpu", dtype="float32")
    tok = PreTrainedTokenizerFast.from_pretrained(folder)
    records = json.loads(open(folder + "/records.json").read())
    task = Task.from_records(records, template="{text} Question: Was that sentence positive or "
                             "negative? Answer:", options=["negative", "positive"], label="label")
    if sleep:   # slow the run down so the test can kill it between shards
        model.model.register_forward_pre_hook(lambda *a, **k: time.sleep(sleep))
    reused = []
    load = shards.ShardStore.load
    def counting_load(self, i):
        arrays = load(self, i)
        if arrays is not None:
            reused.append(i)
        return arrays
    shards.ShardStore.load = counting_load
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        extract(model, tok, task, batch_size=2, out=out, shard_size=4, progress=False)
    print(json.dumps({"reused": reused,
                      "warnings": [str(w.message) for w in caught if "shard" in str(w.message)]}))
""")


def _run(script, folder, out, sleep=0.0):
    env = dict(os.environ, PYTHONPATH=str(ROOT), TOKENIZERS_PARALLELISM="false")
    return subprocess.Popen([sys.executable, str(script), str(folder), str(out), str(sleep)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _finish(proc) -> dict:
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr[-3000:]
    return json.loads(stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def killed_run(tmp_path_factory):
    """A subprocess extraction killed with SIGKILL right after its first shard appeared."""
    tmp = tmp_path_factory.mktemp("resume")
    folder = tmp / "model"
    tiny_model("llama", folder)
    (folder / "records.json").write_text(json.dumps(word_records()))
    script = tmp / "run_extract.py"
    script.write_text(SCRIPT)
    out = tmp / "run"
    proc = _run(script, folder, out, sleep=0.25)
    first = partial_dir(out) / "shard-00000.json"
    deadline = time.time() + 240
    while not first.exists():
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.time() < deadline, "no shard appeared"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    present = sorted(p.name for p in partial_dir(out).glob("shard-*.json"))
    return tmp, folder, script, out, present


@pytest.mark.slow
def test_kill_leaves_nothing_that_looks_valid(killed_run):
    tmp, folder, script, out, present = killed_run
    assert 1 <= len(present) < 10      # 40 examples / 4 per shard = 10 shards
    assert not out.exists()
    with pytest.raises(FileNotFoundError):
        Contributions.load(out)


@pytest.mark.slow
def test_resume_is_bit_identical_and_corrupt_shards_are_recomputed(killed_run):
    import torch

    tmp, folder, script, out, present = killed_run
    # a second interrupted state with its first shard truncated
    out_b = tmp / "run_b"
    shutil.copytree(partial_dir(out), partial_dir(out_b))
    npz = partial_dir(out_b) / "shard-00000.npz"
    npz.write_bytes(npz.read_bytes()[: npz.stat().st_size // 2])

    proc_a, proc_b = _run(script, folder, out), _run(script, folder, out_b)
    rep_a, rep_b = _finish(proc_a), _finish(proc_b)
    n_done = len(present)
    assert rep_a["reused"] == list(range(n_done)) and not rep_a["warnings"]
    assert rep_b["reused"] == list(range(1, n_done))
    assert any("shard-00000.npz is corrupt" in w for w in rep_b["warnings"])

    # uninterrupted reference, same thread count as the script
    from transformers import PreTrainedTokenizerFast

    from extraction.models import load_model
    from extraction.runner import extract
    from extraction.tasks import Task

    model, _ = load_model(folder, device="cpu", dtype="float32")
    tok = PreTrainedTokenizerFast.from_pretrained(folder)
    task = Task.from_records(word_records(), template="{text} Question: Was that sentence positive "
                             "or negative? Answer:", options=["negative", "positive"],
                             label="label")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        ref = extract(model, tok, task, batch_size=2, shard_size=4, progress=False)
    finally:
        torch.set_num_threads(threads)
    for o in (out, out_b):
        got = Contributions.load(o)
        assert_same_run(got, ref)
        assert not partial_dir(o).exists()
        assert got.meta["exactness_ok"]


def test_shard_store_detects_truncation_and_bit_flips(tmp_path):
    out = tmp_path / "run"
    store = ShardStore(out, "fp1")
    arrays = {"index": np.arange(3), "u": np.ones((3, 5, 2), np.float32)}
    store.save(0, arrays)
    store.save(1, arrays)
    np.testing.assert_array_equal(store.load(0)["u"], arrays["u"])
    p0, p1 = store.dir / "shard-00000.npz", store.dir / "shard-00001.npz"
    data = bytearray(p0.read_bytes())
    data[len(data) // 2] ^= 0xFF
    p0.write_bytes(bytes(data))
    p1.write_bytes(p1.read_bytes()[:20])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert store.load(0) is None and store.load(1) is None
    assert sum("corrupt" in str(w.message) for w in caught) == 2
    assert not p0.exists() and not p1.exists()
    # a different configuration never reuses shards
    store.save(2, arrays)
    with pytest.warns(UserWarning, match="different model"):
        other = ShardStore(out, "fp2")
    assert other.load(2) is None
    assert ShardStore(out, "fp2", resume=False).load(2) is None


def test_a_run_or_shards_under_another_fingerprint_are_extracted_again(tmp_path, monkeypatch):
    """A finished run, or shards, stored under a fingerprint this configuration does not have
    (here: the same weights and settings hashed under another definition of the weights'
    identity) are never reused: the run is extracted again and stored under its fingerprint."""
    import extraction.forward as ex
    import extraction.provenance as provenance
    from extraction.models import load_model
    from extraction.runner import extract
    from extraction.tasks import Task

    folder = tmp_path / "model"
    tiny_model("llama", folder)
    model, tok = load_model(str(folder), device="cpu", dtype="float32")
    task = Task.from_records(word_records(8), template="{text} Answer:",
                             options=["negative", "positive"], label="label")
    out = tmp_path / "run"

    def by_path(source):    # another definition: the whole source dict, paths included
        return dict(source)

    with monkeypatch.context() as mp:
        mp.setattr(provenance, "weights_identity", by_path)
        old = extract(model, tok, task, out=out, batch_size=2, shard_size=4, progress=False)
    ran = []
    real = ex.BatchRunner.run
    monkeypatch.setattr(ex.BatchRunner, "run", lambda self, *a: ran.append(1) or real(self, *a))
    new = extract(model, tok, task, out=out, batch_size=2, shard_size=4, progress=False)
    assert ran and new.meta["fingerprint"] != old.meta["fingerprint"]
    assert_same_run(new, old)
    assert Contributions.load(out).meta["fingerprint"] == new.meta["fingerprint"]
    # interrupted shards of the other definition are discarded, not read
    with monkeypatch.context() as mp:
        mp.setattr(provenance, "weights_identity", by_path)
        assert extract(model, tok, task, out=tmp_path / "part", batch_size=2, shard_size=4,
                       progress=False, only_shards=[0, 1]) is None
    assert len(list(partial_dir(tmp_path / "part").glob("shard-*.npz"))) == 2
    loaded, load = [], ShardStore.load

    def counting_load(self, i):
        arrays = load(self, i)
        if arrays is not None:
            loaded.append(i)
        return arrays

    monkeypatch.setattr(ShardStore, "load", counting_load)
    ran.clear()
    with pytest.warns(UserWarning, match="discarding shards"):
        again = extract(model, tok, task, out=tmp_path / "part", batch_size=2, shard_size=4,
                        progress=False)
    assert loaded == [] and len(ran) == 4     # every batch computed afresh
    assert not partial_dir(tmp_path / "part").exists()
    assert_same_run(again, new)
