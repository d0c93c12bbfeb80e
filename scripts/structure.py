#!/usr/bin/env python3
"""Issue 27's two bars on the code as it is: functions over 120 lines and files that import each other.

    scripts/structure.py [--max-lines N] [--why] [--gate] [ROOT]

Reads every crate's `src/` (tests left out: in-file `#[cfg(test)]` items, `tests.rs` and
`tests/` folders) and prints
- each function longer than N lines (120), from its `fn` line to its closing brace as rustfmt
  places it (the brace at the `fn`'s own indentation);
- each import circle inside a crate: files that reach each other through `use` and qualified
  paths (`crate::a::b`, `super::x`, `self::x`, a child module's name), directly or around a
  circle (a strongly connected component of the file graph, printed with one cycle through it).

Exit status: 0, or with --gate 1 when anything is over a bar. Needs only Python 3.
"""

import argparse
import os
import re
import sys

FN = re.compile(
    r"^(?P<indent>\s*)(?:pub(?:\([^)]*\))?\s+)?(?:default\s+)?(?:const\s+)?(?:async\s+)?"
    r"(?:unsafe\s+)?(?:extern\s+\"[^\"]*\"\s+)?fn\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
)
MOD_DECL = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;")
PATH = re.compile(r"(?<![:\w])([a-z_][a-z0-9_]*)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]*)")


def block_end(lines, start, indent):
    """The index of the line closing the item opened at `start` (rustfmt: `indent` + `}`)."""
    for i in range(start, len(lines)):
        line = strip_comments(lines[i]).rstrip()
        if line.endswith(";") and "{" not in line:
            return i  # a declaration, or `mod name;`
        if line.endswith("{") or line.endswith("}"):
            if line.endswith("}") and line.count("{") == line.count("}"):
                return i  # all on one line
            break
    for j in range(i + 1, len(lines)):
        if lines[j].rstrip() in (indent + "}", indent + "};", indent + "},", indent + "})"):
            return j
    return len(lines) - 1


def test_ranges(lines):
    """Line ranges of `#[cfg(test)]` items, and the names of `#[cfg(test)] mod name;` files."""
    ranges, files = [], set()
    for i, line in enumerate(lines):
        if line.strip().startswith("#[cfg(test)]"):
            j = i + 1
            while j < len(lines) and lines[j].strip().startswith("#["):
                j += 1
            if j >= len(lines):
                continue
            m = MOD_DECL.match(lines[j])
            if m:
                files.add(m.group(1))
                continue
            indent = re.match(r"^\s*", lines[j]).group(0)
            ranges.append((i, block_end(lines, j, indent)))
    return ranges, files


def rust_files(root):
    """{crate: {module path tuple: file}} for every crate under crates/ (and fuzz/)."""
    crates = {}
    dirs = []
    cdir = os.path.join(root, "crates")
    if os.path.isdir(cdir):
        dirs += [os.path.join(cdir, d) for d in sorted(os.listdir(cdir))]
    if os.path.isdir(os.path.join(root, "fuzz", "src")):
        dirs.append(os.path.join(root, "fuzz"))
    for crate in dirs:
        src = os.path.join(crate, "src")
        if not os.path.isdir(src):
            continue
        mods = {}
        for base, subdirs, names in os.walk(src):
            subdirs[:] = sorted(d for d in subdirs if d != "tests")
            for n in sorted(names):
                if not n.endswith(".rs"):
                    continue
                path = os.path.join(base, n)
                rel = os.path.relpath(path, src)[:-3].split(os.sep)
                if rel[-1] in ("lib", "main") and len(rel) == 1:
                    rel = []
                elif rel[-1] == "mod":
                    rel = rel[:-1]
                elif len(rel) == 1 and rel[0] != "lib" and os.path.exists(os.path.join(src, "main.rs")) \
                        and os.path.exists(os.path.join(src, "lib.rs")) and n == "main.rs":
                    rel = []
                mods[tuple(rel)] = path
        crates[os.path.basename(crate)] = mods
    return crates


def strip_comments(line):
    # good enough for rustfmt'd code: drop `//` comments outside string literals
    out, in_str, i = [], False, 0
    while i < len(line):
        c = line[i]
        if c == '"' and (i == 0 or line[i - 1] != "\\"):
            in_str = not in_str
        if not in_str and line.startswith("//", i):
            break
        out.append(c)
        i += 1
    return "".join(out)


def use_paths(text):
    """Expand `use a::{b, c::{d}}` into ['a::b', 'a::c::d']."""
    text = re.sub(r"\s+", "", text)

    def expand(prefix, s):
        out, depth, cur = [], 0, ""
        parts = []
        for ch in s:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        if cur:
            parts.append(cur)
        for p in parts:
            p = re.sub(r"as[A-Za-z_0-9]+$", "", p) if "::" in p else p
            if "{" in p:
                head, rest = p.split("{", 1)
                out += expand(prefix + head, rest[:-1] if rest.endswith("}") else rest)
            else:
                out.append(prefix + p)
        return out

    return expand("", text)


DEF = re.compile(
    r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?(?:const\s+)?(?:async\s+)?"
    r"(?:struct|enum|fn|trait|type|const|static|union|macro_rules!)\s+([A-Za-z_][A-Za-z0-9_]*)"
)


class Crate:
    """A crate's modules, what each defines and what each brings into scope with `use`."""

    def __init__(self, mods, skip):
        self.mods = mods
        self.defines = {}
        self.imports = {}  # module -> {name: path segments}, and "*" -> [glob paths]
        for mod, path in mods.items():
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
            ranges, _ = test_ranges(lines)
            names, imports = set(), {"*": []}
            pending = None
            for i, raw in enumerate(lines):
                if any(a <= i <= b for a, b in ranges):
                    continue
                line = strip_comments(raw)
                if pending is not None:
                    pending += line
                    if ";" not in line:
                        continue
                    text, pending = pending.split(";")[0], None
                else:
                    m = DEF.match(line)
                    if m:
                        names.add(m.group(1))
                    um = USE.match(line)
                    if not um:
                        continue
                    if ";" not in line:
                        pending = um.group(1)
                        continue
                    text = um.group(1)
                for full in use_paths(text):
                    alias = re.search(r"\bas\s*([A-Za-z_][A-Za-z0-9_]*)$", full)
                    segs = full.split("::")
                    if segs[-1] == "*":
                        imports["*"].append(segs[:-1])
                    elif segs[-1] == "self":
                        imports[segs[-2]] = segs[:-1]
                    else:
                        imports[alias.group(1) if alias else segs[-1]] = segs
            self.defines[mod] = names
            self.imports[mod] = imports

    def resolve(self, here, segs, depth=0):
        """The file that defines what a path names (following `use` re-exports), or None."""
        mods = self.mods
        if not segs or depth > 20:
            return None
        first = segs[0]
        if first == "crate":
            base, rest = (), segs[1:]
        elif first == "super":
            base, rest = here[:-1], segs[1:]
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
        elif first == "self":
            base, rest = here, segs[1:]
        elif here + (first,) in mods:
            base, rest = here, segs
        else:
            return None
        if base not in mods:
            return None
        cur = base
        while rest and cur + (rest[0],) in mods:
            cur, rest = cur + (rest[0],), rest[1:]
        if not rest or rest[0] in self.defines.get(cur, ()):
            return cur
        name = rest[0]
        imported = self.imports.get(cur, {})
        if name in imported:
            found = self.resolve(cur, imported[name] + rest[1:], depth + 1)
            return found if found is not None else cur
        for glob in imported.get("*", []):
            found = self.resolve(cur, glob + rest, depth + 1)
            if found is not None and found != cur:
                return found
        return cur


def scan(root, max_lines):
    long_fns, circles = [], []
    for crate, mods in sorted(rust_files(root).items()):
        test_files = set()
        c = Crate(mods, test_files)
        for mod, path in mods.items():
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
            _, files = test_ranges(lines)
            test_files |= {mod + (n,) for n in files}
        edges, why = {}, {}
        for mod, path in sorted(mods.items()):
            if any(mod[:k] in test_files for k in range(1, len(mod) + 1)):
                continue
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
            ranges, _ = test_ranges(lines)

            def in_test(i):
                return any(a <= i <= b for a, b in ranges)

            for i, line in enumerate(lines):
                m = FN.match(line)
                if not m or in_test(i):
                    continue
                end = block_end(lines, i, m.group("indent"))
                n = end - i + 1
                if n > max_lines:
                    long_fns.append((n, os.path.relpath(path, root), i + 1, m.group("name")))
            out = edges.setdefault(mod, set())
            pending_use, reexport = None, False
            for i, raw in enumerate(lines):
                if in_test(i):
                    continue
                line = strip_comments(raw)
                targets = []
                if pending_use is not None:
                    pending_use += line
                    if ";" in line:
                        if not reexport:
                            targets += use_paths(pending_use.split(";")[0])
                        pending_use = None
                    continue
                um = USE.match(line)
                if um and line.lstrip().startswith("pub"):
                    # a re-export is the module's face, not a use of its own: paths through
                    # it are followed to the file that defines the item
                    if ";" not in line:
                        pending_use, reexport = um.group(1), True
                    continue
                if um:
                    if ";" in line:
                        targets += use_paths(um.group(1))
                    else:
                        pending_use, reexport = um.group(1), False
                        continue
                else:
                    targets += [m.group(1) + m.group(2) for m in PATH.finditer(line)]
                for t in targets:
                    dest = c.resolve(mod, [x for x in re.sub(r"as[A-Za-z_0-9]+$", "", t).split("::") if x])
                    if dest is not None and dest != mod and dest in mods:
                        out.add(dest)
                        why.setdefault((mod, dest), f"{os.path.relpath(path, root)}:{i + 1} {t}")
        for comp in sccs(edges):
            if len(comp) > 1:
                cycle = one_cycle(edges, comp)
                inside = sorted(w for (a, b), w in why.items() if a in comp and b in comp)
                circles.append((crate, [mods[m] for m in cycle], inside))
    return long_fns, circles


def sccs(edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
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
            out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def one_cycle(edges, comp):
    """The shortest way from the component's first file back to itself, through the component."""
    members = set(comp)
    start = comp[0]
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(edges.get(v, ())):
                if w not in members:
                    continue
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    rest = [m for m in comp if m not in path]
                    return list(reversed(path)) + rest
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", nargs="?", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--max-lines", type=int, default=120)
    ap.add_argument("--why", action="store_true", help="print each import inside a circle")
    ap.add_argument("--gate", action="store_true", help="exit 1 when anything is over a bar")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    long_fns, circles = scan(root, a.max_lines)
    for n, path, line, name in sorted(long_fns, reverse=True):
        print(f"long function: {path}:{line} {name}: {n} lines (over {a.max_lines})")
    for crate, files, inside in circles:
        shown = " -> ".join(os.path.relpath(f, os.path.join(root, "crates", crate, "src"))
                            for f in files)
        print(f"import circle in {crate}: {shown}")
        if a.why:
            for w in inside:
                print(f"    {w}")
    print(f"structure: {len(long_fns)} functions over {a.max_lines} lines, "
          f"{len(circles)} import circles")
    sys.exit(1 if a.gate and (long_fns or circles) else 0)


if __name__ == "__main__":
    main()
