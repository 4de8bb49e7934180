#!/usr/bin/env python3
"""Checks that two `dp-mcmc reproduce` output folders hold the same tables and figures.

    python3 scripts/compare_results.py UNSHARDED MERGED

Compares every file under UNSHARDED (tables *.csv and figures/*.html; the run records
*.runs.json and shard manifests record times and are skipped) with the same file under MERGED:

* grid tables (header starting `task,`): the same rows, as sets of lines, without the last
  column `wall_seconds` (a measured task time). Rows are compared as sets because an unsharded
  run with several threads appends them in order of completion; `reproduce merge` writes task
  order (tests/it/experiments/shard.rs checks that order).
* medians tables (*-medians.csv): byte for byte without the last column `wall_seconds` (the
  median task time);
* everything else (accounting.csv, the HTML figures): byte for byte.

Exits 1 and lists the differences if any.
"""
import pathlib
import sys

SKIP = (".runs.json", "shard.json")


def drop_last_column(lines):
    header = lines[0].split(",")
    assert header[-1] == "wall_seconds", f"last column is {header[-1]}, not wall_seconds"
    return [line.rsplit(",", 1)[0] for line in lines]


def compare(a: pathlib.Path, b: pathlib.Path) -> str | None:
    if not b.exists():
        return "missing"
    if a.suffix != ".csv":
        return None if a.read_bytes() == b.read_bytes() else "bytes differ"
    la, lb = a.read_text().splitlines(), b.read_text().splitlines()
    if la[:1] != lb[:1]:
        return "headers differ"
    if la[0].startswith("task,"):
        ra, rb = drop_last_column(la), drop_last_column(lb)
        return None if (ra[0], sorted(ra[1:])) == (rb[0], sorted(rb[1:])) else "rows differ"
    if a.name.endswith("-medians.csv"):
        return None if drop_last_column(la) == drop_last_column(lb) else "medians differ"
    return None if a.read_bytes() == b.read_bytes() else "bytes differ"


def main() -> int:
    ref, other = map(pathlib.Path, sys.argv[1:3])
    files = sorted(p for p in ref.rglob("*") if p.is_file() and not p.name.endswith(SKIP))
    if not files:
        print(f"no files under {ref}")
        return 1
    extra = sorted(
        p.relative_to(other)
        for p in other.rglob("*")
        if p.is_file() and not p.name.endswith(SKIP) and not (ref / p.relative_to(other)).exists()
    )
    bad = [(f.relative_to(ref), why) for f in files if (why := compare(f, other / f.relative_to(ref)))]
    bad += [(p, f"only in {other}") for p in extra]
    for path, why in bad:
        print(f"DIFFERENT {path}: {why}")
    print(f"{len(files) - len(bad)} of {len(files)} files equal ({ref} vs {other})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
