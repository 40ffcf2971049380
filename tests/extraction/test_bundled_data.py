"""The bundled task data is what ``infodiv/data/README.md`` says it is."""

from __future__ import annotations

import csv
import hashlib
import re

import pytest
from _paths import ROOT

from infodiv.data import bundled_data_dir

DATA = bundled_data_dir()
README = (DATA / "README.md").read_text(encoding="utf-8")
SHARED = ROOT.parent / "shared" / "data"


@pytest.mark.parametrize("rel", ["glue/sst2/dev.tsv", "ag_news/test.csv"])
def test_bundled_file_matches_its_stated_sha256_and_size(rel):
    blob = (DATA / rel).read_bytes()
    section = README[README.index(f"`{rel}`"):]
    digest = re.search(r"sha256 `([0-9a-f]{64})` \(([\d ]+) bytes\)", section)
    assert digest, f"README states no sha256 for {rel}"
    assert hashlib.sha256(blob).hexdigest() == digest.group(1)
    assert len(blob) == int(digest.group(2).replace(" ", ""))


def test_ag_news_is_the_papers_first_2000_rows_with_the_stated_classes():
    with open(DATA / "ag_news" / "test.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert len(rows) == 2000 and all(len(r) == 3 for r in rows)
    counts = [sum(r[0] == str(k) for r in rows) for k in (1, 2, 3, 4)]
    stated = re.search(r"(\d+) World, (\d+) Sports, (\d+) Business, (\d+) Sci/Tech", README)
    assert counts == [int(x) for x in stated.groups()]


def test_ag_news_loads_as_the_task_and_equals_the_shared_rows():
    from extraction import get_task

    task = get_task("ag_news", data_dir=DATA, n=None)
    assert len(task.records) == 2000 and task.options == ["World", "Sports", "Business",
                                                           "Science"]
    shared = SHARED / "ag_news" / "test.csv"
    if not shared.is_file():
        pytest.skip(f"{shared} absent: the comparison with the full split needs ../shared")
    full = get_task("ag_news", data_dir=SHARED, n=2000)
    assert task.records == full.records and (task.labels == full.labels).all()
