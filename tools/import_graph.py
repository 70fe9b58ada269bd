"""The package's import graph and its longest functions, read from the source with ``ast``.

``python -m tools.import_graph [ROOT]`` prints, for the ``akd_blender`` package under ROOT (default:
this checkout): the modules and the arrows between them (an arrow is "module A imports something from
module B", at any depth of A's code, lazy imports included), the circles (strongly connected groups of
more than one module), the same at the level of folders, the modules over 400 lines and the longest
functions. ``--json`` prints it as one JSON object.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import defaultdict
from pathlib import Path

__all__ = [
    "module_names",
    "import_arrows",
    "outside_imports",
    "private_imports",
    "circles",
    "levels",
    "layer_breaks",
    "longest_functions",
    "summary",
]

PACKAGE = "akd_blender"


def module_names(root: Path) -> dict[str, Path]:
    """Dotted module name → file for every ``.py`` file of the package under ``root``."""
    names = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute dotted name an ``from X import …`` refers to, relative imports resolved."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The longest known module that ``name`` is or lies in, else None (outside the package)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def import_arrows(root: Path) -> dict[str, set[str]]:
    """Module → the package's modules it imports (itself and its own ``__init__`` chain excluded)."""
    modules = module_names(root)
    arrows: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(name, path.name == "__init__.py", node)
                targets = [f"{base}.{alias.name}" for alias in node.names]
            for target in targets:
                owner = _owner(target, modules)
                if owner and owner != name and not name.startswith(owner + "."):
                    arrows[name].add(owner)
    return arrows


def outside_imports(root: Path) -> dict[str, set[str]]:
    """Module → the top-level names of the modules outside the package it imports (``bpy``, ``numpy``…),
    at any depth of its code, lazy imports included."""
    modules = module_names(root)
    out: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                out[name] |= {alias.name.split(".")[0] for alias in node.names if _owner(alias.name, modules) is None}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                if _owner(node.module, modules) is None and node.module.split(".")[0] != PACKAGE:
                    out[name].add(node.module.split(".")[0])
    return out


def layer_breaks(arrows: dict[str, set[str]], package: str, tiers: list[tuple[str, ...]]) -> list[str]:
    """The arrows inside ``package`` that do not point down its declared ``tiers`` (lowest first; each a
    tuple of units: a subpackage's or a top-level module's name, "" for the package's ``__init__``): an
    arrow A → B between two units must go to a lower tier; within one unit any arrow is fine. A module
    of ``package`` whose unit is in no tier is listed too. Returns "A → B (unit a, tier i → unit b, tier j)"
    lines, sorted."""
    tier_of = {unit: i for i, group in enumerate(tiers) for unit in group}

    def unit(name: str) -> str:
        return name[len(package) + 1 :].split(".")[0] if name != package else ""

    inside = [name for name in arrows if name == package or name.startswith(package + ".")]
    found = [f"{name}: unit {unit(name)!r} is in no tier" for name in inside if unit(name) not in tier_of]
    for name in inside:
        for target in arrows[name]:
            if not (target == package or target.startswith(package + ".")):
                continue
            a, b = unit(name), unit(target)
            if a == b or a not in tier_of or b not in tier_of:
                continue
            if tier_of[b] >= tier_of[a]:
                found.append(f"{name} → {target} (unit {a!r}, tier {tier_of[a]} → unit {b!r}, tier {tier_of[b]})")
    return sorted(found)


def _is_private(name: str) -> bool:
    """True for a name with one leading underscore (``_x``), False for public and dunder names."""
    return name.startswith("_") and not name.startswith("__")


def private_imports(root: Path) -> list[str]:
    """``module:line name from other`` for each private name (``_x``) one module of the package takes
    from another: ``from other import _x`` or ``other._x`` through a module bound by an import, at any
    depth (lazy imports included). A module's own names and its package ``__init__`` chain are exempt."""
    modules = module_names(root)
    found = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        bound: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules and alias.asname:
                        bound[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(name, path.name == "__init__.py", node)
                for alias in node.names:
                    owner = _owner(f"{base}.{alias.name}", modules)
                    if owner == f"{base}.{alias.name}":
                        bound[alias.asname or alias.name] = owner
                    elif owner and owner != name and _is_private(alias.name):
                        found.append(f"{name}:{node.lineno} {alias.name} from {owner}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _is_private(node.attr):
                owner = bound.get(node.value.id)
                if owner and owner != name:
                    found.append(f"{name}:{node.lineno} {node.attr} from {owner}")
    return sorted(found)


def levels(arrows: dict[str, set[str]]) -> dict[str, int]:
    """Node → its level in an acyclic graph: 0 for a node that imports none of the others, else one
    more than the highest level it imports. Nodes on a circle are left out."""
    out: dict[str, int] = {}
    on_circle = {node for group in circles(arrows) for node in group}

    def level(node: str) -> int:
        if node not in out:
            out[node] = 1 + max((level(n) for n in arrows.get(node, ()) if n not in on_circle), default=-1)
        return out[node]

    for node in arrows:
        if node not in on_circle:
            level(node)
    return out


def circles(arrows: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one node (Tarjan), each sorted, largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in arrows.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                group.append(item)
                if item == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for node in sorted(arrows):
        if node not in index:
            visit(node)
    return sorted(groups, key=len, reverse=True)


def folder_arrows(arrows: dict[str, set[str]], modules: dict[str, Path]) -> dict[str, set[str]]:
    """The same graph between folders (a module's folder; a package's ``__init__`` belongs to its folder)."""

    def folder(name: str) -> str:
        return name if modules[name].name == "__init__.py" else name.rpartition(".")[0]

    out: dict[str, set[str]] = defaultdict(set)
    for name, targets in arrows.items():
        out[folder(name)]
        for target in targets:
            if folder(target) != folder(name):
                out[folder(name)].add(folder(target))
    return dict(out)


def longest_functions(root: Path, count: int = 15) -> list[tuple[int, str]]:
    """The ``count`` longest functions and methods of the package: (lines, "module:qualified name")."""
    found = []
    for name, path in module_names(root).items():
        tree = ast.parse(path.read_text(), str(path))

        def walk(node: ast.AST, prefix: str, module: str = name) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    qual = f"{prefix}{child.name}"
                    if not isinstance(child, ast.ClassDef):
                        found.append((child.end_lineno - child.lineno + 1, f"{module}:{qual}"))
                    walk(child, qual + ".")

        walk(tree, "")
    return sorted(found, reverse=True)[:count]


def summary(root: Path) -> dict:
    """Counts, circles, long modules and long functions of the package under ``root``."""
    modules = module_names(root)
    arrows = import_arrows(root)
    folders = folder_arrows(arrows, modules)
    lines = {name: len(path.read_text().splitlines()) for name, path in modules.items()}
    blender = f"{PACKAGE}.blender"

    def within(graph: dict[str, set[str]]) -> dict[str, set[str]]:
        keep = {n for n in graph if n == blender or n.startswith(blender + ".")}
        return {n: {t for t in graph[n] if t in keep} for n in keep}

    blender_levels = 1 + max(levels(within(arrows)).values(), default=-1)
    blender_folder_levels = 1 + max(levels(within(folders)).values(), default=-1)
    return {
        "modules": len(modules),
        "arrows": sum(len(t) for t in arrows.values()),
        "circles": circles(arrows),
        "folders": len(folders),
        "folder_arrows": sum(len(t) for t in folders.values()),
        "folder_circles": circles(folders),
        "private_imports": private_imports(root),
        "blender_levels": blender_levels,
        "blender_folder_levels": blender_folder_levels,
        "modules_over_400_lines": sorted(((n, m) for m, n in lines.items() if n > 400), reverse=True),
        "longest_functions": longest_functions(root),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(Path(__file__).resolve().parents[1]))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    facts = summary(Path(args.root))
    if args.json:
        print(json.dumps(facts, indent=1))
        return 0
    print(f"modules {facts['modules']}, arrows {facts['arrows']}, circles {len(facts['circles'])}")
    for group in facts["circles"]:
        print("  circle: " + " ↔ ".join(group))
    print(f"folders {facts['folders']}, arrows {facts['folder_arrows']}, circles {len(facts['folder_circles'])}")
    for group in facts["folder_circles"]:
        print("  folder circle: " + " ↔ ".join(group))
    print(f"private names imported across modules {len(facts['private_imports'])}")
    for line in facts["private_imports"]:
        print(f"  {line}")
    print(f"blender/: {facts['blender_levels']} levels of modules, {facts['blender_folder_levels']} levels of folders")
    print("modules over 400 lines:")
    for lines, name in facts["modules_over_400_lines"]:
        print(f"  {lines:5d}  {name}")
    print("longest functions:")
    for lines, name in facts["longest_functions"]:
        print(f"  {lines:5d}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
