"""Examples from a row range of the split (``start``) and fixed demonstrations drawn among
chosen rows (``demo_start``): held-out rows for choosing a prompt setting, with the same
demonstrations in front of the held-out and the analysed rows."""

from __future__ import annotations

import pytest
from _cli_checks import one_line_error

from extraction.tasks import get_task


def test_start_takes_the_rows_after_it(shared_data_dir):
    full = get_task("ag_news", data_dir=shared_data_dir, n=None)
    part = get_task("ag_news", data_dir=shared_data_dir, n=30, start=2000)
    assert len(part) == 30 and part.meta["start"] == 2000
    assert part.records == full.records[2000:2030]
    assert list(part.labels) == list(full.labels[2000:2030])
    tail = get_task("ag_news", data_dir=shared_data_dir, n=None, start=len(full) - 5)
    assert tail.records == full.records[-5:]
    assert "start" not in get_task("ag_news", data_dir=shared_data_dir, n=30).meta


def test_fixed_demos_from_demo_start_are_shared_and_no_example(shared_data_dir):
    full = get_task("ag_news", data_dir=shared_data_dir, n=None)
    held = get_task("ag_news", data_dir=shared_data_dir, n=40, start=2000, shots=4,
                    fixed_demos=True, demo_start=2400)
    main = get_task("ag_news", data_dir=shared_data_dir, n=100, shots=4, fixed_demos=True,
                    demo_start=2400)
    assert held.demonstrations[0] == main.demonstrations[0] == held.demonstrations[39]
    assert held.meta["demo_rows"] == [2400, len(full)]
    allowed = {full.demonstration(j) + "\n\n" for j in range(2400, len(full))}
    demos = held.demo_items[0]
    assert len(demos) == 4 and set(demos) <= allowed
    assert all(held.prompt(i).endswith(get_task("ag_news", data_dir=shared_data_dir, n=40,
                                                start=2000).prompt(i)) for i in (0, 39))
    # without demo_start the draw is the one the first n rows always had (rows n..)
    before = get_task("ag_news", data_dir=shared_data_dir, n=100, shots=4, fixed_demos=True)
    assert "demo_rows" not in before.meta
    assert set(before.demo_items[0]) <= {full.demonstration(j) + "\n\n"
                                         for j in range(100, len(full))}


@pytest.mark.parametrize("kwargs, needle", [
    ({"start": -1}, "start must be a non-negative integer, got -1"),
    ({"start": 7600}, "start=7600 but the ag_news split holds only 7600 rows"),
    ({"demo_start": 2400}, "demo_start=2400 needs fixed demonstrations"),
    ({"shots": 4, "fixed_demos": True, "n": 400, "start": 2000, "demo_start": 2399},
     "demo_start=2399 is below the end of the examples (rows 2000..2399)"),
    ({"shots": 4, "fixed_demos": True, "demo_start": 7600}, "among rows 7600.. but"),
    ({"shots": 2, "start": 10}, "start=10 with per-example demonstrations"),
])
def test_bad_rows_name_the_argument_and_number(shared_data_dir, kwargs, needle):
    with pytest.raises(ValueError) as info:
        get_task("ag_news", data_dir=shared_data_dir, **kwargs)
    assert needle in str(info.value)


def test_cli_bad_rows_one_line_exit_2(shared_data_dir, stories_dir, tmp_path, capsys):
    base = ["extract", "--model", str(stories_dir), "--task", "ag_news", "--data-dir",
            str(shared_data_dir), "--out", str(tmp_path / "run")]
    one_line_error(capsys, base + ["--start", "2000", "--n", "400", "--shots", "4",
                                   "--fixed-demos", "--demo-start", "100"],
                   "demo_start=100 is below the end of the examples (rows 2000..2399)")
    one_line_error(capsys, base + ["--start", "9999"], "start=9999", "7600 rows")
    one_line_error(capsys, ["extract", "--model", str(stories_dir), "--task-file",
                            str(tmp_path / "x.csv"), "--template", "{a} {answer}", "--options",
                            "p,q", "--label-field", "y", "--start", "3"],
                   "--start 3 needs --task")
    assert not (tmp_path / "run").exists()
