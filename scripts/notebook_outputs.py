#!/usr/bin/env python3
"""The outputs committed with notebooks/*.ipynb: static PNGs of the charts, and a staleness check.

Usage:
  notebook_outputs.py finalize EXECUTED.ipynb DEST.ipynb
  notebook_outputs.py check EXECUTED.ipynb COMMITTED.ipynb
  notebook_outputs.py extract-png NOTEBOOK.ipynb TITLE_SUBSTRING DEST.png [--cell N]

finalize     Writes the notebook to commit from a fresh execution (out/NAME.ipynb). Each chart
             (an application/vnd.plotly.v1+json output) keeps its figure, gains image/png and a
             short text/plain, and loses its text/html (the inlined plotly.js and a random div
             id), so that viewers without JavaScript (GitHub, nbviewer) show the PNG. The PNG is
             drawn offline by kaleido's bundled Chromium with the plotly.js that the execution
             inlined, then reduced to a 256-colour palette by Pillow. Executor metadata (per-cell
             timestamps) is dropped; absolute paths become relative (the repository root -> ..,
             as seen from notebooks/), $HOME -> ~, temporary directories -> <tmp>. JSON is
             written as nbformat writes it (indent 1, sorted keys, trailing newline), so the
             same input gives the same bytes. Needs kaleido and pillow: `bash scripts/notebooks.sh
             --update` installs the pinned versions into its venv and runs this with that Python.
check        Exit 1 when COMMITTED is not finalized (a chart without image/png, inlined
             plotly.js) or its outputs differ from EXECUTED: the code cells' sources, stream text,
             text/plain and text/html of the outputs that are not charts, and the charts' figures
             (the parsed plotly JSON, numbers equal to 1e-9 relative; never the PNG). What varies
             from run to run is masked on both sides first (VARIES_BETWEEN_RUNS, time columns of
             tables, paths). Prints the first differences as unified diffs.
extract-png  Writes the PNG of the chart whose layout title contains TITLE_SUBSTRING (from a
             finalized notebook, e.g. to refresh docs/figures/); fails when none or several
             match (--cell N, the cell index shown in the error, picks one of several).

check and extract-png need only the standard library.
"""
import argparse
import base64
import difflib
import io
import json
import math
import os
import re
import sys
import tempfile
from pathlib import Path

PLOTLY_MIME = "application/vnd.plotly.v1+json"
PLOTLY_JS_MARKER = "plotly.js v"  # the licence header of the inlined bundle
REPO_ROOT = Path(__file__).resolve().parent.parent
UPDATE_HINT = "run: bash scripts/notebooks.sh --update"
DEFAULT_PNG_SIZE = (900, 500)  # when the figure's layout sets no width / height
KEPT_NOTEBOOK_METADATA = ("kernelspec", "language_info")
EXECUTOR_CELL_METADATA = ("execution", "ExecuteTime", "papermill")  # nbclient, jupyterlab, papermill
# Debian's fonts-dejavu-core, on every machine of this kind: the only fonts Chromium may use, so
# that a PNG does not depend on which other fonts a machine has (the chromium package brings
# Liberation, for instance).
FONT_DIR = "/usr/share/fonts/truetype/dejavu"
MAX_REPORTED = 5  # differing outputs printed per notebook
MAX_DIFF_LINES = 14

_DURATION_UNIT = r"(?:ns|µs|μs|us|ms|s|secs?|seconds?|mins?|minutes?|h|hours?)"
# (pattern, replacement, what varies): applied by `check` to both sides, never written.
VARIES_BETWEEN_RUNS = [
    (r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?", "<timestamp>", "clock times"),
    (r"(?<![\w.])\d+h ?\d+m(?: ?\d+(?:\.\d+)?s)?(?!\w)", "<duration>", "elapsed times: 1h 2m 3s"),
    (r"(?<![\w.])\d+m ?\d+(?:\.\d+)?s(?!\w)", "<duration>", "elapsed times: 1m 3s"),
    (r"(?<![\w.])\d+(?:\.\d+)?(?:e[+-]?\d+)? ?" + _DURATION_UNIT + r"(?![\w/])", "<duration>",
     "elapsed times: 3.2 s, 412 ms"),
]
# Table columns whose cells are wall-clock measurements (wall_seconds, elapsed_ms, ...).
TIME_COLUMN = re.compile(r"(?:^|_)(?:wall|elapsed|duration|seconds|secs|ms|time|timestamp|runtime)(?:_|$)", re.I)


# ---------------------------------------------------------------- reading and writing notebooks

def text_of(value):
    return "".join(value) if isinstance(value, list) else (value or "")


def split_text(text):
    """Multi-line strings as nbformat stores them: a list of lines, each with its newline."""
    return text.splitlines(True)


def load_notebook(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_notebook(nb, path):
    text = json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    tmp = Path(f"{path}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def code_cells(nb):
    return [(i, c) for i, c in enumerate(nb.get("cells", [])) if c.get("cell_type") == "code"]


def figure_of(data):
    fig = data[PLOTLY_MIME]
    return json.loads(text_of(fig)) if isinstance(fig, (str, list)) else fig


def chart_title(fig):
    title = (fig.get("layout") or {}).get("title")
    return (title.get("text") if isinstance(title, dict) else title) or ""


def charts(nb):
    """(cell index, output) of every chart output."""
    return [(i, out) for i, cell in code_cells(nb) for out in cell.get("outputs", [])
            if PLOTLY_MIME in (out.get("data") or {})]


def map_strings(value, fn):
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [map_strings(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: map_strings(v, fn) for k, v in value.items()}
    return value


# ---------------------------------------------------------------- what differs between machines and runs

def path_rules():
    """(regex, replacement): the longest prefix first (the repository may sit under $HOME or /tmp)."""
    prefixes = {str(REPO_ROOT): "..", os.path.expanduser("~"): "~"}
    for tmp in {tempfile.gettempdir(), os.environ.get("TMPDIR", ""), "/tmp"}:
        if tmp:
            prefixes.setdefault(tmp.rstrip("/"), "<tmp>")
    rules = []
    for prefix, replacement in sorted(prefixes.items(), key=lambda kv: -len(kv[0])):
        if len(prefix) < 2:  # $HOME=/ and the like
            continue
        # A random directory right under a temp root (Python's tmpXXXXXXXX, Rust's .tmpXXXXXX).
        random_dir = r"(?:/\.?tmp[._]?[A-Za-z0-9_]{6,10}(?![\w.-]))?" if replacement == "<tmp>" else ""
        rules.append((re.compile(r"(?<![\w.-])" + re.escape(prefix) + random_dir + r"(?![\w.-])"), replacement))
    return rules


PATH_RULES = path_rules()
RUN_RULES = [(re.compile(p), r) for p, r, _ in VARIES_BETWEEN_RUNS]


def normalise_paths(text):
    for regex, replacement in PATH_RULES:
        text = regex.sub(replacement, text)
    return text


def mask_run_variation(text):
    for regex, replacement in RUN_RULES:
        text = regex.sub(replacement, text)
    return text


def mask_time_columns_html(html):
    """Blank the cells of time columns in HTML tables (header row of <th>, rows of <td>)."""
    def mask_table(match):
        table = match.group(0)
        header = re.search(r"<tr>((?:\s*<th[^>]*>.*?</th>)+)\s*</tr>", table, re.S)
        if not header:
            return table
        names = [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<th[^>]*>(.*?)</th>", header.group(1), re.S)]
        masked = {k for k, name in enumerate(names) if TIME_COLUMN.search(name)}
        if not masked:
            return table

        def mask_row(row):
            cells = re.findall(r"<td[^>]*>.*?</td>", row.group(0), re.S)
            if len(cells) != len(names):
                return row.group(0)
            return "<tr>" + "".join("<td>…</td>" if k in masked else c for k, c in enumerate(cells)) + "</tr>"

        return re.sub(r"<tr>(?:\s*<td[^>]*>.*?</td>)+\s*</tr>", mask_row, table, flags=re.S)

    return re.sub(r"<table.*?</table>", mask_table, html, flags=re.S)


def mask_time_columns_text(text):
    """Blank the cells of time columns in text tables (polars: `a | b` or `│ a ┆ b │` rows)."""
    separator = re.compile(r"[|┆│]")
    lines, masked, width = [], set(), 0
    for line in text.split("\n"):
        fields = separator.split(line)
        if len(fields) > 1 and any(TIME_COLUMN.search(f.strip()) for f in fields):
            masked = {k for k, f in enumerate(fields) if TIME_COLUMN.search(f.strip())}
            width = len(fields)
        elif masked and len(fields) == width:
            seps = separator.findall(line)
            fields = [" … " if k in masked else f for k, f in enumerate(fields)]
            line = fields[0] + "".join(s + f for s, f in zip(seps, fields[1:]))
        lines.append(line)
    return "\n".join(lines)


def comparable_text(text, mime=None):
    text = mask_run_variation(normalise_paths(text))
    if mime == "text/html":
        text = mask_time_columns_html(text)
    elif mime == "text/plain":
        text = mask_time_columns_text(text)
    return text


# ---------------------------------------------------------------- finalize

def inlined_plotly_js(nb):
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []):
            html = text_of((out.get("data") or {}).get("text/html"))
            if PLOTLY_JS_MARKER in html:
                match = re.search(r"<script[^>]*>(.*?)</script>", html, re.S)
                if match and PLOTLY_JS_MARKER in match.group(1):
                    return match.group(1)
    return None


def font_config(folder):
    """A fontconfig file that sees DejaVu only (with the system's rules for aliases and hinting)."""
    path = Path(folder, "fonts.conf")
    path.write_text(f"""<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
  <dir>{FONT_DIR}</dir>
  <include ignore_missing="yes">/etc/fonts/conf.d</include>
  <cachedir>{folder}/fontconfig</cachedir>
</fontconfig>
""")
    return str(path)


def png_size(fig):
    layout = fig.get("layout") or {}
    return int(layout.get("width") or DEFAULT_PNG_SIZE[0]), int(layout.get("height") or DEFAULT_PNG_SIZE[1])


def compact_png(png):
    """RGBA screenshot -> 256-colour palette PNG (no dithering): ~3.5x smaller, looks the same."""
    from PIL import Image

    rgba = Image.open(io.BytesIO(png)).convert("RGBA")
    image = Image.alpha_composite(Image.new("RGBA", rgba.size, "white"), rgba).convert("RGB")
    palette = image.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    buf = io.BytesIO()
    palette.save(buf, "PNG", optimize=True)
    return buf.getvalue()


def render_pngs(figures, plotly_js):
    """PNG bytes of each figure, drawn by kaleido's Chromium with the given plotly.js, offline."""
    try:
        from kaleido.scopes.plotly import PlotlyScope
        import PIL  # noqa: F401  (compact_png)
    except ImportError as e:
        sys.exit(f"finalize needs kaleido and pillow ({e}); `bash scripts/notebooks.sh --update` "
                 "installs the pinned versions into its venv")

    class Scope(PlotlyScope):
        # PlotlyScope.transform and _json_dumps import the plotly Python package, not needed here.
        def _json_dumps(self, val):
            return json.dumps(val)

        def png(self, fig):
            width, height = png_size(fig)
            reply = self._perform_transform(fig, format="png", width=width, height=height, scale=1)
            if reply.get("code", 0) != 0:
                raise RuntimeError(f"kaleido could not draw {chart_title(fig)!r}: {reply.get('message')}")
            return base64.b64decode(reply["result"])

    with tempfile.TemporaryDirectory() as tmp:
        js = Path(tmp, "plotly.js")
        js.write_text(plotly_js, encoding="utf-8")
        if os.path.isdir(FONT_DIR):
            os.environ["FONTCONFIG_FILE"] = font_config(tmp)  # inherited by kaleido's Chromium
        # plotlyjs: a local file, not the CDN; mathjax=False: no MathJax (the vendored copy is
        # not needed: the charts have no LaTeX).
        scope = Scope(plotlyjs=str(js), mathjax=False)
        try:
            return [compact_png(scope.png(fig)) for fig in figures]
        finally:
            scope._shutdown_kaleido()


def committable_output(out, png=None):
    out = dict(out)
    data = out.get("data")
    if data is not None and PLOTLY_MIME in data:
        fig = map_strings(figure_of(data), normalise_paths)
        out["data"] = {
            PLOTLY_MIME: fig,
            "image/png": base64.b64encode(png).decode("ascii"),
            "text/plain": split_text(f"Chart: {chart_title(fig)}"),
        }
    elif data is not None:
        out["data"] = {mime: split_text(normalise_paths(text_of(v))) if mime.startswith("text/") else v
                       for mime, v in data.items()}
    if "text" in out:
        out["text"] = split_text(normalise_paths(text_of(out["text"])))
    if "evalue" in out:
        out["evalue"] = normalise_paths(out["evalue"])
    if "traceback" in out:
        out["traceback"] = [normalise_paths(line) for line in out["traceback"]]
    return out


def finalize(executed_path, dest_path):
    nb = load_notebook(executed_path)
    found = charts(nb)
    pngs = {}
    if found:
        plotly_js = inlined_plotly_js(nb)
        if plotly_js is None:
            sys.exit(f"{executed_path}: charts but no inlined plotly.js; finalize takes a fresh "
                     "execution (out/NAME.ipynb), not a finalized notebook")
        figures = [figure_of(out["data"]) for _, out in found]
        pngs = {id(out): png for (_, out), png in zip(found, render_pngs(figures, plotly_js))}

    nb["metadata"] = {k: v for k, v in nb.get("metadata", {}).items() if k in KEPT_NOTEBOOK_METADATA}
    for cell in nb.get("cells", []):
        cell["metadata"] = {k: v for k, v in cell.get("metadata", {}).items() if k not in EXECUTOR_CELL_METADATA}
        if isinstance(cell.get("source"), str):
            cell["source"] = split_text(cell["source"])
        if cell.get("cell_type") == "code":
            cell["outputs"] = [committable_output(out, pngs.get(id(out))) for out in cell.get("outputs", [])]
    write_notebook(nb, dest_path)
    size = os.path.getsize(dest_path)
    print(f"wrote {dest_path}: {size / 1e6:.2f} MB, {len(found)} chart(s) with PNG")


# ---------------------------------------------------------------- check

def merged_streams(outputs):
    """Consecutive stream outputs of one name as one (how a kernel splits them is timing)."""
    merged = []
    for out in outputs:
        prev = merged[-1] if merged else None
        if (out.get("output_type") == "stream" and prev and prev.get("output_type") == "stream"
                and prev.get("name") == out.get("name")):
            merged[-1] = dict(prev, text=text_of(prev.get("text")) + text_of(out.get("text")))
        else:
            merged.append(out)
    return merged


def comparable_outputs(cell):
    """[(label, value)] of one code cell's outputs, masked: what check compares."""
    items = []
    for out in merged_streams(cell.get("outputs", [])):
        kind = out.get("output_type")
        if kind == "stream":
            items.append((f"stream {out.get('name')}", comparable_text(text_of(out.get("text")))))
        elif kind == "error":
            items.append(("error", comparable_text(f"{out.get('ename')}: {out.get('evalue')}")))
        else:
            data = out.get("data") or {}
            if PLOTLY_MIME in data:
                items.append((PLOTLY_MIME, map_strings(figure_of(data), comparable_text)))
            else:
                for mime in ("text/plain", "text/html"):
                    if mime in data:
                        items.append((mime, comparable_text(text_of(data[mime]), mime)))
    return items


def same_value(a, b, rel_tol=1e-9):
    """Structural equality; numbers equal to rel_tol (last-digit noise is not staleness)."""
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        return a == b or math.isclose(a, b, rel_tol=rel_tol) or (a != a and b != b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k], rel_tol) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y, rel_tol) for x, y in zip(a, b))
    return a == b


def outputs_listing(items):
    """One cell's outputs as text, a chart as its title: for diffs of differing output lists."""
    lines = []
    for label, value in items:
        lines.append(f"[{label}]")
        lines.append(f"chart: {chart_title(value)}" if label == PLOTLY_MIME else value)
    return "\n".join(lines)


def diff_lines(value):
    if isinstance(value, str):
        return value.splitlines()
    return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False).splitlines()


def short_diff(committed, fresh):
    lines = list(difflib.unified_diff(diff_lines(committed), diff_lines(fresh),
                                      "committed", "fresh", n=1, lineterm=""))
    more = len(lines) - MAX_DIFF_LINES
    return lines[:MAX_DIFF_LINES] + ([f"... ({more} more diff lines)"] if more > 0 else [])


def unfinalized_problems(nb):
    """Why a committed notebook is not what finalize writes: charts without PNG, inlined plotly.js."""
    problems = []
    for i, cell in code_cells(nb):
        for out in cell.get("outputs", []):
            data = out.get("data") or {}
            html = text_of(data.get("text/html"))
            if PLOTLY_MIME in data and "image/png" not in data:
                problems.append(f"cell {i}: chart {chart_title(figure_of(data))!r} without image/png")
            if PLOTLY_JS_MARKER in html or "Plotly.newPlot" in html:
                problems.append(f"cell {i}: text/html with inlined plotly.js or a Plotly.newPlot script")
    return problems


def output_differences(fresh, committed):
    """[(cell index, execution count, label, diff lines)] of the differing code-cell outputs."""
    fresh_cells, committed_cells = code_cells(fresh), code_cells(committed)
    sources = [text_of(c.get("source")) for _, c in fresh_cells]
    committed_sources = [text_of(c.get("source")) for _, c in committed_cells]
    if sources != committed_sources:
        return [(None, None, "code cell sources (was EXECUTED run from COMMITTED?)",
                 short_diff("\n".join(committed_sources), "\n".join(sources)))]
    found = []
    for (i, cell), (_, old) in zip(fresh_cells, committed_cells):
        items, old_items = comparable_outputs(cell), comparable_outputs(old)
        if [label for label, _ in items] != [label for label, _ in old_items]:
            found.append((i, cell.get("execution_count"), "outputs (kinds or number)",
                          short_diff(outputs_listing(old_items), outputs_listing(items))))
            continue
        for (label, value), (_, old_value) in zip(items, old_items):
            if not same_value(value, old_value):
                found.append((i, cell.get("execution_count"), label, short_diff(old_value, value)))
    return found


def update_hint(committed_path):
    return f"{UPDATE_HINT} {Path(committed_path).stem}"


def check(executed_path, committed_path):
    fresh, committed = load_notebook(executed_path), load_notebook(committed_path)
    problems = unfinalized_problems(committed)
    differences = output_differences(fresh, committed)
    if not any(cell.get("outputs") for _, cell in code_cells(committed)) and differences:
        problems, differences = ["no outputs committed"], []
    if not problems and not differences:
        print(f"ok   {committed_path}: outputs match {executed_path} "
              f"({len(code_cells(fresh))} code cells, {len(charts(fresh))} chart(s))")
        return 0
    print(f"STALE {committed_path} (fresh execution: {executed_path})")
    for p in problems:
        print(f"  not finalized: {p}")
    for i, count, label, diff in differences[:MAX_REPORTED]:
        where = "" if i is None else f"cell {i}" + (f" (In [{count}])" if count is not None else "") + ", "
        print(f"  {where}{label} differs:")
        for line in diff:
            print(f"    {line}")
    if len(differences) > MAX_REPORTED:
        print(f"  ... and {len(differences) - MAX_REPORTED} more differing outputs")
    print(update_hint(committed_path))
    return 1


# ---------------------------------------------------------------- extract-png

def extract_png(notebook_path, title_part, dest, cell=None):
    found = [(i, out) for i, out in charts(load_notebook(notebook_path))
             if title_part in chart_title(figure_of(out["data"])) and (cell is None or i == cell)]
    titles = "\n".join(f"  cell {i}: {chart_title(figure_of(out['data']))}"
                       for i, out in charts(load_notebook(notebook_path)))
    if not found:
        sys.exit(f"{notebook_path}: no chart title contains {title_part!r}; the charts:\n{titles}")
    if len(found) > 1:
        sys.exit(f"{notebook_path}: {len(found)} chart titles contain {title_part!r} (pick one with "
                 f"--cell N):\n" + "\n".join(f"  cell {i}: {chart_title(figure_of(o['data']))}" for i, o in found))
    i, out = found[0]
    if "image/png" not in out["data"]:
        sys.exit(f"{notebook_path}: the chart in cell {i} has no image/png (finalize the notebook first)")
    Path(dest).write_bytes(base64.b64decode(text_of(out["data"]["image/png"])))
    print(f"wrote {dest}: cell {i}, {chart_title(figure_of(out['data']))!r}")
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("finalize", help="write the committable notebook")
    p.add_argument("executed")
    p.add_argument("dest")
    p = commands.add_parser("check", help="exit 1 when the committed outputs are stale")
    p.add_argument("executed")
    p.add_argument("committed")
    p = commands.add_parser("extract-png", help="write the PNG of one chart")
    p.add_argument("notebook")
    p.add_argument("title_substring")
    p.add_argument("dest")
    p.add_argument("--cell", type=int, help="cell index, among charts whose titles match")
    args = parser.parse_args(argv)
    if args.command == "finalize":
        return finalize(args.executed, args.dest) or 0
    if args.command == "check":
        return check(args.executed, args.committed)
    return extract_png(args.notebook, args.title_substring, args.dest, args.cell)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
