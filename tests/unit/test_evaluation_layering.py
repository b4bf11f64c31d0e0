"""The evaluation package imports one way: no module of it reaches back to one that imports it.

Every import counts, including those inside functions (issue 17: the harness / report / plots /
tables cycle used to work only because three imports sat inside functions).
"""

from __future__ import annotations

import ast
from pathlib import Path

import ragshield.evaluation

PACKAGE = "ragshield.evaluation"
FOLDER = Path(ragshield.evaluation.__file__).parent


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The package's modules that `path` imports, anywhere in the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module in modules:
                found.add(node.module)
            found.update(
                f"{node.module}.{alias.name}" for alias in node.names if f"{node.module}.{alias.name}" in modules
            )
    return found


def import_graph() -> dict[str, set[str]]:
    modules = {f"{PACKAGE}.{path.stem}" for path in FOLDER.glob("*.py") if path.stem != "__init__"}
    return {
        f"{PACKAGE}.{path.stem}": _imports(path, modules) for path in FOLDER.glob("*.py") if path.stem != "__init__"
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path (first module repeated at the end), or None."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := visit(target)) is not None:
                return cycle
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)) is not None:
            return cycle
    return None


def test_the_detector_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_of_evaluation_imports_in_a_cycle() -> None:
    graph = import_graph()
    assert f"{PACKAGE}.report" in graph and f"{PACKAGE}.tables" in graph[f"{PACKAGE}.report"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_renderers_read_only_result_data() -> None:
    graph = import_graph()
    for renderer in ("tables", "plots", "html_report", "summary", "units", "results"):
        reached = graph[f"{PACKAGE}.{renderer}"]
        assert not reached & {f"{PACKAGE}.report", f"{PACKAGE}.harness"}, renderer
