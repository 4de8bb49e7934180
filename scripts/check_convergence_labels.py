#!/usr/bin/env python3
"""No unlabelled unconverged posterior summary in a notebook's outputs (stdlib only).

Usage: check_convergence_labels.py NOTEBOOK.ipynb ...

Reads every table printed in a code cell's outputs (polars' text layout: a header row, a dtype
row, a `---+---` rule, then rows) that has an R-hat column (`rhat`, `r_hat` or `R-hat`). A table
fails when
  * a row has R-hat above 1.01 and neither that row's text nor the output it is printed in says
    "not converged" (so a failed method is never shown as a result), or
  * its rows are elided (a row of "…"): the R-hat of a hidden row cannot be read, so a summary
    with an R-hat column must show all its rows.
Prints one line per failure and one per notebook; exits 1 on any failure.
"""
import json
import re
import sys

RHAT_MAX = 1.01
RHAT_NAMES = {"rhat", "r_hat", "r-hat"}
NOT_CONVERGED = re.compile(r"not\s+converged", re.IGNORECASE)


def output_texts(cell):
    for output in cell.get("outputs", []):
        if "text" in output:
            yield "".join(output["text"])
        elif "data" in output and "text/plain" in output["data"]:
            value = output["data"]["text/plain"]
            yield "".join(value) if isinstance(value, list) else value


def split_row(line):
    return [field.strip() for field in line.split("|")]


def tables(text):
    """(header, rows) for every polars text table in text."""
    lines = text.splitlines()
    for i in range(len(lines) - 2):
        rule = lines[i + 2]
        if "|" not in lines[i] or not re.fullmatch(r"-+(\+-+)+", rule.strip()):
            continue
        header = [name.lower() for name in split_row(lines[i])]
        rows = []
        for line in lines[i + 3:]:
            if "|" not in line:
                break
            rows.append(split_row(line))
        yield header, rows


def check_text(text):
    failures = []
    labelled_output = bool(NOT_CONVERGED.search(text))
    for header, rows in tables(text):
        columns = [j for j, name in enumerate(header) if name in RHAT_NAMES]
        if not columns:
            continue
        col = columns[0]
        for row in rows:
            if len(row) != len(header):
                continue
            if all(field in ("…", "...") for field in row):
                failures.append("rows hidden behind '…' in a table with an R-hat column")
                continue
            try:
                rhat = float(row[col])
            except ValueError:
                continue
            if rhat > RHAT_MAX and not labelled_output and not NOT_CONVERGED.search(" ".join(row)):
                failures.append(f"R-hat {rhat:.3g} > {RHAT_MAX} without 'not converged': {' | '.join(row)}")
    return failures


def check_notebook(path):
    with open(path) as f:
        notebook = json.load(f)
    failures = []
    for index, cell in enumerate(notebook.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        for text in output_texts(cell):
            failures += [f"{path}: cell {index}: {message}" for message in check_text(text)]
    return failures


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    failed = 0
    for path in sys.argv[1:]:
        failures = check_notebook(path)
        for failure in failures:
            print(failure)
        print(f"{path}: {'ok' if not failures else f'{len(failures)} unlabelled or hidden'}")
        failed += bool(failures)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
