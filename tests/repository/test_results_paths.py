"""The committed results name no path of the machine that made them (they are read on others)."""

import re

from _paths import ROOT

DOCS = ROOT / "docs"
ABSOLUTE = re.compile(r"(?<![\w.])/(work|tmp|root|home)/")


def test_committed_results_hold_no_absolute_paths():
    hits = []
    for path in sorted(DOCS.rglob("*")):
        if path.suffix in {".json", ".md", ".csv", ".html", ".txt", ".graphml"} and path.is_file():
            for i, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if ABSOLUTE.search(line):
                    hits.append(f"{path.relative_to(DOCS.parent)}:{i}")
    assert not hits, f"{len(hits)} lines with an absolute path, first: {hits[:5]}"
