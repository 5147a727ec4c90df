"""The opforge package's modules import each other without a cycle (read from the sources, so no
extension or torch is needed). A package's __init__ may gather its submodules; no other module may
reach back to a module that imports it, directly or through others, at module level or inside a
function."""
import ast
import pathlib

PKG = pathlib.Path(__file__).resolve().parents[2] / "python" / "opforge"


def _module_name(path):
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _edges():
    modules = {_module_name(p): p for p in PKG.rglob("*.py")}
    edges = {m: set() for m in modules}
    for mod, path in modules.items():
        is_pkg = path.name == "__init__.py"
        package = mod if is_pkg else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                targets = [prefix] + [f"{prefix}.{a.name}" for a in node.names]
            for t in targets:
                if t in modules and t != mod:
                    edges[mod].add(t)
    return modules, edges


def _cycle(edges, skip):
    state, stack = {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for n in sorted(edges[m]):
            if (m, n) in skip:
                continue
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        state[m] = 2
        stack.pop()
        return None

    for m in sorted(edges):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_no_import_cycle_between_opforge_modules():
    modules, edges = _edges()
    assert "opforge._ops" in modules and "opforge.torch" in modules, sorted(modules)
    # A package's __init__ importing its own submodules is the package's table of contents.
    skip = {(m, n) for m in edges for n in edges[m]
            if modules[m].name == "__init__.py" and n.startswith(m + ".")}
    cycle = _cycle(edges, skip)
    assert cycle is None, " -> ".join(cycle)


def test_the_cycle_check_finds_a_cycle():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert _cycle(edges, set()) == ["a", "b", "c", "a"]
    assert _cycle(edges, {("c", "a")}) is None
