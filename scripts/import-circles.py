#!/usr/bin/env python3
"""Import circles between the files (and folders) of each crate (issue 25).

A file imports another when it names a path into it: `crate::a::b`, `super::x`, `self::x`,
also inside `use ...::{...}` groups. A parent's `mod x;` and `pub use x::...` of its own
children are structure, not imports, and test modules (`#[cfg(test)] mod tests`) are left
out. Reported: every group of files that reach each other (a strongly connected component),
with its edges; with --folders, the same between the top-level modules of each crate
(`model/` and `record/` count as one node each).

Usage: scripts/import-circles.py [--folders] [CRATE_DIR...]   (default: every workspace member)
Exit status 1 when any circle is found.
"""
import os
import re
import sys
from collections import defaultdict

TOKEN = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)(::\{([^}]*)\})?")


def modules(src):
    """Module path (tuple) -> file, for every .rs file under src."""
    out = {}
    for d, _, names in os.walk(src):
        for n in names:
            if not n.endswith(".rs"):
                continue
            path = os.path.join(d, n)
            parts = os.path.relpath(path, src)[:-3].split("/")
            if parts[-1] == "mod" or parts in (["lib"], ["main"]):
                parts = ["<main>"] if parts == ["main"] else parts[:-1]
            out[tuple(parts)] = path
    return out


def imports(mods):
    """File-level edges: module -> set of modules it names a path into."""
    def owner(path):
        for n in range(len(path), -1, -1):
            if tuple(path[:n]) in mods:
                return tuple(path[:n])
        return None

    edges = defaultdict(set)
    for key, path in mods.items():
        text = open(path, encoding="utf-8").read()
        cut = text.find("#[cfg(test)]\nmod tests")
        if cut >= 0:
            text = text[:cut]
        text = re.sub(r"//[^\n]*", "", text)
        for m in TOKEN.finditer(text):
            kind, rest = m.group(1), m.group(2).split("::")[1:]
            if kind == "crate":
                base = []
            elif kind == "self":
                base = list(key)
            else:
                base = list(key)[:-1]
                while rest and rest[0] == "super":
                    base, rest = base[:-1], rest[1:]
            targets = [base + rest]
            for item in (m.group(4) or "").split(","):
                item = item.strip().split("::")[0].split(" ")[0]
                if item and item not in ("self", "*"):
                    targets.append(base + rest + [item])
            for t in targets:
                o = owner(t)
                # Naming an ancestor module itself (`super::super`) is no import of a file.
                if o is not None and o != key and not (len(t) == len(o) and key[: len(o)] == o):
                    edges[key].add(o)
    return edges


def circles(nodes, edges):
    """Tarjan's strongly connected components with more than one node."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(100000)
    for v in nodes:
        if v not in index:
            visit(v)
    return out


def main():
    args = sys.argv[1:]
    folders = "--folders" in args
    crates = [a for a in args if a != "--folders"]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if not crates:
        toml = open(os.path.join(root, "Cargo.toml"), encoding="utf-8").read()
        crates = re.findall(r'"([^"]+)"', re.search(r"^members = \[(.*)\]$", toml, re.M).group(1))
        crates = [os.path.join(root, c) for c in crates]
    found = 0
    for crate in crates:
        mods = modules(os.path.join(crate, "src"))
        edges = imports(mods)
        nodes = list(mods)
        if folders:
            top = lambda k: k[:1]
            folded = defaultdict(set)
            for a, bs in edges.items():
                for b in bs:
                    if top(a) != top(b) and top(b):
                        folded[top(a)].add(top(b))
            edges, nodes = folded, sorted({top(k) for k in mods})
        for comp in circles(nodes, edges):
            found += 1
            name = lambda k: "/".join(k) or "<root>"
            print(f"{os.path.basename(os.path.normpath(crate))}: {len(comp)} in a circle: "
                  + " ".join(sorted(name(k) for k in comp)))
            for a in sorted(comp):
                for b in sorted(edges[a]):
                    if b in comp:
                        print(f"    {name(a)} -> {name(b)}")
    if found:
        sys.exit(1)
    print("import-circles: none" + (" between folders" if folders else " between files"))


main()
