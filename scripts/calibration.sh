#!/usr/bin/env bash
# Simulation-based calibration of the noise-aware method (docs/NOISE-AWARE.md, "Calibration"):
# every fit model × n ∈ {1e3, 1e4, 1e5} × d ∈ {2, 5, 10} × ε ∈ {0.5, 1, 2, 4, 8}, at least 200
# intervals per cell. Release build; progress on stderr; resumable (finished cells are kept in
# OUT/rows.csv and skipped). Writes OUT/table.md and OUT/ranks.svg.
#   bash scripts/calibration.sh [OUT] [--quick]     (default OUT: docs/calibration)
set -euo pipefail
cd "$(dirname "$0")/.."
out=docs/calibration
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then
  out="$1"
  shift
fi
cargo run --release --locked --example calibration -- "$out" "$@"
