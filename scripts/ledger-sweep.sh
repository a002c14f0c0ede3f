#!/usr/bin/env bash
# The exhaustive sweeps into verification/ledger.tsv, cheapest first: every 8- and 16-bit
# source on each flag set and tier (seconds each), then the 64-bit sources on their seed budget
# into verification/ledger-64.tsv (`--wide`: 2 to 6 minutes per flag set and tier on two cores),
# then the 32-bit sources (17 to 47 minutes per flag set and tier on two cores, measured for the
# runs another flag set had not covered). Resumable: every command skips the runs
# whose machine code its ledger already proves, and the ledger is appended after each group.
# Runs at the lowest priority.
#
#   scripts/ledger-sweep.sh [CLCONV] [FLAGS...]     # default: target/release/clconv; sse2 sse4.1 avx2
#
# Give CLCONV as a copy of the release binary when the checkout may change during the sweep.
# Flag sets this CPU lacks are refused by the JIT: sweep those on a machine that has them.
set -euo pipefail
cd "$(dirname "$0")/.."
clconv=${1:-target/release/clconv}
shift || true
flags=("$@")
[ ${#flags[@]} -gt 0 ] || flags=(sse2 sse4.1 avx2)
ledger=verification/ledger.tsv
# Status 1 (a run failed: the ledger has its FAIL line) goes on to the next sweep; 2 stops.
sweep() {
    local into=$1
    shift
    nice -n 19 "$clconv" check --exhaustive "$@" --ledger "$into" || [ $? -eq 1 ]
}
for f in "${flags[@]}"; do
    for t in quick optimised; do
        for src in '(char' '(uchar' '(short' '(ushort' '(half'; do
            sweep "$ledger" "$src" --flags "$f" --tier "$t"
        done
    done
done
for f in "${flags[@]}"; do
    for t in quick optimised; do
        sweep verification/ledger-64.tsv --wide --flags "$f" --tier "$t"
    done
done
for f in "${flags[@]}"; do
    for t in quick optimised; do
        sweep "$ledger" --flags "$f" --tier "$t"
    done
done
