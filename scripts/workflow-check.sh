#!/usr/bin/env bash
# CI check of the sharded workflow (workflow/Snakefile) on the quick grid: installs Snakemake
# (workflow/requirements.txt, pinned) into a fresh venv, runs 2 shards + merge + figures
# locally, and checks every table and figure against an unsharded `reproduce all --quick`
# (scripts/compare_results.py: rows equal without the wall_seconds column).
#
#   bash scripts/workflow-check.sh                     # builds the release binary (incremental)
#   DP_MCMC_BIN=path/to/dp-mcmc bash scripts/workflow-check.sh
#
# The quick grid needs the release binary: in the dev profile it takes over 20 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check -r workflow/requirements.txt
echo "venv + Snakemake: $(( $(date +%s) - start )) s"

bin="${DP_MCMC_BIN:-}"
if [ -z "$bin" ]; then
  cargo build --release --locked --bin dp-mcmc
  target=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
  bin="$target/release/dp-mcmc"
fi
bin=$(realpath "$bin")
echo "binary ready: $(( $(date +%s) - start )) s"

t=$(date +%s)
CI=1 "$bin" reproduce all --quick --out "$work/unsharded" > "$work/unsharded.json"
echo "unsharded quick run: $(( $(date +%s) - t )) s"

t=$(date +%s)
CI=1 "$work/venv/bin/snakemake" -s workflow/Snakefile --directory "$work" --cores 2 --quiet \
  --config quick=true shards=2 out="$work/smk" bin="$bin"
echo "workflow (2 shards, merge, figures): $(( $(date +%s) - t )) s"

python3 scripts/compare_results.py "$work/unsharded/quick" "$work/smk/merged/quick"
echo "workflow check done in $(( $(date +%s) - start )) s"
