#!/usr/bin/env bash
# Execute every notebooks/*.ipynb headless in the evcxr Rust kernel and check the outputs.
#
#   bash scripts/notebooks.sh                 # all notebooks (quick grids unless DP_MCMC_QUICK=0)
#   bash scripts/notebooks.sh quickstart      # only notebooks/quickstart.ipynb
#
# Installs what it needs when missing: evcxr_jupyter (pinned, --locked; ~17 min once) and a
# Python venv with nbclient (kept in $HOME/.cache/dp-mcmc-venv so CI reuses it). Executed
# copies go to out/ (git-ignored; several MB each because plotly.js is inlined). The kernel
# compiles the crate at opt-level 0 (notebooks/evcxr.toml) and caches compiled dependencies
# (notebooks/.evcxr/init.evcxr: `:cache 4000`, ~1 GB in ~/.cache/evcxr). DP_MCMC_QUICK is
# passed through to the kernel; the notebooks read it to size their grids.
set -euo pipefail
cd "$(dirname "$0")/.."

EVCXR_VERSION=0.22.0
NBCLIENT_VERSION=0.11.0
VENV="${DP_MCMC_VENV:-$HOME/.cache/dp-mcmc-venv}"

if ! cargo install --list | grep -q "^evcxr_jupyter v${EVCXR_VERSION}:"; then
  echo "== installing evcxr_jupyter ${EVCXR_VERSION} (one-off, ~17 min on 2 cores)"
  cargo install evcxr_jupyter --locked --version "$EVCXR_VERSION"
fi
evcxr_jupyter --install >/dev/null

if [ ! -x "$VENV/bin/jupyter-execute" ]; then
  echo "== creating the notebook executor venv in $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --no-cache-dir "nbclient==${NBCLIENT_VERSION}"
fi

# Kernel configuration: init.evcxr (`:cache`) from here; evcxr.toml (opt_level "0") is read
# from the kernel's working directory, the notebook's folder.
export EVCXR_CONFIG_DIR="$PWD/notebooks/.evcxr"
export DP_MCMC_QUICK="${DP_MCMC_QUICK:-1}"
# evcxr builds in its own folder; a CARGO_TARGET_DIR meant for the crate must not leak in.
unset CARGO_TARGET_DIR

mkdir -p out
if [ "$#" -gt 0 ]; then
  notebooks=()
  for name in "$@"; do notebooks+=("notebooks/${name%.ipynb}.ipynb"); done
else
  notebooks=(notebooks/*.ipynb)
fi

outputs=()
for nb in "${notebooks[@]}"; do
  name="$(basename "$nb" .ipynb)"
  out="out/$name.ipynb"
  rm -f "$out"
  outputs+=("$out")
  echo "== executing $nb (DP_MCMC_QUICK=$DP_MCMC_QUICK)"
  start=$(date +%s)
  # --allow-errors: the notebook is written even when a cell fails; check_outputs.py reports it.
  if ! "$VENV/bin/jupyter" execute --allow-errors --timeout=1800 --startup_timeout=120 \
      --output="../out/$name" "$nb"; then
    echo "!! $nb: the executor failed (kernel died or timed out)"
  fi
  size=$(du -h "$out" 2>/dev/null | cut -f1 || true)
  echo "== $nb: $(( $(date +%s) - start )) s, ${size:-no output}"
done

"$VENV/bin/python" scripts/check_outputs.py "${outputs[@]}"
