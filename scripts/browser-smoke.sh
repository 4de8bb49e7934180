#!/usr/bin/env bash
# Browser smoke test of the dp-mcmc kernel: JupyterLab headless, a notebook opened in headless
# Chromium with the `dp-mcmc` kernel, one cell run and its output read (scripts/browser_smoke.py).
#
#   bash scripts/browser-smoke.sh
#
# Needs the kernel (`bash scripts/kernel.sh install`, run here if it is not current), a Chromium
# (CHROMIUM, else /usr/bin/chromium; installed with apt-get, Debian's package `chromium`, when
# missing and this runs as root) and Playwright's Python package (pinned, installed into the
# kernel's venv; it drives the system Chromium, so no browser download). The page's screenshot
# goes to out/browser-smoke.png.
set -euo pipefail
cd "$(dirname "$0")/.."

PLAYWRIGHT_VERSION=1.65.2

chromium="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
    echo "== installing Debian's chromium (apt-get)"
    apt-get update -qq > /dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium > /dev/null
  else
    echo "browser-smoke.sh: no Chromium at $chromium: install it (Debian: apt-get install chromium)" >&2
    echo "or set CHROMIUM to a Chromium or Chrome binary" >&2
    exit 1
  fi
fi

bash scripts/kernel.sh install
venv="$(bash scripts/kernel.sh venv)"
if ! "$venv/bin/pip" freeze 2>/dev/null | grep -qix "playwright==$PLAYWRIGHT_VERSION"; then
  echo "== installing Playwright $PLAYWRIGHT_VERSION into $venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "playwright==$PLAYWRIGHT_VERSION"
fi
mkdir -p out
"$venv/bin/python" scripts/browser_smoke.py "$venv/bin/jupyter" "$chromium" out/browser-smoke.png
