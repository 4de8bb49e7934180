#!/usr/bin/env bash
# Main job: reproduce the thesis' Chapter 6 analyses with the release CLI.
#
#   bash scripts/reproduce.sh                 # full grids (resumes where a previous run stopped)
#   bash scripts/reproduce.sh --quick         # quick grids, ~20 s, into data/results/quick
#   bash scripts/reproduce.sh --fresh         # recompute every task (the committed tables hold
#                                             # them all, so a plain rerun only reports them)
#   bash scripts/reproduce.sh --out DIR       # recompute into another folder (resumable there)
#
# Writes CSV tables to data/results/ (or --out) and offline HTML figures to its figures/, printing
# a JSON summary at the end and, on stderr, how many tasks were found finished and how many ran,
# with the wall time the tables' run records (<grid>.runs.json) hold. The full grid (20 chains per
# box, as the thesis) takes ~25 min on 2 cores (see docs/REPRODUCTION.md for measured times); an
# interrupted run loses no finished chain. Sharded runs: docs/REPRODUCTION.md, "Sharded runs".
set -euo pipefail
cd "$(dirname "$0")/.."
out=(--out data/results)
for a in "$@"; do
  case "$a" in --out | --out=*) out=() ;; esac
done
cargo run --release --locked --bin dp-mcmc -- reproduce all ${out[@]+"${out[@]}"} "$@"
