#!/usr/bin/env bash
# Benchmark of `dp-mcmc fit --method noise-aware` on public tables the crate does not ship
# (ISLP's Default, Bikeshare and Wage), against the non-private posterior of the same model and
# prior and the one-release floor (scripts/foreign_data.py says what is measured). Run by hand:
# never in `cargo test` or CI. Needs network (pip) on the first run; later runs reuse OUT.
#
#   bash scripts/foreign-data.sh [OUT] [--quick] [--runs R] [--tables T,...] [--bin PATH]
#
#   OUT        work folder (default $HOME/.cache/dp-mcmc-foreign, outside the repository):
#              OUT/venv (numpy, scipy pinned), OUT/dl (the ISLP wheel), OUT/islp and
#              OUT/tables (the CSVs), OUT/runs (one folder per fit), OUT/table.md and
#              OUT/results.json. The table is copied into the docs by hand.
#   --quick    ε = 8 only, 2 runs per table (default: ε ∈ {1, 8}, 5 runs)
#   --runs R   runs per (table, ε)
#   --tables T comma-separated tables to run (default: all; names in foreign_data.py, TABLES)
#   --bin PATH the dp-mcmc binary (default ${CARGO_TARGET_DIR:-$HOME/.cache/dp-mcmc-target}/
#              release/dp-mcmc); it is never built here.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

NUMPY=numpy==2.1.3
SCIPY=scipy==1.14.1
ISLP=ISLP==0.6.0

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }

out=""
quick=()
runs=()
tables=()
bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=(--quick) ;;
    --runs)
      [ $# -ge 2 ] || { echo "--runs needs a number" >&2; exit 2; }
      runs=(--runs "$2"); shift ;;
    --tables)
      [ $# -ge 2 ] || { echo "--tables needs a list" >&2; exit 2; }
      tables=(--tables "$2"); shift ;;
    --bin)
      [ $# -ge 2 ] || { echo "--bin needs a path" >&2; exit 2; }
      bin="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    --*) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    *)
      [ -z "$out" ] || { echo "one OUT folder only (got $out and $1)" >&2; exit 2; }
      out="$1" ;;
  esac
  shift
done
out="${out:-$HOME/.cache/dp-mcmc-foreign}"
bin="${bin:-${CARGO_TARGET_DIR:-$HOME/.cache/dp-mcmc-target}/release/dp-mcmc}"

if [ ! -x "$bin" ]; then
  echo "no dp-mcmc binary at $bin; build it first:" >&2
  echo "  cargo build --release --bin dp-mcmc" >&2
  echo "(or pass --bin PATH)" >&2
  exit 1
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# The venv: numpy and scipy pinned; skipped when both are already there at those versions.
py="$out/venv/bin/python"
want="${NUMPY#numpy==} ${SCIPY#scipy==}"
have="$("$py" -c 'import numpy, scipy; print(numpy.__version__, scipy.__version__)' 2>/dev/null || true)"
if [ "$have" != "$want" ]; then
  echo "creating $out/venv ($NUMPY, $SCIPY)" >&2
  [ -x "$py" ] || python3 -m venv "$out/venv"
  "$py" -m pip install --quiet --disable-pip-version-check "$NUMPY" "$SCIPY"
fi

# ISLP's data without ISLP itself (its dependencies are heavy): the wheel only, unpacked by
# foreign_data.py with zipfile.
if ! ls "$out"/dl/[Ii][Ss][Ll][Pp]-0.6.0-*.whl >/dev/null 2>&1; then
  echo "downloading the $ISLP wheel (no dependencies) into $out/dl" >&2
  "$py" -m pip download --quiet --disable-pip-version-check "$ISLP" --no-deps -d "$out/dl"
fi
wheel="$(ls "$out"/dl/[Ii][Ss][Ll][Pp]-0.6.0-*.whl | head -n 1)"

exec "$py" "$here/foreign_data.py" --out "$out" --bin "$bin" --wheel "$wheel" \
  "${quick[@]}" "${runs[@]}" "${tables[@]}"
