#!/usr/bin/env python3
"""Check that the modules of each crate depend one way, at every depth.

For every crate under crates/ (and the binary under src/), read its non-test
Rust source and find each reference to another module of the same crate
(`crate::x::y`, `super::y`, `self::y`, grouped `use crate::{a, b::c}`
imports, and names re-exported by a module resolved to where they are
defined). Each reference from a file in module `a::b::…` to `a::c::…` is an
edge b -> c among the children of `a` (the crate root's children are the
top-level modules). The children of every module folder must form a DAG;
the script fails, printing one cycle, where they do not.

A folder's own file (`lib.rs`, `mod.rs`) declares and re-exports its
children; items it defines itself (functions, types, traits) are one more
node of the folder, named `(mod.rs)`: a child that uses them and is used by
them closes a cycle like any other. Its `mod` declarations and `pub use`
re-exports are not references (a re-exported name is followed to where it
is defined).

    python3 scripts/check_layers.py            # check; exit 1 on a cycle
    python3 scripts/check_layers.py --graph    # also print each crate's edges
    python3 scripts/check_layers.py --self-test  # the check finds planted cycles
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OWN = "(mod.rs)"  # the node of the items a folder's own file defines


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


def use_leaves(tree):
    """`a::{b as c, d::{self, e}}` -> [(['a','b'], 'c'), (['a','d'], 'd'),
    (['a','d','e'], 'e')]: each imported path and the name it binds."""
    out = []
    for p in expand_use(tree):
        alias = None
        m = re.match(r"^(.*?)as([A-Za-z_][A-Za-z0-9_]*)$", p)
        if m and m.group(1).endswith(("::", "}")) is False and "::" in m.group(1):
            p, alias = m.group(1), m.group(2)
        segs = [x for x in p.split("::") if x]
        if not segs or segs[-1] == "*":
            continue
        if segs[-1] == "self":
            segs = segs[:-1]
        if segs:
            out.append((segs, alias or segs[-1]))
    return out


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


class Crate:
    """The module tree of one crate and the names each module binds with
    `use` (what `super::Name` may reach)."""

    def __init__(self, src_dir):
        self.src_dir = src_dir
        files, _, _ = root_names(src_dir)
        self.files = {}  # path -> module path (tuple)
        for path in sorted(src_dir.rglob("*.rs")):
            here = module_path(src_dir, path)
            if here:
                here[0] = files.get(here[0], here[0])
            self.files[path] = tuple(here)
        self.modules = set()
        for m in self.files.values():
            for i in range(len(m) + 1):
                self.modules.add(m[:i])
        self.texts = {
            path: strip_tests(strip_comments(path.read_text())) for path in self.files
        }
        # Folders whose own file (mod.rs, lib.rs) defines items of its own.
        self.owns = set()
        for path, here in self.files.items():
            if path.stem in ("mod", "lib", "main") and re.search(
                r"^\s*(?:pub(?:\([a-z]+\))?\s+)?(?:const\s+fn|unsafe\s+fn|fn|struct|enum|trait|type|const|static|impl|union)\b",
                self.texts[path],
                flags=re.M,
            ):
                self.owns.add(here)
        # (module, name) -> the full path it stands for.
        self.aliases = {}
        for path, here in self.files.items():
            for m in re.finditer(r"\buse\s+([^;]*);", self.texts[path]):
                for segs, name in use_leaves(m.group(1)):
                    full = self.absolute(segs, here)
                    if full is not None:
                        self.aliases[(here, name)] = full

    def absolute(self, segs, here):
        """A path written in module `here` as a full path from the crate
        root, or None when it names something outside the crate."""
        segs = list(segs)
        if segs[0] == "crate":
            return segs[1:]
        if segs[0] in ("super", "self"):
            base = list(here)
            while segs and segs[0] in ("super", "self"):
                if segs[0] == "super":
                    base = base[:-1]
                segs = segs[1:]
            return base + segs
        if tuple(here) + (segs[0],) in self.modules:
            return list(here) + segs
        return None

    def module_of(self, full):
        """The module a full path ends in, following `use` bindings; an item
        defined in a folder's own file ends in that folder's `OWN` node."""
        for _ in range(16):
            i = 0
            while i < len(full) and tuple(full[: i + 1]) in self.modules:
                i += 1
            mod = tuple(full[:i])
            if i < len(full) and (mod, full[i]) in self.aliases:
                target = self.aliases[(mod, full[i])]
                if target[: len(full)] == full[: i + 1]:
                    return mod  # a name bound to itself
                full = list(target) + list(full[i + 1 :])
                continue
            if i < len(full) and mod in self.owns:
                return mod + (OWN,)
            return mod
        return tuple(full)

    def edges(self):
        """{folder: {child: {other child: files}}} for every module folder."""
        out = {}
        for path, here in self.files.items():
            text = self.texts[path]
            refs = set()
            if path.stem in ("mod", "lib", "main"):
                # Its declarations and re-exports are not uses. Its own items
                # use a child through a name it imported or a bare
                # `child::` path; those are edges of the folder's own node.
                folder = here
                text = re.sub(r"\b(?:pub(?:\([a-z]+\))?\s+)?use\s+[^;]*;", "", text)
                text = re.sub(r"\b(?:pub(?:\([a-z]+\))?\s+)?mod\s+[a-z_0-9]+\s*;", "", text)
                words = set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]*\b", text))
                for (mod, name), target in self.aliases.items():
                    if mod == folder and name in words:
                        refs.add(("crate", *target))
                for m in re.finditer(r"(?<!::)\b([a-z_][a-z0-9_]*)::", text):
                    if folder + (m.group(1),) in self.modules:
                        refs.add(("self", m.group(1)))
                here = here + (OWN,)
            for m in re.finditer(r"\buse\s+((?:crate|super|self)[^;]*);", text):
                for segs, _ in use_leaves(m.group(1)):
                    refs.add(tuple(segs))
            for m in re.finditer(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", text):
                refs.add(tuple(m.group(1).split("::")))
            for segs in refs:
                full = self.absolute(segs, here)
                if full is None:
                    continue
                target = self.module_of(full)
                n = 0
                while n < min(len(here), len(target)) and here[n] == target[n]:
                    n += 1
                # Within one folder: here[n] and target[n] are two of its
                # children. Into a folder's own file or from it: no node.
                if n < len(here) and n < len(target):
                    folder = here[:n]
                    out.setdefault(folder, {}).setdefault(here[n], {}).setdefault(
                        target[n], set()
                    ).add(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path))
        return out


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


def self_test():
    """Plant cycles in a scratch crate (two siblings one level down, and a
    folder's own items with a child) and a clean folder; the check must
    find exactly the planted ones."""
    import tempfile

    files = {
        "lib.rs": "mod a;\nmod b;\n",
        "a/mod.rs": "mod x;\nmod y;\npub use x::X;\npub struct Own;\nfn f() -> y::Y { todo!() }\n",
        "a/x.rs": "use super::Own;\npub struct X;\n",
        "a/y.rs": "pub struct Y;\n",
        "b/mod.rs": "mod p;\nmod q;\npub use p::P;\n",
        "b/p.rs": "use super::q::Q;\npub struct P;\n",
        "b/q.rs": "pub struct Q(crate::b::p::P);\n",
    }
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        for name, text in files.items():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_text(text)
        found = {}
        for folder, edges in Crate(src).edges().items():
            for comp, _ in cycles(edges):
                found[folder] = comp
    # a: Own (mod.rs) is used by x, but mod.rs uses only y: no cycle.
    # b: p and q use each other.
    want = {("b",): ["p", "q"]}
    assert found == want, f"planted cycles {want}, found {found}"
    files["a/mod.rs"] = files["a/mod.rs"].replace("y::Y", "x::X")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"
        for name, text in files.items():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_text(text)
        found = {f: c for f, e in Crate(src).edges().items() for c, _ in cycles(e)}
    want = {("a",): [OWN, "x"], ("b",): ["p", "q"]}
    assert found == want, f"planted cycles {want}, found {found}"
    print("check_layers self-test: planted cycles found, at a folder's own file too")


def main():
    if "--self-test" in sys.argv:
        self_test()
        return
    show = "--graph" in sys.argv
    crates = [ROOT / "src"] + sorted(p / "src" for p in (ROOT / "crates").iterdir() if (p / "src").is_dir())
    failed = False
    folders = 0
    for src in crates:
        crate = Crate(src)
        name = src.parent.name if src.parent != ROOT else "sieve (binary)"
        by_folder = crate.edges()
        for folder in sorted(by_folder):
            edges = by_folder[folder]
            folders += 1
            label = "::".join((name,) + folder)
            if show:
                print(f"{label}:")
                for a in sorted(edges):
                    print(f"  {a} -> {', '.join(sorted(edges[a]))}")
            for comp, cycle in cycles(edges):
                failed = True
                print(f"{label}: modules {', '.join(comp)} depend on each other; one cycle: {' -> '.join(cycle)}", file=sys.stderr)
                for a, b in zip(cycle, cycle[1:]):
                    print(f"    {a} -> {b}: {', '.join(sorted(edges[a][b]))}", file=sys.stderr)
    if failed:
        sys.exit(1)
    print(f"layers: the modules of every folder of every crate form a DAG ({folders} folders)")


if __name__ == "__main__":
    main()
