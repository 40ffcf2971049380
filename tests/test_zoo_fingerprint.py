"""Runs stored before aa08b77 (fingerprint hashed the model path strings, not only the weights'
sha256) are the same runs: extract reuses them without re-extracting (the zoo's 28 committed
runs were stored so, with an absolute --root), and keeps their stored fingerprint so the
caches keyed on it stay valid; other weights are never served from them."""

from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch")

from _tiny_models import tiny_model, torch_threads  # noqa: E402
from test_architectures import tiny_task  # noqa: E402

import extraction.forward as ex  # noqa: E402
import extraction.provenance as provenance  # noqa: E402
from extraction.models import load_model  # noqa: E402
from extraction.outdir import OutputRefused  # noqa: E402
from extraction.runner import extract  # noqa: E402


def legacy_identity(source):
    """The pre-aa08b77 definition: the whole source dict, here with absolute paths (the zoo's
    committed runs were extracted with ``--root /work/main/runs/zoo``)."""
    return {**source, **{k: os.path.abspath(source[k]) for k in ("model_id", "resolved")}}


def refuse(*a, **k):
    raise AssertionError("re-extracted a finished run")


def test_legacy_fingerprint_is_reused_and_kept(tmp_path, monkeypatch):
    with torch_threads(1):
        tiny_model("llama", tmp_path / "model")
        monkeypatch.chdir(tmp_path)
        model, tok = load_model("model", device="cpu", dtype="float32")   # relative, as the zoo
        assert not os.path.isabs(model.infodiv_source["model_id"])
        with monkeypatch.context() as mp:
            mp.setattr(provenance, "weights_identity", legacy_identity)
            old = extract(model, tok, tiny_task(), out="run", batch_size=2, progress=False)
        new_fp = extract(model, tok, tiny_task(), out=None, progress=False)   # no out: no fp
        assert new_fp.meta["fingerprint"] is None
        with monkeypatch.context() as mp:
            mp.setattr(ex.BatchRunner, "run", refuse)
            again = extract(model, tok, tiny_task(), out="run", batch_size=2, progress=False)
        assert again.meta["fingerprint"] == old.meta["fingerprint"]      # kept: caches hold
        assert (again.u == old.u).all()
        # other weights under a legacy fingerprint are not the same run: re-extracted
        changed, _ = load_model("model", device="cpu", dtype="float32")
        with torch.no_grad():
            next(changed.parameters()).add_(1e-3)
        changed.save_pretrained("other")
        tok.save_pretrained("other")
        other, _ = load_model("other", device="cpu", dtype="float32")
        with monkeypatch.context() as mp:
            mp.setattr(provenance, "weights_identity", legacy_identity)
            extract(other, tok, tiny_task(), out="run_other", batch_size=2, progress=False)
        ran = []
        real = ex.BatchRunner.run
        monkeypatch.setattr(ex.BatchRunner, "run",
                            lambda self, *a: ran.append(1) or real(self, *a))
        with pytest.raises(OutputRefused, match="holds another extraction"):   # never silently
            extract(model, tok, tiny_task(), out="run_other", batch_size=2, progress=False)
        ran.clear()
        extract(model, tok, tiny_task(), out="run_other", batch_size=2, progress=False,
                overwrite=True)
        assert ran
