"""No import cycles in speechkit, and its layers: every import counts, at module level, deferred
inside a function or under ``if TYPE_CHECKING:`` (a type is a dependency too); relative imports
are resolved, and ``from pkg import name`` counts as importing the submodule ``pkg.name`` where
there is one. The core imports no plug-in and no framework module, and the plug-ins import no
framework module (docs/architecture.md, "The layout")."""
from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _module_names(root: Path, package: str) -> dict[str, Path]:
    """Dotted module name -> source file, for every module of ``package`` under ``root``."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of ``tree``, at any depth (``if TYPE_CHECKING:`` bodies included)."""
    return [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, modules: dict) -> set[str]:
    """The modules of ``modules`` that ``node`` (in ``module``) imports."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            parts = module.split(".") if is_package else module.split(".")[:-1]
            parts = parts[:len(parts) - (node.level - 1)]
            base = ".".join(parts + ([node.module] if node.module else []))
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
    out = set()
    for name in names:
        while name and name not in modules:  # `import pkg.mod.Class` style names: the module holding it
            name = name.rpartition(".")[0]
        if name:
            out.add(name)
    return out


Graph = dict[str, dict[str, list[int]]]  # module -> imported module -> the lines importing it


def import_graph(root: Path, package: str) -> Graph:
    """The imports between the modules of ``package`` (a folder under ``root``)."""
    modules = _module_names(root, package)
    graph: Graph = {module: {} for module in modules}
    for module, path in modules.items():
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            for target in _targets(node, module, path.name == "__init__.py", modules):
                if target != module:
                    graph[module].setdefault(target, []).append(node.lineno)
    return graph


def _shortest_cycle(graph: Graph, start: str) -> list[str]:
    """The modules of a shortest import path from ``start`` back to ``start`` (breadth first)."""
    parent: dict[str, str] = {}
    todo = deque([start])
    while todo:
        module = todo.popleft()
        for target in sorted(graph[module]):
            if target == start:
                path = [module]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return path[::-1]
            if target not in parent:
                parent[target] = module
                todo.append(target)
    return []


def import_cycles(root: Path, package: str) -> list[str]:
    """One line per group of modules that import each other (directly or through others): a
    shortest cycle through its first module, with the lines of each import."""
    graph = import_graph(root, package)
    reach = {module: _reaches(graph, module) for module in graph}
    out, done = [], set()
    for module in sorted(graph):
        if module in done or module not in reach[module]:
            continue
        done |= {m for m in reach[module] if module in reach[m]}
        cycle = _shortest_cycle(graph, module)
        steps = zip(cycle, cycle[1:] + cycle[:1])
        out.append(" -> ".join([*cycle, module]) + "  (" + "; ".join(
            f"{a} imports {b} at line {', '.join(map(str, sorted(graph[a][b])))}" for a, b in steps) + ")")
    return out


def _reaches(graph: Graph, start: str) -> set[str]:
    """The modules ``start`` imports, directly or through others."""
    seen, todo = set(), [start]
    while todo:
        for target in graph[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_speechkit_has_no_import_cycles():
    cycles = import_cycles(REPO, "speechkit")
    assert not cycles, "import cycles in speechkit:\n" + "\n".join(cycles)


#: The layers (docs/architecture.md, "The layout"): the plug-in packages, and the framework modules
#: that run them; every other module is the core or its data layer.
PLUG_INS = ("speechkit.stages", "speechkit.steps", "speechkit.corpora", "speechkit.synth")
FRAMEWORK = ("speechkit.__main__", "speechkit.cascade", "speechkit.runner", "speechkit.lifecycle", "speechkit.postrun",
             "speechkit.recipe", "speechkit.context", "speechkit.scoring", "speechkit.report", "speechkit.compare",
             "speechkit.executors", "speechkit.cli", "speechkit.doctor", "speechkit.preflight", "speechkit.serve",
             "speechkit.system_inputs")


def _in(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def layer_breaches(graph: Graph) -> list[str]:
    """Each import that crosses the layers the wrong way: the core (and data) importing a plug-in or
    the framework, a plug-in importing the framework. ``speechkit`` itself (the public API) may
    import anything."""
    out = []
    for module, targets in sorted(graph.items()):
        if module == "speechkit" or _in(module, FRAMEWORK):
            continue
        forbidden = FRAMEWORK if _in(module, PLUG_INS) else (*PLUG_INS, *FRAMEWORK)
        out += [f"{module} imports {target} at line {', '.join(map(str, sorted(lines)))}"
                for target, lines in sorted(targets.items()) if _in(target, forbidden)]
    return out


def test_the_core_imports_no_plug_in_and_the_plug_ins_no_framework():
    breaches = layer_breaches(import_graph(REPO, "speechkit"))
    assert not breaches, "imports across the layers:\n" + "\n".join(breaches)
    # the check sees each wrong way: core -> plug-in, data -> framework, plug-in -> framework; not the right ones
    assert layer_breaches({"speechkit.core.stage": {"speechkit.stages.vad": [3]},
                           "speechkit.io.run_view": {"speechkit.report": [9]},
                           "speechkit.stages.asr": {"speechkit.runner": [1], "speechkit.core.stage": [2]},
                           "speechkit.runner": {"speechkit.stages": [2]}}) == [
        "speechkit.core.stage imports speechkit.stages.vad at line 3",
        "speechkit.io.run_view imports speechkit.report at line 9",
        "speechkit.stages.asr imports speechkit.runner at line 1"]


def test_the_check_finds_deferred_relative_and_submodule_cycles(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from . import leaf\n")
    (pkg / "sub" / "leaf.py").write_text("def f():\n    from ..top import g\n")  # deferred, relative
    (pkg / "top.py").write_text("from pkg.sub import leaf\n")  # from a package, a submodule
    (pkg / "typed.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.other\n")
    (pkg / "other.py").write_text("import pkg.typed\n")
    typed, cycle = import_cycles(tmp_path, "pkg")  # a TYPE_CHECKING import closes a circle too
    assert typed.startswith("pkg.other -> pkg.typed -> pkg.other ")
    assert cycle.startswith("pkg.sub.leaf -> pkg.top -> pkg.sub.leaf ")
    assert "pkg.sub.leaf imports pkg.top at line 2" in cycle
    graph = import_graph(tmp_path, "pkg")
    assert "pkg.sub.leaf" in graph["pkg.sub"] and "pkg.typed" in graph["pkg.other"]
    assert "pkg.other" in graph["pkg.typed"]  # under TYPE_CHECKING: counted
    (pkg / "typed.py").write_text("import pkg.other\n")
    assert len(import_cycles(tmp_path, "pkg")) == 2


#: The rule-based components developed on the ``tuned`` phrasing families (docs/synth.md): they
#: must not read the generator's templates, so they reach no module of ``speechkit.synth``.
RULE_BASED = ("speechkit.stages.summarize.extractive", "speechkit.steps.qa.extractive")


def test_the_rule_based_backends_import_nothing_from_the_generator():
    graph = import_graph(REPO, "speechkit")
    for module in RULE_BASED:
        reached = _reaches(graph, module)
        assert "speechkit.text_similarity" in reached  # the check sees their imports, through others too
        assert not {m for m in reached if _in(m, ("speechkit.synth",))}, module
    graph["speechkit.text_similarity"]["speechkit.synth.pools"] = [1]  # an indirect import is caught
    assert any(_in(m, ("speechkit.synth",)) for m in _reaches(graph, RULE_BASED[0]))
