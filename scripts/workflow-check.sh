#!/usr/bin/env bash
# CI check of the sharded workflow (workflow/Snakefile) on the quick grid: installs Snakemake
# (workflow/requirements.txt, pinned) into a fresh venv, runs 2 shards + merge + figures
# locally, and checks every table and figure against an unsharded `reproduce all --quick`
# (scripts/compare_results.py: rows equal without the wall_seconds column); then the same
# through the Slurm profile on a one-node Slurm cluster started here (scripts/slurm-local.sh;
# root only, DP_MCMC_SKIP_SLURM=1 skips it).
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

# The same workflow through the Slurm profile (workflow/profiles/slurm, the official executor
# plugin) on a one-node Slurm cluster started here (scripts/slurm-local.sh: needs root and
# apt-get; skipped with a message otherwise, or with DP_MCMC_SKIP_SLURM=1). The profile is used
# as shipped; only its placeholders are overridden, as a user would on their cluster.
if [ "${DP_MCMC_SKIP_SLURM:-0}" = 1 ]; then
  echo "Slurm profile: skipped (DP_MCMC_SKIP_SLURM=1)"
elif partition=$(bash scripts/slurm-local.sh); then
  t=$(date +%s)
  CI=1 "$work/venv/bin/snakemake" -s workflow/Snakefile --directory "$work" --quiet \
    --workflow-profile workflow/profiles/slurm --slurm-status-command squeue \
    --default-resources slurm_account=local "slurm_partition=$partition" runtime=60 mem_mb=2000 \
    --set-threads "shard=$(nproc)" \
    --config quick=true shards=2 out="$work/slurm" bin="$bin"
  echo "workflow through the Slurm profile (2 shards, merge, figures as Slurm jobs): $(( $(date +%s) - t )) s"
  squeue -h -t all -o '%i %j %T %C' | sort -n | tail -n 5
  python3 scripts/compare_results.py "$work/unsharded/quick" "$work/slurm/merged/quick"
else
  code=$?
  if [ "$code" = 3 ]; then
    echo "Slurm profile: SKIPPED (no local Slurm can be started here: see the message above)"
  else
    echo "Slurm profile: the local Slurm cluster did not start (exit $code)" >&2
    exit 1
  fi
fi
echo "workflow check done in $(( $(date +%s) - start )) s"
