#!/usr/bin/env python3
"""The numbers the README (and the docs' prose) quote, checked against the tables they come from.

Usage: python3 scripts/check_numbers.py        (run by .ci/run; exits 1 on any mismatch)

A measurement lives once, in a committed table (docs/PERFORMANCE.md, docs/REPRODUCTION.md, the
"Public tables" of docs/NOISE-AWARE.md, docs/NOTEBOOKS.md); a sentence elsewhere that repeats it
is listed in CHECKS below with the function that recomputes it from that table. A check fails when
the sentence is gone or reworded (update the check with it) or when its numbers no longer follow
from the table (update the sentence). Numbers are compared as the prose rounds them: a quoted
value matches when it equals the computed one at the quoted number of decimals (speed-ups
computed from a table's rounded times: when it is within what those times allow).
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NUMBER = r"(\d+(?:\.\d+)?)"


def read(name):
    return (ROOT / name).read_text(encoding="utf-8")


def tables(text):
    """Every markdown table of `text`: (header cells, rows of cells)."""
    out, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            header = cells(lines[i])
            rows = []
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                rows.append(cells(lines[j]))
                j += 1
            out.append((header, rows))
            i = j
        else:
            i += 1
    return out


def cells(line):
    """The cells of a table row (`\\|` is a pipe inside a cell)."""
    parts = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [c.strip().replace("\\|", "|") for c in parts]


def table_with(text, header, last=True):
    """The (last) table of `text` whose header cells are exactly `header`."""
    found = [rows for h, rows in tables(text) if h == header]
    if not found:
        raise LookupError(f"no table with header {header}")
    return found[-1] if last else found[0]


def numbers(cell):
    """The numbers of a cell, `**` and footnote marks aside ("0.48-0.61×" → [0.48, 0.61])."""
    return [float(v) for v in re.findall(r"\d+(?:\.\d+)?", cell.replace("**", ""))]


def decimals(text):
    return len(text.split(".")[1]) if "." in text else 0


def same(quoted, value):
    return abs(float(quoted) - round(value, decimals(quoted))) < 1e-9


# --- where the numbers come from ------------------------------------------------------------

BARE_PASS = ["sampler", "easy-2d", "vs bare pass", "gauss-30d", "vs bare pass"]
THESIS = ["workload", "time", "vs thesis code", "vs one bare pass"]
PUBLIC = "table | model | n | d | ε | sd ratio"


def bare_pass_range(prefix):
    rows = table_with(read("docs/PERFORMANCE.md"), BARE_PASS)
    values = [v for r in rows if r[0].startswith(prefix) for v in numbers(r[2]) + numbers(r[4])]
    return min(values), max(values)


def bare_pass_max():
    rows = table_with(read("docs/PERFORMANCE.md"), BARE_PASS)
    return max(v for r in rows for v in numbers(r[2]) + numbers(r[4]))


def thesis_range():
    """Speed-ups over the thesis code of the timed sampler rows (footnote ² rows were not timed
    against the thesis' own OCU/GWMH)."""
    rows = table_with(read("docs/PERFORMANCE.md"), THESIS, last=False)
    values = [
        v
        for r in rows
        if r[1].endswith("/iter") and "²" not in r[2]
        for v in numbers(r[2].split("(")[0])
    ]
    return min(values), max(values)


def rounded(cell):
    """A table's rounded number as the interval it stands for ("0.051" → [0.0505, 0.0515])."""
    text = re.findall(r"\d+(?:\.\d+)?", cell.replace("**", ""))[0]
    half = 0.5 * 10 ** -decimals(text)
    return float(text) - half, float(text) + half


def pld_speedups():
    """dp_accounting's seconds over ours on the two workloads, as intervals (the times are
    rounded): (a) against vdi 1e-5, the interval ours matches, (b) against vdi 1e-4; ours at the
    default tolerance and matched."""
    text = read("docs/PERFORMANCE.md")
    out = []
    for label, theirs in [("workload (a)", "dp_accounting, vdi 1e-5"), ("workload (b)", "dp_accounting, vdi 1e-4")]:
        rows = [rows for h, rows in tables(text) if h[0].startswith(label)][0]
        seconds = {r[0]: rounded(r[3]) for r in rows}
        for ours in ["ours, default tolerance 2e-3", "ours, matched per answer"]:
            (t_lo, t_hi), (o_lo, o_hi) = seconds[theirs], seconds[ours]
            out.append((t_lo / o_hi, t_hi / o_lo))
    return out


def quoted_in(quoted, interval):
    """A quoted number matches an interval when its own rounding interval meets it."""
    half = 0.5 * 10 ** -decimals(quoted)
    return float(quoted) - half <= interval[1] and float(quoted) + half >= interval[0]


def public_rows():
    text = read("docs/NOISE-AWARE.md")
    section = text.split("## Public tables", 1)[1]
    header, rows = next((h, r) for h, r in tables(section) if " | ".join(h).startswith(PUBLIC))
    return [dict(zip(header, r)) for r in rows]


def public(table, eps, column):
    row = next(r for r in public_rows() if r["table"] == table and r["ε"] == eps)
    return float(row[column])


def grid_minutes():
    rows = [r for _, rows in tables(read("docs/REPRODUCTION.md")) for r in rows]
    values = [
        float(m)
        for r in rows
        if r[0].startswith("`reproduce all --out DIR`")
        for m in re.findall(r"= (\d+(?:\.\d+)?) min", r[2])
    ]
    return min(values), max(values)


def first_install():
    m = re.search(r"the whole first install took (\d+ min \d+ s)", read("docs/NOTEBOOKS.md"))
    return m.group(1)


# --- the checks: (file, pattern with the quoted numbers as groups, check of the groups) -------


def equal_range(lo_hi):
    lo, hi = lo_hi
    return lambda a, b: same(a, lo) and same(b, hi)


def within(lo, hi):
    return lambda v: lo - 1e-9 <= v <= hi + 1e-9


CHECKS = [
    (
        "README.md",
        rf"at most {NUMBER}× one bare pass",
        lambda target: bare_pass_max() <= float(target),
        "the largest sampler/bare-pass ratio of docs/PERFORMANCE.md's last bench table",
    ),
    (
        "README.md",
        rf"DP penalty {NUMBER}-{NUMBER}×",
        lambda a, b: equal_range(bare_pass_range("DP penalty"))(a, b),
        "the DP penalty rows of docs/PERFORMANCE.md's last bench table",
    ),
    (
        "README.md",
        rf"DP HMC {NUMBER}-{NUMBER}× its L \+ 1 passes",
        lambda a, b: equal_range(bare_pass_range("DP HMC"))(a, b),
        "the DP HMC row of docs/PERFORMANCE.md's last bench table",
    ),
    (
        "README.md",
        rf"the samplers were {NUMBER}-{NUMBER}× faster than the thesis' own code",
        lambda a, b: equal_range(thesis_range())(a, b),
        "the timed sampler rows of docs/PERFORMANCE.md's table against the thesis code",
    ),
    (
        "README.md",
        rf"The certified PLD accountant answers {NUMBER}-{NUMBER}× faster",
        lambda a, b: quoted_in(a, min(pld_speedups())) and quoted_in(b, max(pld_speedups())),
        "docs/PERFORMANCE.md, 'Certified PLD vs dp_accounting' (seconds, both workloads)",
    ),
    (
        "README.md",
        rf"`Default` and `Wage` are within {NUMBER}× the floor's width at ε = 8",
        lambda x: same(x, max(public(t, "8", "ratio / floor") for t in ["default", "wage"])),
        "docs/NOISE-AWARE.md's Public tables (ratio / floor at ε = 8)",
    ),
    (
        "README.md",
        rf"\({NUMBER}-{NUMBER} % of its intervals contain the non-private mean",
        lambda a, b: within(float(a), float(b))(100 * public("default", "1", "90 % cover")),
        "docs/NOISE-AWARE.md's Public tables (Default, ε = 1, 90 % cover)",
    ),
    (
        "README.md",
        rf"`Wage` at\s+ε = 1 is {NUMBER}-{NUMBER}× its floor",
        lambda a, b: within(float(a), float(b))(public("wage", "1", "ratio / floor")),
        "docs/NOISE-AWARE.md's Public tables (Wage, ε = 1, ratio / floor)",
    ),
    (
        "docs/NOISE-AWARE.md",
        rf"near the floor in width\*\* \({NUMBER} against {NUMBER}, {NUMBER}×",
        lambda s, f, r: same(s, public("default", "8", "sd ratio"))
        and same(f, public("default", "8", "floor"))
        and same(r, public("default", "8", "ratio / floor")),
        "its own Public tables (Default, ε = 8)",
    ),
    (
        "README.md",
        rf"\({NUMBER}-{NUMBER} minutes on 2 cores",
        lambda a, b: equal_range(grid_minutes())(a, b),
        "docs/REPRODUCTION.md's `reproduce all` rows",
    ),
    (
        "README.md",
        r"the first install took (\d+ min \d+ s)",
        lambda t: t == first_install(),
        "docs/NOTEBOOKS.md",
    ),
]


def main():
    failed = 0
    for name, pattern, check, source in CHECKS:
        found = [m.groups() for m in re.finditer(pattern, read(name))]
        if len(found) != 1:
            print(f"FAIL {name}: /{pattern}/ found {len(found)} times (expected once): reworded? update the check")
            failed += 1
            continue
        try:
            ok = check(*found[0])
        except (LookupError, StopIteration, IndexError, ValueError) as e:
            print(f"FAIL {name}: /{pattern}/: the source ({source}) did not parse: {e!r}")
            failed += 1
            continue
        if ok:
            print(f"ok   {name}: {' / '.join(found[0])} ({source})")
        else:
            print(f"FAIL {name}: {' / '.join(found[0])} does not follow from {source}")
            failed += 1
    print(f"{len(CHECKS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
