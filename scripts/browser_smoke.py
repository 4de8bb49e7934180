"""The dp-mcmc kernel as a user meets it: JupyterLab started headless, a notebook that names the
`dp-mcmc` kernelspec opened in a real browser (headless Chromium, driven by Playwright), one cell
run by a keystroke and its output read off the page.

    python scripts/browser_smoke.py JUPYTER CHROMIUM [SCREENSHOT]

JUPYTER is the venv's `jupyter` (scripts/kernel.sh venv), CHROMIUM a Chromium binary. The cell
uses the crate (`dp_mcmc::accounting::gaussian_budget`) and the prelude the kernel loads
(`quick_mode`, unqualified); its printed μ, the mean of the Gaussian privacy-loss distribution
N(μ, 2μ) whose δ(ε = 1) is 1e-5, is compared with the same μ computed here independently: the
Gaussian-DP parameter of (ε, δ) (Balle & Wang 2018, Theorem 8, solved by bisection), μ_GDP, gives
μ = μ_GDP² / 2. Run by
scripts/browser-smoke.sh; the screenshot of the page (default out/browser-smoke.png) is written
whether the test passes or not.
"""

import json
import math
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from playwright.sync_api import sync_playwright

CELL = (
    'println!("smoke: mu = {:.6}, quick = {}", '
    "dp_mcmc::accounting::gaussian_budget(1.0, 1e-5).unwrap(), quick_mode());"
)
KERNEL = "dp-mcmc"
DISPLAY_NAME = "Rust (dp-mcmc)"
START_TIMEOUT_S = 120  # JupyterLab's server and the page
CELL_TIMEOUT_S = 900  # a fresh kernel's first cell: seconds warm, minutes when the cache is cold


def phi(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def gdp_mu(epsilon, delta):
    """The μ whose μ-GDP curve passes through (ε, δ): δ(μ) increases in μ."""

    def delta_of(mu):
        return phi(-epsilon / mu + mu / 2) - math.exp(epsilon) * phi(-epsilon / mu - mu / 2)

    lo, hi = 1e-6, 50.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if delta_of(mid) > delta:
            hi = mid
        else:
            lo = mid
    return lo


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_notebook(path):
    cell = {"cell_type": "code", "execution_count": None, "id": "smoke", "metadata": {},
            "outputs": [], "source": [CELL]}
    meta = {"kernelspec": {"name": KERNEL, "display_name": DISPLAY_NAME, "language": "rust"}}
    with open(path, "w") as f:
        json.dump({"cells": [cell], "metadata": meta, "nbformat": 4, "nbformat_minor": 5}, f)


def wait_for_server(url, deadline):
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                return json.load(r)
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"browser smoke: JupyterLab did not answer {url} within {START_TIMEOUT_S} s")


def main():
    if len(sys.argv) not in (3, 4):
        raise SystemExit(__doc__)
    jupyter, chromium = sys.argv[1:3]
    screenshot = sys.argv[3] if len(sys.argv) == 4 else "out/browser-smoke.png"
    os.makedirs(os.path.dirname(os.path.abspath(screenshot)), exist_ok=True)
    work = tempfile.mkdtemp(prefix="dp-mcmc-smoke-")
    write_notebook(os.path.join(work, "smoke.ipynb"))
    port, token = free_port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=os.path.join(work, "settings"),
               JUPYTERLAB_WORKSPACES_DIR=os.path.join(work, "workspaces"))
    env.pop("CARGO_TARGET_DIR", None)
    log = open(os.path.join(work, "jupyterlab.log"), "w")
    server = subprocess.Popen(
        [jupyter, "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--ServerApp.token={token}", f"--ServerApp.root_dir={work}",
         "--ServerApp.allow_root=True"],
        stdout=log, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(f"{base}/api/status?token={token}", time.time() + START_TIMEOUT_S)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, headless=True)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            try:
                started = time.time()
                page.goto(f"{base}/lab/tree/smoke.ipynb?token={token}")
                editor = page.locator(".jp-NotebookPanel .jp-Cell .cm-content").first
                editor.wait_for(timeout=START_TIMEOUT_S * 1000)
                # the status bar says "Rust (dp-mcmc) | Idle" once the kernel has started and
                # answered (about half a minute): a cell run before that is not sent
                idle = re.compile(re.escape(DISPLAY_NAME) + r" \| Idle")
                page.get_by_text(idle).first.wait_for(timeout=CELL_TIMEOUT_S * 1000)
                editor.click()
                page.keyboard.press("Shift+Enter")
                output = page.locator(".jp-NotebookPanel .jp-OutputArea-output").first
                output.wait_for(timeout=CELL_TIMEOUT_S * 1000)
                page.wait_for_function(
                    "() => { const o = document.querySelector('.jp-NotebookPanel "
                    ".jp-OutputArea-output'); return o && /smoke: mu = [0-9.]+, quick = "
                    "(true|false)/.test(o.innerText) || /error/i.test(o.innerText); }",
                    timeout=CELL_TIMEOUT_S * 1000)
                text = output.inner_text()
                elapsed = time.time() - started
            finally:
                page.screenshot(path=screenshot)
                browser.close()
        sessions = json.load(urllib.request.urlopen(f"{base}/api/sessions?token={token}"))
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
        shutil.rmtree(work, ignore_errors=True)
    kernels = [s["kernel"]["name"] for s in sessions]
    if kernels != [KERNEL]:
        raise SystemExit(f"browser smoke: the notebook ran in kernel(s) {kernels}, not {KERNEL}")
    found = re.search(r"smoke: mu = ([0-9.]+), quick = (true|false)", text)
    if not found:
        raise SystemExit(f"browser smoke: the cell's output is not the expected line:\n{text}")
    mu, expected = float(found.group(1)), gdp_mu(1.0, 1e-5) ** 2 / 2
    if abs(mu - expected) > 1e-5:
        raise SystemExit(f"browser smoke: the cell printed mu = {mu}, expected {expected:.6f}")
    print(f"browser smoke: JupyterLab opened smoke.ipynb in the {DISPLAY_NAME} kernel; the cell "
          f"printed mu = {mu:.6f} (expected {expected:.6f}) {elapsed:.1f} s after the page was "
          f"requested; screenshot {screenshot}")


if __name__ == "__main__":
    main()
