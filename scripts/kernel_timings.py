#!/usr/bin/env python3
"""Time a fresh `dp-mcmc` kernel: its start, its first cells, a one-line cell (nbclient).

Usage (from the kernel's venv, `bash scripts/kernel.sh venv` prints it):
    VENV/bin/python scripts/kernel_timings.py [--kernel dp-mcmc] [--runs 2] [--dir notebooks]

Each run starts a new kernel in --dir (the folder a notebook would be in) and executes the
shipped notebooks' opening cells: the `:dep` line with the prelude (a no-op where the kernel
already loaded the crate), `let quick: bool = quick_mode();`, then a one-line cell. Printed as a
Markdown table: seconds from starting the kernel until it answers (the kernel loads its
configuration, and with it the crate, before it answers), and each cell's time between nbclient's
`iopub.execute_input` and `shell.execute_reply` timestamps. Measurements, never assertions.
"""
import argparse
import time
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

CELLS = [
    ("first: `:dep` + `use dp_mcmc::prelude::*;`",
     ':dep dp-mcmc = { path = "..", default-features = false, features = ["plot"] }\n'
     "use dp_mcmc::prelude::*;"),
    ("second: `let quick: bool = quick_mode();`", "let quick: bool = quick_mode();"),
    ("a one-line cell", "let two = 1 + 1;"),
]


def stamp(cell, key):
    return datetime.fromisoformat(cell.metadata["execution"][key].replace("Z", "+00:00"))


def one_run(kernel, folder):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": kernel, "display_name": kernel, "language": "rust"}
    nb.cells = [nbformat.v4.new_code_cell(src) for _, src in CELLS]
    client = NotebookClient(nb, kernel_name=kernel, timeout=1800, startup_timeout=1800,
                            record_timing=True, resources={"metadata": {"path": str(folder)}})
    start = time.monotonic()
    with client.setup_kernel():
        ready = time.monotonic() - start
        for i, cell in enumerate(nb.cells):
            client.execute_cell(cell, i)
    times = [(stamp(c, "shell.execute_reply") - stamp(c, "iopub.execute_input")).total_seconds()
             for c in nb.cells]
    errors = [o for c in nb.cells for o in c.outputs if o.get("output_type") == "error"]
    if errors:
        raise SystemExit(f"a cell failed: {errors[0].get('ename')}: {errors[0].get('evalue')}")
    return ready, times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernel", default="dp-mcmc")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--dir", default=str(Path(__file__).resolve().parent.parent / "notebooks"))
    args = ap.parse_args()
    runs = [one_run(args.kernel, Path(args.dir)) for _ in range(args.runs)]
    fmt = lambda xs: ", ".join(f"{x:.1f}" for x in xs)
    print(f"| step (kernel `{args.kernel}`, {args.runs} fresh kernels, seconds) | time |")
    print("| --- | --- |")
    print(f"| kernel start, until it answers | {fmt(r[0] for r in runs)} |")
    for k, (label, _) in enumerate(CELLS):
        print(f"| {label} | {fmt(r[1][k] for r in runs)} |")


if __name__ == "__main__":
    main()
