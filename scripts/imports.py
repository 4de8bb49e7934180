#!/usr/bin/env python3
"""The crate's import graph, read from every `use` and `crate::`/`super::` path in `src/`.

    python3 scripts/imports.py [--check] [--why] [--dot FILE]

Rooms are the top-level modules of the library (`accounting`, `samplers`, ...); files are the
`.rs` files. A reference to a name is resolved through the `pub use` re-exports of the module
that names it, to the file that defines it, so an arrow means "this file uses something that
file defines" (a `mod.rs` re-exporting its children is not an arrow). Prints:

- the rooms in their layers (`LAYERS`, lowest first) and every arrow between rooms;
- arrows that run up (from a lower layer to a higher one): the layering's one rule is that
  a room uses only rooms below it or on its own floor;
- circles between files (strongly connected components of more than one file).

- arrows between sibling folders (`SIBLINGS`: one sampler folder using another's code).

`--check` exits 1 when an arrow runs up or joins two siblings, a circle is not one of `KNOWN_CIRCLES` (each two
halves of one computation, with the reason), or there are more than `MAX_CIRCLES`. The binary
(`src/bin`) is the top floor and is not part of the graph's rooms.
"""

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

# Lowest first. A room may use rooms of its own or a lower layer only.
LAYERS = [
    ["error", "rng", "progress"],
    ["noise", "accounting", "diagnostics"],
    ["models", "mechanisms"],
    ["samplers"],
    ["auto", "noise_aware"],
    ["experiments"],
    ["frame", "plots"],
    ["fit", "display"],
    ["prelude", "lib"],
]

MAX_CIRCLES = 3

# Folders whose subfolders are siblings that never import each other (shared code goes one
# level up): the sampler folders. `pass/` is the samplers' shared data passes, not a sampler.
SIBLINGS = {"samplers": {"pass"}}

# The circles the crate keeps, each two halves of one computation (`--check` fails on others).
KNOWN_CIRCLES = {
    ("accounting/accountant", "accounting/algorithm2"):
        "the `Accountant` trait's `max_iterations` is Algorithm 2, which searches any accountant",
    ("accounting/certified/engine/discretise", "accounting/certified/engine/profile"):
        "a privacy profile is discretised into buckets, and a discretised loss is a profile",
    ("samplers/pass/gradient", "samplers/pass/linear_ratio", "samplers/pass/lockstep",
     "samplers/pass/ratio"):
        "the data passes and their lockstep form (chains sharing one pass): each pass routes a "
        "lockstep member to the shared pass, which runs the passes' own span kernels",
}

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def module_of(path: Path) -> tuple:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "mod":
        parts.pop()
    if parts == ["lib"]:
        return ()
    return tuple(parts)


def strip_comments(text: str) -> str:
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def cfg_test_free(text: str) -> str:
    """Drops `#[cfg(test)] mod tests { ... }` blocks (tests are not the crate's structure)."""
    out, i = [], 0
    pattern = r"#\[cfg\(test\)\]\s*(#\[[^\]]*\]\s*)*(pub(\(crate\))?\s+)?mod\s+\w+\s*\{"
    for m in re.finditer(pattern, text):
        if m.start() < i:
            continue
        out.append(text[i : m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def expand_use(tree: str) -> list:
    """`a::{b, c::{d, e}}` → [[a, b], [a, c, d], [a, c, e]] (`self` and `as` handled)."""
    tree = tree.strip()
    if not tree:
        return []
    depth = 0
    for i, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                prefix = [p for p in tree[:i].split("::") if p.strip()]
                inner = tree[i + 1 : tree.rindex("}")]
                out = []
                for part in split_top(inner):
                    for tail in expand_use(part):
                        out.append(prefix + tail if tail != ["self"] else prefix)
                return out
            depth += 1
        elif ch == "}":
            depth -= 1
    path = tree.split(" as ")[0].strip()
    return [[p.strip() for p in path.split("::") if p.strip()]]


def split_top(s: str) -> list:
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        cur += ch
    parts.append(cur)
    return [p for p in parts if p.strip()]


class Crate:
    def __init__(self):
        self.files = {}  # module path -> text
        for f in sorted(SRC.rglob("*.rs")):
            if "bin" in f.relative_to(SRC).parts:
                continue
            self.files[module_of(f)] = cfg_test_free(strip_comments(f.read_text()))
        self.modules = set(self.files)
        # re-exports: (module, name) -> absolute path of what it names
        self.reexports = {}
        for m, text in self.files.items():
            for tree in re.findall(r"pub(?:\([^)]*\))?\s+use\s+([^;]+);", text):
                for path in expand_use(tree):
                    absolute = self.absolute(m, path)
                    if absolute:
                        name = path[-1]
                        alias = re.search(rf"\b{re.escape(name)}\s+as\s+({IDENT})", tree)
                        self.reexports[(m, alias.group(1) if alias else name)] = absolute

    def absolute(self, m: tuple, path: list):
        """`path` as used in module `m`, made absolute (a list of segments), or None."""
        if not path:
            return None
        head = path[0]
        if head == "crate":
            return list(path[1:])
        if head == "super":
            base = list(m[:-1])
            rest = path[1:]
            while rest and rest[0] == "super":
                base = base[:-1]
                rest = rest[1:]
            return base + list(rest)
        if head == "self":
            return list(m) + list(path[1:])
        if tuple(list(m) + [head]) in self.modules:
            return list(m) + list(path)
        return None  # an external crate or std

    def resolve(self, path: list, seen=None) -> tuple:
        """The file module defining what the absolute `path` names (following re-exports)."""
        seen = seen or set()
        for k in range(len(path), 0, -1):
            prefix = tuple(path[:k])
            if prefix in self.modules:
                if k < len(path):
                    key = (prefix, path[k])
                    if key in self.reexports and key not in seen:
                        seen.add(key)
                        return self.resolve(self.reexports[key] + path[k + 1 :], seen)
                return prefix
        return ()

    def arrows(self) -> dict:
        edges = defaultdict(set)
        self.why = defaultdict(set)
        for m, text in self.files.items():
            paths = []
            for tree in re.findall(r"(?<![\w:])use\s+([^;]+);", text):
                if re.search(r"pub(?:\([^)]*\))?\s+use\s+" + re.escape(tree), text):
                    continue  # a re-export: not a use of the module's own
                paths += expand_use(tree)
            # `$crate::` paths are a macro's, resolved where it is expanded: not this file's
            inline = rf"(?<![\w$])(?:crate|super)(?:::{IDENT})+"
            paths += [p.split("::") for p in re.findall(inline, text)]
            for path in paths:
                absolute = self.absolute(m, path)
                if absolute is None:
                    continue
                target = self.resolve(absolute)
                if target != m and not (len(target) < len(m) and m[: len(target)] == target and target == ()):
                    if target != ():
                        edges[m].add(target)
                        self.why[(m, target)].add("::".join(path))
        return edges


def room(m: tuple) -> str:
    return m[0] if m else "lib"


def layer_of(r: str) -> int:
    for i, rooms in enumerate(LAYERS):
        if r in rooms:
            return i
    return len(LAYERS)


def circles(edges: dict) -> list:
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    nodes = set(edges) | {t for ts in edges.values() for t in ts}
    sys.setrecursionlimit(10000)

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
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def listed(title: str, items: list) -> int:
    """Prints `title: count` and the items, one per line; returns the count."""
    print(f"{title}: {len(items)}")
    for item in items:
        print(f"  {item}")
    return len(items)


def name(m: tuple) -> str:
    return "/".join(m) or "lib"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--dot")
    ap.add_argument("--why", action="store_true", help="the names behind each circle's arrows")
    args = ap.parse_args()
    crate = Crate()
    edges = crate.arrows()
    room_edges = defaultdict(set)
    for a, ts in edges.items():
        for b in ts:
            if room(a) != room(b):
                room_edges[room(a)].add(room(b))
    rooms = sorted({room(m) for m in crate.modules}, key=lambda r: (layer_of(r), r))
    unplaced = [r for r in rooms if layer_of(r) == len(LAYERS)]
    print(f"{len(rooms)} rooms, {len(LAYERS)} layers, "
          f"{sum(len(t) for t in room_edges.values())} arrows between rooms, "
          f"{sum(len(t) for t in edges.values())} between files")
    for i, layer in enumerate(LAYERS):
        here = [r for r in layer if r in rooms]
        print(f"  layer {i}: " + ", ".join(
            f"{r} → {', '.join(sorted(room_edges[r])) or '-'}" for r in here))
    problems = []
    if unplaced:
        problems.append(f"rooms in no layer (add them to LAYERS): {', '.join(unplaced)}")
    up = []
    for a, ts in sorted(edges.items()):
        for b in sorted(ts):
            if layer_of(room(b)) > layer_of(room(a)):
                up.append(f"{name(a)} → {name(b)}")
    if listed("arrows that run up", up):
        problems.append(f"{len(up)} arrows run up")
    siblings = []
    for a, ts in sorted(edges.items()):
        for b in sorted(ts):
            for top, shared in SIBLINGS.items():
                folders = [m[1] for m in (a, b) if len(m) >= 2 and m[0] == top]
                if len(folders) == 2 and folders[0] != folders[1] and \
                        all((SRC / top / f).is_dir() and f not in shared for f in folders):
                    siblings.append(f"{name(a)} → {name(b)}")
    if listed("arrows between sibling folders", siblings):
        problems.append(f"{len(siblings)} arrows between sibling folders (move the shared code up)")
    cs = circles(edges)
    print(f"circles between files: {len(cs)}")
    unknown = []
    for c in cs:
        key = tuple(name(m) for m in c)
        print("  " + " ↔ ".join(key) + (f"  ({KNOWN_CIRCLES[key]})" if key in KNOWN_CIRCLES else ""))
        if key not in KNOWN_CIRCLES:
            unknown.append(" ↔ ".join(key))
        if args.why:
            for a in c:
                for b in c:
                    if b in edges.get(a, ()):
                        print(f"      {name(a)} → {name(b)}: {', '.join(sorted(crate.why[(a, b)]))}")
    if len(cs) > MAX_CIRCLES:
        problems.append(f"{len(cs)} circles (at most {MAX_CIRCLES})")
    if unknown:
        problems.append("a new circle (break it, or say in KNOWN_CIRCLES why it is one "
                        "computation): " + "; ".join(unknown))
    if args.dot:
        with open(args.dot, "w") as f:
            f.write("digraph rooms {\n")
            for a, ts in sorted(room_edges.items()):
                for b in sorted(ts):
                    f.write(f'  "{a}" -> "{b}";\n')
            f.write("}\n")
    if args.check and problems:
        print("FAILED: " + "; ".join(problems), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
