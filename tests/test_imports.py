"""The package boundaries of docs/architecture.md, checked by reading every import with ``ast``:
the rules stay pure, the network layer knows neither side, the two sides never import each
other, and no package reaches up into the commands."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "bunco_pi"


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports (absolute names; relative ones resolved), lazily too."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    here = ["bunco_pi", *path.relative_to(PACKAGE).with_suffix("").parts[:-1]]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def modules_of(package: str) -> list[Path]:
    return sorted((PACKAGE / package).rglob("*.py"))


def ours(names: set[str]) -> set[str]:
    return {n for n in names if n == "bunco_pi" or n.startswith("bunco_pi.")}


def under(name: str, package: str) -> bool:
    return name == f"bunco_pi.{package}" or name.startswith(f"bunco_pi.{package}.")


def test_the_walker_sees_what_a_module_imports(tmp_path):
    # the checks below are only as good as this: relative, lazy and aliased imports count
    names = imports_of(PACKAGE / "commands" / "demo.py")
    assert "bunco_pi.sim.report" in names and "bunco_pi.errors" in names
    assert "bunco_pi.net.sequence" in imports_of(PACKAGE / "head" / "eventlog.py")


def test_rules_import_only_the_standard_library_and_themselves():
    bad = []
    for path in modules_of("rules"):
        for name in imports_of(path):
            top = name.split(".")[0]
            if top == "bunco_pi":
                if not under(name, "rules"):
                    bad.append(f"{path.name}: {name}")
            elif top not in sys.stdlib_module_names and top != "__future__":
                bad.append(f"{path.name}: {name}")
    assert bad == []


@pytest.mark.parametrize("package, forbidden", [
    ("net", ("head", "table", "commands")),
    ("head", ("table", "commands")),
    ("table", ("head", "commands")),
    ("sim", ("commands",)),
    ("hardware", ("head", "table", "commands")),
])
def test_a_package_does_not_import_what_it_must_not_know(package, forbidden):
    bad = [f"{path.relative_to(PACKAGE)}: {name}"
           for path in modules_of(package)
           for name in ours(imports_of(path))
           if any(under(name, f) for f in forbidden)]
    assert bad == []


def test_the_protocol_is_below_both_sides():
    names = ours(imports_of(PACKAGE / "protocol.py"))
    assert all(under(n, "rules") for n in names), names


def unit_of(name: str) -> str:
    """The package (or top-level module) a module belongs to: bunco_pi.head.service -> head."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_no_import_circle_between_packages():
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        unit = rel.parts[0].removesuffix(".py") if len(rel.parts) == 1 else rel.parts[0]
        for name in ours(imports_of(path)):
            if name == "bunco_pi":
                continue
            other = unit_of(name)
            known = (PACKAGE / other).is_dir() or (PACKAGE / f"{other}.py").exists()
            if known and other not in (unit, "__init__"):
                graph.setdefault(unit, set()).add(other)
    assert cycles_in(graph) == []


def cycles_in(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each import circle found by a depth-first walk, as the path that closes it."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return cycles


def test_the_circle_finder_finds_one():
    assert cycles_in({"sim": {"commands"}, "commands": {"sim", "rules"}, "rules": set()}) == \
        [["commands", "sim", "commands"]]
    assert cycles_in({"a": {"b"}, "b": {"c"}}) == []


def test_what_the_pico_table_box_shares_imports_nothing():
    # table/presses.py is copied onto the Pico beside the firmware: MicroPython runs it as is
    for name in ("presses.py", "layout.py", "tally.py"):
        assert imports_of(PACKAGE / "table" / name) == set(), name
    # the font reader unpacks its file with struct, which MicroPython has too
    assert imports_of(PACKAGE / "table" / "bitfont.py") == {"struct"}
