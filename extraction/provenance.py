"""Where an extraction comes from: the fingerprint of its configuration, the identity of the
weights in it, the finished run it matches, and the library versions it records.

A run directory stores the fingerprint it was made with (``meta["fingerprint"]``); a rerun
with the same configuration finds it (:func:`completed_run`) and returns it instead of
extracting again. The weights enter the fingerprint by their sha256 when known
(:func:`weights_identity`), so the same checkpoint read from another path is the same run.
"""

from __future__ import annotations

import hashlib
import json
import platform

import numpy as np

from .contributions import Contributions

__all__ = ["fingerprint", "run_fingerprint", "weights_identity", "completed_run", "versions"]


def fingerprint(parts: dict) -> str:
    """sha256 of ``parts`` as sorted JSON (values that JSON cannot hold as their ``str``)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def run_fingerprint(parts: dict, source: dict) -> str:
    """The fingerprint of an extraction: its configuration ``parts`` with the weights'
    identity (:func:`weights_identity` of the model ``source``)."""
    return fingerprint({**parts, "source": weights_identity(source)})


def weights_identity(source: dict) -> dict:
    """What identifies the weights in a fingerprint: their sha256 (and revision) when known, so
    the same checkpoint read from another path or through a symlink is the same run; the path
    strings only when no hash could be taken (a hub id without local files)."""
    if source.get("weights_sha256"):
        return {"weights_sha256": source["weights_sha256"], "revision": source.get("revision")}
    return dict(source)


def completed_run(out, expected: str) -> Contributions | None:
    """The finished run at ``out`` when it was made with the same configuration: its stored
    fingerprint is ``expected``. A run stored under any other fingerprint (another
    configuration, other weights, or a fingerprint defined differently) is not reused; None
    also when ``out`` holds no readable run."""
    try:
        done = Contributions.load(out)
    except (FileNotFoundError, ValueError, KeyError, OSError):
        return None
    stored = done.meta.get("fingerprint")
    return done if stored == expected else None


def versions() -> dict:
    """The versions of Python, numpy, torch, transformers and this distribution."""
    from importlib import metadata

    import torch
    import transformers

    try:  # the distribution's version; extraction never imports the infodiv package
        dist_version = metadata.version("infodiv")
    except metadata.PackageNotFoundError:
        dist_version = "unknown"
    return {"python": platform.python_version(), "numpy": np.__version__,
            "torch": torch.__version__, "transformers": transformers.__version__,
            "infodiv": dist_version}
