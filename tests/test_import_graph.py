"""No import cycle among the modules of ``infodiv``, ``extraction`` and ``estimators``.

The graph is read from the source with :mod:`ast`, so it sees every import wherever it sits:
module level, inside functions, under ``if TYPE_CHECKING``, and ``importlib.import_module``
calls with a literal name. Relative imports are resolved against the importing module's
package, and ``from pkg import name`` is an edge to the submodule ``pkg.name`` when that is a
module (else to ``pkg`` itself). Importing ``a.b.c`` is an edge to ``a.b.c`` only: the parent
packages' ``__init__`` run first in Python, but every submodule would then sit on a cycle with
a package that re-exports it, so those implicit edges are not counted; instead
:func:`test_analysis_entry_points_import_in_a_fresh_interpreter` imports the analysis layer's
packages first thing in a new interpreter, which fails on a circular import through an
``__init__``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("infodiv", "extraction", "estimators")


def module_files(root: Path, packages) -> dict:
    """``{dotted module name: (path, is_package)}`` of every ``.py`` file under ``packages``."""
    out = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def _known(name: str, modules) -> str | None:
    """The longest prefix of ``name`` that is one of ``modules`` (None: outside them)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, modules) -> set:
    path, is_pkg = modules[module]
    package = module if is_pkg else module.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(_known(a.name, modules) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1]
                                + ([node.module] if node.module else []))
            else:
                base = node.module
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.add(sub if sub in modules else _known(base, modules))
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            out.add(_known(node.args[0].value, modules))
    out.discard(None)
    out.discard(module)
    return out


def import_graph(root: Path, packages) -> dict:
    """``{module: set of modules it imports}`` (module docstring)."""
    modules = module_files(root, packages)
    return {m: _imports(m, modules) for m in modules}


def find_cycle(graph: dict) -> list | None:
    """One cycle ``[a, b, ..., a]`` of ``graph``, or None (iterative depth-first search)."""
    state = dict.fromkeys(graph, 0)   # 0 new, 1 on the stack, 2 done
    for start in sorted(graph):
        if state[start]:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            nxt = next(children, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt, 2) == 1:
                path = [n for n, _ in stack]
                return path[path.index(nxt):] + [nxt]
            elif state.get(nxt, 2) == 0:
                state[nxt] = 1
                stack.append((nxt, iter(sorted(graph[nxt]))))
    return None


def test_no_import_cycle_in_the_three_packages():
    graph = import_graph(ROOT, PACKAGES)
    assert len(graph) > 100   # the packages were found
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


@pytest.mark.parametrize("module", ["infodiv.claims", "infodiv.inference",
                                    "infodiv.inference.engine", "infodiv.submodularity",
                                    "infodiv.reports.curves"])
def test_analysis_entry_points_import_in_a_fresh_interpreter(module):
    res = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=ROOT,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]


def test_the_graph_sees_function_level_relative_and_submodule_imports(tmp_path):
    """A cycle closed only by a function-level ``from . import b`` (b a submodule) is found,
    and one through ``importlib.import_module``; a parent-package edge is not a cycle."""
    pkg = tmp_path / "p"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import f\n")
    (pkg / "a.py").write_text("from .sub.c import g\n\ndef f():\n    return g()\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text("def g():\n    from .. import b\n    return b\n")
    (pkg / "b.py").write_text("X = 1\n")
    graph = import_graph(tmp_path, ["p"])
    assert graph["p.sub.c"] == {"p.b"} and graph["p.a"] == {"p.sub.c"}
    assert find_cycle(graph) is None
    (pkg / "b.py").write_text("def h():\n    from p.a import f\n    return f\n")
    assert find_cycle(import_graph(tmp_path, ["p"])) == ["p.a", "p.sub.c", "p.b", "p.a"]
    (pkg / "b.py").write_text("import importlib\n\nA = importlib.import_module('p.a')\n")
    assert find_cycle(import_graph(tmp_path, ["p"])) == ["p.a", "p.sub.c", "p.b", "p.a"]


#: the largest module the three packages allow (DESIGN: small modules, under ~400 lines)
MAX_MODULE_LINES = 400


def test_every_module_of_the_three_packages_is_small():
    sizes = {name: len(path.read_text().splitlines())
             for name, (path, _) in module_files(ROOT, PACKAGES).items()}
    assert len(sizes) > 100
    over = {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES}
    assert not over, f"{len(over)} module(s) over {MAX_MODULE_LINES} lines: {over}"
