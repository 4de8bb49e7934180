#!/usr/bin/env python3
"""Check executed notebooks (stdlib only): no errors, an HTML table, complete offline charts.

Usage: check_outputs.py out/NAME.ipynb ...

A notebook passes when
  * it exists (`jupyter execute` writes nothing when the kernel dies or a cell times out) and
    every code cell was executed in this run: it has nbclient's execution timestamps (cell
    metadata "execution"). The input notebooks carry committed outputs and execution counts, and
    nbclient replaces them only in the cells it executes (a skipped cell keeps them).
  * no output is an error and nothing is printed on stderr (evcxr reports an error returned
    through `?` only there),
  * at least one output is an HTML table (text/html containing "<table"),
  * if it shows charts (application/vnd.plotly.v1+json outputs): plotly.js is inlined in exactly one
    HTML output (no CDN), and every chart has a title, a title on each axis its traces use,
    and a legend (named traces shown in the legend).
Prints one line per notebook and ends with "N passed, N failed"; exits 1 on any failure.
"""
import json
import sys

PLOTLY_MIME = "application/vnd.plotly.v1+json"
PLOTLY_JS_MARKER = "plotly.js v"


def text_of(value):
    return "".join(value) if isinstance(value, list) else (value or "")


def title_text(obj):
    title = (obj or {}).get("title")
    if isinstance(title, dict):
        return title.get("text") or ""
    return title or ""


def axis_key(ref, letter):
    """'x' -> 'xaxis', 'x3' -> 'xaxis3'."""
    suffix = ref[1:] if ref and ref[0] == letter else ""
    return f"{letter}axis{suffix}"


def check_chart(fig, label):
    problems = []
    layout = fig.get("layout") or {}
    data = fig.get("data") or []
    if not data:
        problems.append(f"{label}: no traces")
    if not title_text(layout).strip():
        problems.append(f"{label}: no title")
    axes = set()
    for trace in data:
        if trace.get("type") in ("pie", "table", "sunburst", "treemap"):
            continue
        axes.add(axis_key(trace.get("xaxis", "x"), "x"))
        axes.add(axis_key(trace.get("yaxis", "y"), "y"))
    for key in sorted(axes):
        if not title_text(layout.get(key)).strip():
            problems.append(f"{label}: axis {key} has no title")
    in_legend = [t for t in data if t.get("name") and t.get("showlegend") is not False]
    if layout.get("showlegend") is False or not in_legend:
        problems.append(f"{label}: no legend (no named trace shown in the legend)")
    elif len(in_legend) < 2 and layout.get("showlegend") is not True:
        problems.append(f"{label}: one trace only and layout.showlegend not set: no legend shown")
    return problems


def check_notebook(path):
    try:
        with open(path, encoding="utf-8") as f:
            nb = json.load(f)
    except (OSError, ValueError) as e:
        return [f"cannot read: {e}"], {}
    problems = []
    tables = charts = 0
    js_inlined = 0
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        if not text_of(cell.get("source")).strip():
            continue
        if cell.get("execution_count") is None or not (cell.get("metadata") or {}).get("execution"):
            problems.append(f"cell {i}: not executed in this run")
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "error":
                msg = out.get("ename", "") + ": " + out.get("evalue", "")
                problems.append(f"cell {i}: error output: {msg.strip()[:300]}")
                continue
            if kind == "stream" and out.get("name") == "stderr":
                # evcxr prints an error returned through `?` on stderr and reports the cell as
                # successful (its variables are lost), so any stderr output counts as a failure.
                text = text_of(out.get("text")).strip()
                problems.append(f"cell {i}: stderr output: {text[:300]}")
            data = out.get("data") or {}
            html = text_of(data.get("text/html"))
            if "<table" in html:
                tables += 1
            if PLOTLY_JS_MARKER in html:
                js_inlined += 1
            if PLOTLY_MIME in data:
                charts += 1
                fig = data[PLOTLY_MIME]
                if isinstance(fig, (str, list)):
                    fig = json.loads(text_of(fig))
                problems += check_chart(fig, f"cell {i} chart")
                if "Plotly.newPlot" not in html:
                    problems.append(f"cell {i}: chart without its text/html rendering")
    if tables == 0:
        problems.append("no HTML table output")
    if charts and not js_inlined:
        problems.append("charts shown but plotly.js is not inlined in any HTML output")
    if js_inlined > 1:
        problems.append(f"plotly.js inlined {js_inlined} times (once per kernel session expected)")
    return problems, {"tables": tables, "charts": charts}


def main(paths):
    if not paths:
        print("usage: check_outputs.py out/NAME.ipynb ...", file=sys.stderr)
        return 2
    passed = failed = 0
    for path in paths:
        problems, counts = check_notebook(path)
        if problems:
            failed += 1
            print(f"FAIL {path}")
            for p in problems:
                print(f"  - {p}")
        else:
            passed += 1
            print(f"ok   {path} ({counts['tables']} tables, {counts['charts']} charts)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
