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

On the same graph the layers of DESIGN.md section 1 are checked, each module's layer read from
its path (:func:`layer`): ``estimators`` < ``extraction`` < core (the top-level ``infodiv``
modules, ``setfunctions``, ``data``) < inference (``inference``, ``claims``: statistics only)
< ``reports`` < ``study`` < commands (``commands``, ``cli``) < experiments (``experiments``;
a package named ``zoo`` counts as the experiments too). Every import points to the importer's
layer or one below (:func:`upward_edges`); the one exception is the command that runs the
experiments (:data:`MAY_IMPORT_EXPERIMENTS`). The experiments sit above the library and import
no command (:func:`experiment_command_edges`), and no module of ``infodiv`` hides an import
from the graph behind ``importlib.import_module`` (:func:`dynamic_imports`; the CLI's lazy
command table is the exception).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from _paths import ROOT

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
                                    "infodiv.study.curves", "infodiv.study"])
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


#: the layers of the three packages, lowest first (module docstring)
LAYERS = ("estimators", "extraction", "core", "inference", "reports", "study", "commands",
          "experiments")
#: the layer of each sub-package (or module) of ``infodiv``; the others are core
SUBPACKAGE_LAYERS = {"inference": "inference", "claims": "inference", "reports": "reports",
                     "study": "study", "commands": "commands", "cli": "commands",
                     "experiments": "experiments", "zoo": "experiments"}
#: library modules that may import the experiments: the command that runs them
MAY_IMPORT_EXPERIMENTS = {"infodiv.commands.zoo", "infodiv.commands.zoo_depth", "infodiv.cli"}
#: library modules that may import a module by a computed name: the CLI's lazy command table
MAY_IMPORT_DYNAMICALLY = {"infodiv.cli"}


def layer(module: str) -> str:
    """The layer of a dotted module name, read from its path (module docstring)."""
    top, _, rest = module.partition(".")
    if top != "infodiv":
        return top
    return SUBPACKAGE_LAYERS.get(rest.partition(".")[0], "core")


def upward_edges(graph: dict) -> list[str]:
    """``"a (layer) -> b (layer)"`` for every import of ``graph`` into a higher layer (the
    allowed imports of the experiments aside)."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    return [f"{a} ({layer(a)}) -> {b} ({layer(b)})"
            for a in sorted(graph) for b in sorted(graph[a])
            if rank[layer(b)] > rank[layer(a)]
            and not (a in MAY_IMPORT_EXPERIMENTS and layer(b) == "experiments")]


def experiment_command_edges(graph: dict) -> list[str]:
    """``"a -> b"`` for every import of an experiments module into the commands."""
    return [f"{a} -> {b}" for a in sorted(graph) for b in sorted(graph[a])
            if layer(a) == "experiments" and layer(b) == "commands"]


def dynamic_imports(root: Path, packages) -> list[str]:
    """``"module:line"`` of every ``importlib.import_module(...)`` or ``__import__(...)`` call in
    a module of ``infodiv`` (:data:`MAY_IMPORT_DYNAMICALLY` aside): a module imported by name
    escapes the layer check when the name is computed."""
    out = []
    for module, (path, _) in sorted(module_files(root, packages).items()):
        if not module.startswith("infodiv") or module in MAY_IMPORT_DYNAMICALLY:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and (
                    getattr(node.func, "attr", None) == "import_module"
                    or getattr(node.func, "id", None) in ("import_module", "__import__")):
                out.append(f"{module}:{node.lineno}")
    return out


def test_every_import_points_down_the_layers():
    graph = import_graph(ROOT, PACKAGES)
    assert {layer(m) for m in graph} >= set(LAYERS) - {"study", "experiments"}
    bad = upward_edges(graph)
    assert not bad, f"{len(bad)} import(s) into a higher layer:\n" + "\n".join(bad)


def test_the_experiments_import_no_command():
    graph = import_graph(ROOT, PACKAGES)
    bad = experiment_command_edges(graph)
    assert not bad, "experiments importing commands:\n" + "\n".join(bad)


def test_no_module_imports_by_a_computed_name():
    bad = dynamic_imports(ROOT, PACKAGES)
    assert not bad, "importlib.import_module / __import__ in infodiv: " + ", ".join(bad)


def test_the_layer_rule_names_every_edge_that_points_up(tmp_path):
    """A tree with one import up from each of three layers (a function-level relative one, an
    ``import_module`` with a literal name among them) and allowed imports down: exactly the
    three are named; the experiments' import of a command and the dynamic import are found."""
    files = {
        "estimators/__init__.py": "",
        "estimators/core.py": "import infodiv.junctions\n",               # base -> core
        "extraction/__init__.py": "from estimators import core\n",         # down: allowed
        "infodiv/__init__.py": "",
        "infodiv/junctions.py": "def f():\n    from .inference import bootstrap\n",
        "infodiv/inference/__init__.py": "",
        "infodiv/inference/bootstrap.py": "from ..junctions import f\n",   # down: allowed
        "infodiv/reports/__init__.py": "",
        "infodiv/reports/canvas.py": ("import importlib\n\n"
                                      "R = importlib.import_module('infodiv.commands.run')\n"),
        "infodiv/commands/__init__.py": "",
        "infodiv/commands/run.py": "from ..reports import canvas\n",       # down: allowed
        "infodiv/commands/zoo.py": "from infodiv.experiments import train\n",   # allowed
        "infodiv/experiments/__init__.py": "",
        "infodiv/experiments/train.py": "from infodiv.commands import run\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = import_graph(tmp_path, PACKAGES)
    assert upward_edges(graph) == [
        "estimators.core (estimators) -> infodiv.junctions (core)",
        "infodiv.junctions (core) -> infodiv.inference.bootstrap (inference)",
        "infodiv.reports.canvas (reports) -> infodiv.commands.run (commands)"]
    assert experiment_command_edges(graph) == ["infodiv.experiments.train -> infodiv.commands.run"]
    assert dynamic_imports(tmp_path, PACKAGES) == ["infodiv.reports.canvas:3"]
    assert layer("infodiv.zoo.train") == layer("infodiv.experiments.train") == "experiments"
    assert layer("infodiv.setfunctions.base") == layer("infodiv") == "core"


#: the largest module the three packages allow (DESIGN: small modules, under ~400 lines)
MAX_MODULE_LINES = 400


def test_every_module_of_the_three_packages_is_small():
    sizes = {name: len(path.read_text().splitlines())
             for name, (path, _) in module_files(ROOT, PACKAGES).items()}
    assert len(sizes) > 100
    over = {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES}
    assert not over, f"{len(over)} module(s) over {MAX_MODULE_LINES} lines: {over}"
