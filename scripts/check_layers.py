#!/usr/bin/env python3
"""Check that the top-level modules of each library crate depend one way.

For every crate under crates/ (and the binary under src/), read its non-test
Rust source, find each reference to another top-level module of the same
crate (`crate::x`, `super::x` resolved to the crate root, grouped
`use crate::{a, b::c}` imports and re-exports alike) and fail, printing the
cycle, when those references do not form a DAG.

    python3 scripts/check_layers.py            # check; exit 1 on a cycle
    python3 scripts/check_layers.py --graph    # also print each crate's edges
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    # String literals can hold `crate::` in messages: blank them.
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return text


def strip_tests(text):
    """Remove items under `#[cfg(test)]` (a module block or one item)."""
    out = []
    i = 0
    marker = "#[cfg(test)]"
    while True:
        j = text.find(marker, i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k = j + len(marker)
        # Skip to the item's end: the matching `}` of its first block, or a `;`
        # that comes before any `{`.
        brace = text.find("{", k)
        semi = text.find(";", k)
        if semi >= 0 and (brace < 0 or semi < brace):
            i = semi + 1
            continue
        depth = 0
        p = brace
        while p < len(text):
            if text[p] == "{":
                depth += 1
            elif text[p] == "}":
                depth -= 1
                if depth == 0:
                    break
            p += 1
        i = p + 1


def module_path(src_dir, path):
    """Module path of a file: src/rules/eval.rs -> ['rules', 'eval']."""
    rel = path.relative_to(src_dir).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return parts


def expand_use(tree):
    """Flatten `a::{b, c::d}` into ['a::b', 'a::c::d'] (first segments are
    all that matter here)."""
    tree = re.sub(r"\s+", "", tree)
    m = re.match(r"^([^{]*?)\{(.*)\}$", tree)
    if not m:
        return [tree]
    prefix, inner = m.group(1), m.group(2)
    items, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    if cur:
        items.append(cur)
    paths = []
    for item in items:
        for sub in expand_use(item):
            paths.append(prefix + sub)
    return paths


def resolve(path, here):
    """Top-level module named by a path written in module `here`, or None."""
    segs = path.split("::")
    if segs[0] == "crate":
        return segs[1] if len(segs) > 1 else None
    if segs[0] in ("super", "self"):
        base = list(here)
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                base = base[:-1]
            segs = segs[1:]
        full = base + segs
        return full[0] if full else None
    return None


def root_names(src_dir):
    """The crate root's modules (file stem -> module name, `#[path]` honoured)
    and its re-exports (name -> module)."""
    root = src_dir / "lib.rs"
    if not root.exists():
        root = src_dir / "main.rs"
    text = strip_comments(root.read_text())
    files, modules, reexports = {}, set(), {}
    for m in re.finditer(r'(?:#\[path\s*=\s*"([^"]+)"\]\s*)?(?:pub(?:\([a-z]+\))?\s+)?mod\s+([a-z_0-9]+)\s*;', text):
        modules.add(m.group(2))
        stem = Path(m.group(1)).stem if m.group(1) else m.group(2)
        files[stem] = m.group(2)
    # strip_comments blanked string literals; read `#[path]` from the raw text.
    for m in re.finditer(r'#\[path\s*=\s*"([^"]+)"\]\s*(?:pub\s+)?mod\s+([a-z_0-9]+)', root.read_text()):
        files[Path(m.group(1)).stem] = m.group(2)
    for m in re.finditer(r"\bpub\s+use\s+([^;]*);", text):
        for p in expand_use(m.group(1)):
            segs = p.split("::")
            if segs[0] in modules:
                reexports[segs[-1]] = segs[0]
    return files, modules, reexports


def deps_of_crate(src_dir):
    files, modules, reexports = root_names(src_dir)
    edges = {}
    for path in sorted(src_dir.rglob("*.rs")):
        here = module_path(src_dir, path)
        if not here:
            continue  # the crate root only declares modules
        here[0] = files.get(here[0], here[0])
        top = here[0]
        # A file under a `#[path]` stand-in or a test-only module still counts
        # by where it sits.
        text = strip_tests(strip_comments(path.read_text()))
        refs = set()
        for m in re.finditer(r"\buse\s+((?:crate|super|self)[^;]*);", text):
            for p in expand_use(m.group(1)):
                refs.add(resolve(p, here))
        for m in re.finditer(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", text):
            refs.add(resolve(m.group(1), here))
        for r in refs:
            r = reexports.get(r, r)
            # Items defined in the crate root itself are not a module.
            if r in modules and r != top:
                edges.setdefault(top, {}).setdefault(r, set()).add(
                    str(path.relative_to(ROOT))
                )
    return edges


def cycles(edges):
    """Every strongly connected component with more than one module, each
    as one cycle through it."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
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
                sub = {a: {b: f for b, f in edges.get(a, {}).items() if b in comp} for a in comp}
                out.append((sorted(comp), find_cycle(sub)))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def find_cycle(edges):
    """One cycle as a list of modules, or None (iterative DFS)."""
    state = {}
    for start in sorted(edges):
        if state.get(start):
            continue
        stack = [(start, iter(sorted(edges.get(start, {}))))]
        path = [start]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
                continue
            s = state.get(nxt, 0)
            if s == 1:
                return path[path.index(nxt):] + [nxt]
            if s == 0:
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(sorted(edges.get(nxt, {})))))
    return None


def main():
    show = "--graph" in sys.argv
    crates = [ROOT / "src"] + sorted(p / "src" for p in (ROOT / "crates").iterdir() if (p / "src").is_dir())
    failed = False
    for src in crates:
        edges = deps_of_crate(src)
        name = src.parent.name if src.parent != ROOT else "sieve (binary)"
        if show:
            print(f"{name}:")
            for a in sorted(edges):
                print(f"  {a} -> {', '.join(sorted(edges[a]))}")
        for comp, cycle in cycles(edges):
            failed = True
            print(f"{name}: modules {', '.join(comp)} depend on each other; one cycle: {' -> '.join(cycle)}", file=sys.stderr)
            for a, b in zip(cycle, cycle[1:]):
                print(f"    {a} -> {b}: {', '.join(sorted(edges[a][b]))}", file=sys.stderr)
    if failed:
        sys.exit(1)
    print("layers: every crate's top-level modules form a DAG")


if __name__ == "__main__":
    main()
