#!/usr/bin/env bash
# Certified PLD (this crate) vs Google's dp_accounting PLD accountant, side by side.
#
#   bash scripts/bench-pld.sh            # median of 3 runs per workload on each side
#   RUNS=5 bash scripts/bench-pld.sh
#   OURS_RUNS=1 bash scripts/bench-pld.sh   # fewer runs of our side only (slow engine)
#
# Workloads (scripts/bench_dp_accounting.py, benches/certified_pld.rs): (a) 10 000
# self-compositions of the Poisson-subsampled Gaussian (sigma 1, q 0.01); (b) 100 different
# Poisson-subsampled Gaussians (sigma_i = 0.8 + 0.01 i, q 0.01); queries eps(delta = 1e-5) and
# delta(eps = 1). dp_accounting runs at value_discretization_interval 1e-4 and 1e-5 on (a) and
# 1e-4 on (b); ours at the default tolerance (1e-3) and, on (a), at a tolerance computed from
# dp_accounting's 1e-5 answers so that our interval is no wider.
#
# Needs python3.11 (PYTHON=... to choose another interpreter) and network access for pip the
# first time. The dp_accounting side runs in a throw-away venv ($PLD_BENCH_VENV, default
# ${TMPDIR:-/tmp}/dp-mcmc-bench-venv; delete it when done). Our side is the release-built bench
# binary `cargo bench --bench accounting -- pld --json`. Not part of CI or `cargo test`: it
# takes minutes and installs packages. CARGO_LOCK="flock /tmp/x.lock" prefixes the one cargo
# command (the build) when builds must be serialised; the timed runs are outside it.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS="${RUNS:-3}"
OURS_RUNS="${OURS_RUNS:-$RUNS}"
PYTHON="${PYTHON:-python3.11}"
VENV="${PLD_BENCH_VENV:-${TMPDIR:-/tmp}/dp-mcmc-bench-venv}"
# dp-accounting 0.6.0 and the versions pip resolved for it on CPython 3.11 (2026-11).
PINS=(dp-accounting==0.6.0 numpy==2.4.6 scipy==1.17.1 absl-py==2.5.1 attrs==23.2.0
  dm-tree==0.1.10 mpmath==1.4.1 wrapt==2.5.2)

if [ ! -x "$VENV/bin/python" ]; then
  echo "== creating the venv $VENV ($PYTHON)" >&2
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/pip" install -q --disable-pip-version-check "${PINS[@]}"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/dp-mcmc-bench-pld.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

echo "== dp_accounting (median of $RUNS runs; pessimistic and optimistic PLD each)" >&2
"$VENV/bin/python" scripts/bench_dp_accounting.py --runs "$RUNS" | tee "$WORK/dp.jsonl" >&2

# Our tolerance such that our interval is no wider than dp_accounting's at 1e-5 on (a):
# 0.9 x the smallest width/upper of its two answers (the accountant stops once
# width <= tolerance x upper).
MATCHED="$("$VENV/bin/python" - "$WORK/dp.jsonl" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
r = min((r for r in rows if r["workload"] == "poisson_gaussian_x10000"),
        key=lambda r: r["value_discretization_interval"])
print("%.3g" % (0.9 * min((r[q]["upper"] - r[q]["lower"]) / r[q]["upper"]
                          for q in ("epsilon", "delta"))))
EOF
)"

echo "== building the accounting bench (release)" >&2
# shellcheck disable=SC2086 # CARGO_LOCK is a command prefix, split on purpose
EXE="$(${CARGO_LOCK:-} cargo bench --bench accounting --no-run --message-format=json \
  | "$VENV/bin/python" -c 'import json, sys
for m in map(json.loads, sys.stdin):
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "accounting":
        print(m["executable"])')"
cp "$EXE" "$WORK/accounting"

echo "== certified PLD (median of $OURS_RUNS runs; matched tolerance $MATCHED)" >&2
"$WORK/accounting" pld --json --runs "$OURS_RUNS" --tolerance-matched "$MATCHED" \
  | tee "$WORK/ours.jsonl" >&2

echo
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "dp_accounting $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("dp-accounting"))'), median of $RUNS runs (dp_accounting) and $OURS_RUNS (ours)"
echo
"$VENV/bin/python" scripts/bench_pld_table.py "$WORK/dp.jsonl" "$WORK/ours.jsonl"
