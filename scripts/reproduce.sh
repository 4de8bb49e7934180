#!/usr/bin/env bash
# Main job: reproduce the thesis' Chapter 6 analyses with the release CLI.
#
#   bash scripts/reproduce.sh            # full grids (resumes where a previous run stopped)
#   bash scripts/reproduce.sh --quick    # quick grids, ~20 s, into data/results/quick
#   bash scripts/reproduce.sh --fresh    # recompute every task (the committed tables hold them all,
#                                        # so a plain rerun only reports them as finished)
#
# Writes CSV tables to data/results/ and offline HTML figures to data/results/figures/, printing
# a JSON summary at the end. The full grid (20 chains per box, as the thesis) takes ~25 min on 2 cores
# (see docs/REPRODUCTION.md for measured times); an interrupted run loses no finished chain.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release --locked --bin dp-mcmc -- reproduce all --out data/results "$@"
