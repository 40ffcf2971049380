"""The mutation check of scripts/mutations.py: each breakage of the diagnostics, selection,
report and inference-engine code makes at least one test fail (several minutes, so opt-in:
``INFODIV_SLOW=1``)."""

import os
import subprocess
import sys

import pytest
from _paths import ROOT


def test_mutation_targets_exist_in_the_code():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from mutations import MUTATIONS
    finally:
        sys.path.pop(0)
    assert len(MUTATIONS) == 13
    for _, path, old, new in MUTATIONS:
        assert (ROOT / path).read_text().count(old) == 1, (path, old)
        assert old != new


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("INFODIV_SLOW"), reason="slow: set INFODIV_SLOW=1")
def test_every_mutation_is_caught():
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "mutations.py")], cwd=ROOT,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 mutation(s) survived" in res.stdout
