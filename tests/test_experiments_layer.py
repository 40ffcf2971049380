"""The experiments sit above the library (docs/design.md, Controlled experiments).

``infodiv.experiments`` may import the library, ``extraction`` and ``estimators``; nothing in
the library imports it except its command, ``infodiv.commands.zoo``; it imports no command
module and not the CLI, and loads nothing through ``importlib``. The graph is the one
:mod:`tests.test_import_graph` reads from the source (function-level imports included).
"""

from __future__ import annotations

from tests.test_import_graph import PACKAGES, ROOT, import_graph

EXPERIMENTS = "infodiv.experiments"
#: the one library module that may import the experiments: their command line
COMMAND = "infodiv.commands.zoo"


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_nothing_in_the_library_imports_the_experiments():
    graph = import_graph(ROOT, PACKAGES)
    assert any(_inside(m, EXPERIMENTS) for m in graph)   # the package was found
    up = sorted((m, t) for m, targets in graph.items() for t in targets
                if _inside(t, EXPERIMENTS) and not _inside(m, EXPERIMENTS) and m != COMMAND)
    assert not up, f"library modules importing the experiments: {up}"


def test_the_experiments_import_no_command_and_no_importlib():
    graph = import_graph(ROOT, PACKAGES)
    down = sorted((m, t) for m, targets in graph.items() if _inside(m, EXPERIMENTS)
                  for t in targets if _inside(t, "infodiv.commands") or t == "infodiv.cli")
    assert not down, f"experiments importing the command line: {down}"
    users = sorted(p.name for p in (ROOT / "infodiv" / "experiments").glob("*.py")
                   if "importlib" in p.read_text())
    assert not users, f"experiments loading modules through importlib: {users}"
