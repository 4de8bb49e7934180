#!/usr/bin/env bash
# DP Barker with tighter accountants: the comparison grid's DP Barker boxes
# (easy-2d, easy-10d, tempered-2d, tempered-10d; ε ∈ {1, 2, 4} of the grid's 1..6; 20 chains per box, each chain with its
# own (ε, δ = 0.1/n) as in the thesis) rerun with the same tuned settings but the iteration count
# of another accountant, then summarised beside the committed Theorem 7 and DP penalty boxes.
#
#   bash scripts/barker-accounting-study.sh rdp-exact     # ~25 min on 2 cores
#   bash scripts/barker-accounting-study.sh pld           # ~15 min on 2 cores
#
# The pld counts are long (99 370 iterations at ε = 1, 1.2 million at ε = 4) and the thesis' MMD is
# quadratic in the kept half, so the pld boxes keep every (10·ε²)-th draw (`--thin`): a kept half
# of 4-5 thousand draws, more than any DP penalty box keeps, and an MMD that costs milliseconds
# instead of minutes per chain. Thinning estimates the same MMD with a noise floor of about
# 1/√(kept half) ≈ 0.015, far below the differences the table reports.
#
# Writes data/results/barker-<accountant>.jsonl (one `dp-mcmc sample` JSON object per box) and
# prints the table docs/REPRODUCTION.md quotes.
set -euo pipefail
cd "$(dirname "$0")/.."
acc="${1:?usage: scripts/barker-accounting-study.sh rdp-exact|pld}"
cargo build --release --locked --bin dp-mcmc
bin="${CARGO_TARGET_DIR:-target}/release/dp-mcmc"
out="data/results/barker-$acc.jsonl"
: > "$out"
for exp in easy-2d easy-10d tempered-2d tempered-10d; do
  for eps in 1 2 4; do
    thin=1
    if [ "$acc" = pld ]; then thin=$((10 * eps * eps)); fi
    "$bin" sample --experiment "$exp" --algorithm dp-barker --epsilon "$eps" --chains 20 \
      --per-chain-budget --seed "$eps" --accountant "$acc" --thin "$thin" >> "$out"
    echo "$exp ε=$eps done" >&2
  done
done
python3 scripts/barker_study_table.py "$out"
