#!/usr/bin/env bash
# Execute notebooks/*.ipynb headless in the project's `dp-mcmc` Jupyter kernel (the kernelspec the
# notebooks name), check the outputs, and check that the outputs committed with each notebook
# are current.
#
#   bash scripts/notebooks.sh                        # all notebooks (quick grids unless DP_MCMC_QUICK=0)
#   bash scripts/notebooks.sh quickstart             # only notebooks/quickstart.ipynb
#   bash scripts/notebooks.sh --update [quickstart]  # the same, then write stale outputs into notebooks/
#
# Installs the kernel when missing (`bash scripts/kernel.sh install`: evcxr_jupyter pinned, ~17
# min once, and a venv with JupyterLab and nbclient); with --update also the chart renderer in
# that venv (kaleido, whose wheel bundles a Chromium, and pillow; pinned, ~225 MB, seconds). Executed copies go to out/ (git-ignored; several MB each because
# plotly.js is inlined) and scripts/check_outputs.py checks them.
#
# notebooks/*.ipynb are committed with the outputs of a quick-mode run, charts as figure + PNG
# (scripts/notebook_outputs.py). Each executed notebook is then compared with its committed
# version (`notebook_outputs.py check`, run-to-run noise such as timings masked). Without
# --update a stale one fails the script; with --update (quick mode only) each stale
# notebooks/NAME.ipynb is rewritten from out/NAME.ipynb (`notebook_outputs.py finalize`), and
# notebooks whose outputs match are left untouched, so their timings do not churn; the README's
# headline figures are then copied from them into docs/figures/. The executed
# input thus holds outputs: nbclient replaces the outputs and counts of every cell it executes,
# and check_outputs.py fails a cell that this run did not execute.
#
# The kernel compiles dependencies at opt-level 0 except those the crate's dev profile optimises,
# and dp-mcmc at its dev level 1 (the cargo configuration in the kernel's TMPDIR, from
# scripts/kernel_cargo_config.py), and caches every compiled crate, dp-mcmc once per source
# version (`:cache 4000`, ~1.5 GB in ~/.cache/evcxr): scripts/kernel.sh.
# DP_MCMC_QUICK is passed through to the kernel; the notebooks read it to size their grids.
set -euo pipefail
cd "$(dirname "$0")/.."

KALEIDO_VERSION=0.2.1   # its Chromium draws the PNGs offline, with the plotly.js the notebook inlined
PILLOW_VERSION=13.0.0   # reduces them to a 256-colour palette

update=0
names=()
for arg in "$@"; do
  case "$arg" in
    --update) update=1 ;;
    -*) echo "unknown option: $arg (usage: bash scripts/notebooks.sh [--update] [NAME...])" >&2; exit 2 ;;
    *) names+=("$arg") ;;
  esac
done
if [ "$update" = 1 ] && [ "${DP_MCMC_QUICK:-1}" != 1 ]; then
  echo "!! --update writes the committed outputs, which come from quick mode: unset DP_MCMC_QUICK" >&2
  exit 2
fi

bash scripts/kernel.sh install
VENV="$(bash scripts/kernel.sh venv)"
if [ "$update" = 1 ]; then
  installed="$("$VENV/bin/pip" freeze 2>/dev/null)"
  if ! grep -qix "kaleido==${KALEIDO_VERSION}" <<<"$installed" || ! grep -qix "pillow==${PILLOW_VERSION}" <<<"$installed"; then
    echo "== installing the chart renderer into $VENV (kaleido ${KALEIDO_VERSION}, pillow ${PILLOW_VERSION})"
    "$VENV/bin/pip" install -q --no-cache-dir "kaleido==${KALEIDO_VERSION}" "pillow==${PILLOW_VERSION}"
  fi
fi

# The kernel's own settings (EVCXR_CONFIG_DIR, TMPDIR) are in its kernel.json; evcxr.toml
# (opt_level "0") is read from the kernel's working directory, the notebook's folder.
export DP_MCMC_QUICK="${DP_MCMC_QUICK:-1}"
# evcxr builds in its own folder; a CARGO_TARGET_DIR meant for the crate must not leak in.
unset CARGO_TARGET_DIR

mkdir -p out
if [ "${#names[@]}" -gt 0 ]; then
  notebooks=()
  for name in "${names[@]}"; do notebooks+=("notebooks/${name%.ipynb}.ipynb"); done
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
  if ! "$VENV/bin/jupyter" execute --allow-errors --timeout=1800 --startup_timeout=1800 \
      --output="../out/$name" "$nb"; then
    echo "!! $nb: the executor failed (kernel died or timed out)"
  fi
  size=$(du -h "$out" 2>/dev/null | cut -f1 || true)
  echo "== $nb: $(( $(date +%s) - start )) s, ${size:-no output}"
done

"$VENV/bin/python" scripts/check_outputs.py "${outputs[@]}"

stale=()
for out in "${outputs[@]}"; do
  nb="notebooks/$(basename "$out")"
  if [ "$update" = 0 ]; then
    "$VENV/bin/python" scripts/notebook_outputs.py check "$out" "$nb" || stale+=("$nb")
  elif "$VENV/bin/python" scripts/notebook_outputs.py check "$out" "$nb" >/dev/null; then
    echo "== $nb: committed outputs are current, left as they are"
  else
    "$VENV/bin/python" scripts/notebook_outputs.py finalize "$out" "$nb"
  fi
done
if [ "$update" = 1 ]; then
  # The README's headline figures and REPRODUCTION's (docs/figures/), from the committed
  # notebooks: same pipeline.
  headline() {  # NOTEBOOK TITLE_SUBSTRING CELL FIGURE
    case " ${outputs[*]} " in *" out/$1.ipynb "*) ;; *) return 0 ;; esac
    "$VENV/bin/python" scripts/notebook_outputs.py extract-png "notebooks/$1.ipynb" "$2" \
      "docs/figures/$4.png" --cell "$3"
  }
  mkdir -p docs/figures
  headline accounting-comparison "Maximum iterations" 9 figure-6-1
  headline algorithm-comparison "Fig 6.3" 10 figure-6-3
  headline your-data "Posterior means" 15 your-data-intervals
  headline clipping-study "Fig 6.2" 9 figure-6-2   # docs/REPRODUCTION.md beside the thesis' values
fi
if [ "${#stale[@]}" -gt 0 ]; then
  echo "!! stale committed outputs: ${stale[*]}"
  echo "run: bash scripts/notebooks.sh --update"
  exit 1
fi
