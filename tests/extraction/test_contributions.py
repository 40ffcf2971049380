import json

import numpy as np
import pytest

from extraction.contributions import Contributions, Member


def _toy(n=5, m=3, c=2, seed=0):
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(n, m, c)).astype(np.float32)
    bias = np.zeros(c, np.float32)
    members = [
        Member("embed", "embed"),
        Member("L0.attn#0", "attn", 0),
        Member("L0.mlp#0", "mlp", 0),
    ]
    return Contributions(u, bias, rng.integers(0, c, n), u.sum(1) + bias,
                         np.ones((n, m), np.float32), members[:m], [" no", " yes"][:c],
                         np.arange(c), {"task": "toy"})


def test_roundtrip_and_exactness(tmp_path):
    c = _toy()
    c.save(tmp_path / "run")
    d = Contributions.load(tmp_path / "run")
    np.testing.assert_array_equal(c.u, d.u)
    assert d.members == c.members and d.meta == {"task": "toy"}
    assert d.exactness_error().max() < 1e-6
    assert list(d.kinds) == ["embed", "attn", "mlp"]


def test_a_study_run_folder_loads_from_its_contributions(tmp_path):
    c = _toy()
    c.save(tmp_path / "run" / "contributions")
    d = Contributions.load(tmp_path / "run")      # what infodiv run writes: RUN/contributions
    np.testing.assert_array_equal(c.u, d.u)
    with pytest.raises(FileNotFoundError, match="not a Contributions run directory"):
        Contributions.load(tmp_path)


def test_corrupt_arrays_detected(tmp_path):
    path = _toy().save(tmp_path / "run")
    raw = bytearray((path / "arrays.npz").read_bytes())
    raw[-40] ^= 0xFF
    (path / "arrays.npz").write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="corrupt"):
        Contributions.load(path)


def test_overwrite_is_atomic(tmp_path):
    path = _toy(seed=0).save(tmp_path / "run")
    _toy(seed=1).save(path)
    assert json.loads((path / "meta.json").read_text())["shape"]["N"] == 5
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_bad_labels_rejected():
    c = _toy()
    with pytest.raises(ValueError, match="labels must lie"):
        Contributions(c.u, c.bias, np.full(5, 7), c.logits, c.scale, c.members, c.options)


def test_readout_of_subsets_including_the_empty_set():
    c = _toy()
    np.testing.assert_allclose(c.readout([0, 2]), c.u[:, [0, 2]].astype(np.float64).sum(1))
    np.testing.assert_array_equal(c.readout([True, False, True]), c.readout([0, 2]))
    # the empty set is the constant member alone (an empty index list is not a float array)
    np.testing.assert_array_equal(c.readout([]), c.bias_for_examples())
