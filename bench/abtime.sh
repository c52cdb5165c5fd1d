#!/usr/bin/env bash
# bench/abtime.sh times a decision benchmark for two revisions, alternately: REV's test
# binary, then this checkout's, RUNS times, each run a fresh process; then the median
# and range of each side and their ratio. On a shared machine the same code times 2-3x
# apart from one hour to the next; run in turn, both sides see the same hours, so their
# ratio holds where a figure taken alone does not. bench/cachesim.sh counts the same loop.
#
#   BASE=HEAD~3 bench/abtime.sh                        # BenchmarkDecideBatch/large, 6 runs each
#   BASE=ffe2bda BENCH=SimulateText SIZE=medium RUNS=4 bench/abtime.sh
#
# Environment: BASE (required: the revision to compare; built from a git worktree with
# this checkout's internal/explain/scale_bench_test.go), BENCH (DecideBatch; any
# benchmark of internal/explain/scale_bench_test.go), SIZE (large), RUNS (6), BENCHTIME
# (1s), OUT (its folder, default bench/out/abtime).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo="$(pwd)"
export GOTOOLCHAIN=local
bench="${BENCH:-DecideBatch}"
size="${SIZE:-large}"
runs="${RUNS:-6}"
benchtime="${BENCHTIME:-1s}"
out="$(realpath -m "${OUT:-$repo/bench/out/abtime}")" # absolute: the base is built in a worktree
[[ -n "${BASE:-}" ]] || { echo "abtime: BASE=REV is required (the revision to compare with)" >&2; exit 2; }
mkdir -p "$out"
. bench/lib.sh
log() { printf 'abtime: %s\n' "$*" >&2; }

ensure_topology "$size"
rev="$(git rev-parse --short "$BASE")"
log "building $rev and this checkout"
build_base "$rev" "$out/base.test"
build_explain "$repo" "$out/new.test"

nsop() { # nsop BINARY: ns/op of one run
	AGPOL_BENCH_LARGE=$([[ "$size" == large ]] && echo 1 || echo 0) "$1" -test.run '^$' \
		-test.bench "Benchmark$bench/$size\$" -test.cpu 1 -test.benchtime "$benchtime" 2>&1 |
		awk '/^Benchmark/ { print $3; found = 1 } END { if (!found) exit 1 }'
}
base=() this=()
for i in $(seq "$runs"); do
	base+=("$(nsop "$out/base.test")") || { echo "abtime: the benchmark did not run on $rev" >&2; exit 1; }
	this+=("$(nsop "$out/new.test")") || { echo "abtime: the benchmark did not run on this checkout" >&2; exit 1; }
	log "run $i: $rev ${base[-1]} ns/op, this checkout ${this[-1]} ns/op"
done
bm="$(printf '%s\n' "${base[@]}" | median)" tm="$(printf '%s\n' "${this[@]}" | median)"
echo "Benchmark$bench/$size, $runs runs each, alternately ($benchtime each, -cpu 1), ns/op:"
printf '%-16s median %8.0f  (%s)\n' "$rev" "$bm" "$(printf '%s\n' "${base[@]}" | range)" \
	"this checkout" "$tm" "$(printf '%s\n' "${this[@]}" | range)"
awk -v b="$bm" -v t="$tm" 'BEGIN { printf "this / base: %.3f of the time (%.2fx as fast)\n", t / b, b / t }'
