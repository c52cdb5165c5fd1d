#!/usr/bin/env bash
# bench/cachesim.sh counts what deciding a request costs, with valgrind's callgrind:
# instructions, L1 data misses and last-level (LL) misses of a simulated cache, per
# request of the timed loop of BenchmarkDecideBatch (routing, chain lookup and the
# untraced decision of each backend choice), and of nothing else (--toggle-collect).
#
# Timings on a shared machine swing by 2-3x between runs of the same code (the decision
# loop reads whatever of the topology other work on the host left in the shared L3);
# these counts do not depend on the load: the same binary's figures vary by about 2%
# from run to run (hash seeds and addresses are random per process), so two revisions
# can be compared where timings cannot. A count is not a time: a miss to memory costs far
# more than an instruction. Read them together, and time with bench/run.sh.
#
#   bench/cachesim.sh                 # this checkout, medium topology
#   BASE=HEAD~3 bench/cachesim.sh     # also REV, and the ratio new/base
#
# Environment: OUT (its folder, default bench/out/cachesim), SIZE (medium; large takes
# 25 minutes under valgrind, both sides), N (requests
# counted, default 20000), LL (simulated last-level cache in bytes, default 2097152: the
# share of a busy 32 MB L3 that a medium topology's working set competes for), BASE (a
# revision to compare: built from a git worktree with this checkout's
# internal/explain/scale_bench_test.go, which has the loop callgrind counts).
# Needs valgrind (Debian package valgrind).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo="$(pwd)"
export GOTOOLCHAIN=local
size="${SIZE:-medium}"
n="${N:-20000}"
ll="${LL:-2097152}"
out="$(realpath -m "${OUT:-$repo/bench/out/cachesim}")" # absolute: the base is built in a worktree
mkdir -p "$out"

command -v valgrind >/dev/null || { echo "cachesim: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
. bench/lib.sh

count() { # count BINARY NAME: prints "name instructions l1_misses ll_misses" per request
	local bin="$1" name="$2" log="$out/$2.log"
	# Go's asynchronous preemption signals trip callgrind; the loop does not need them.
	GODEBUG=asyncpreemptoff=1 AGPOL_BENCH_LARGE=$([[ "$size" == large ]] && echo 1 || echo 0) \
		valgrind --tool=callgrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL="$ll,16,64" \
		--toggle-collect='*explain.batchLoop' --callgrind-out-file="$out/$name.callgrind" \
		"$bin" -test.run '^$' -test.bench "BenchmarkDecideBatch/$size\$" -test.cpu 1 -test.benchtime "${n}x" >"$log" 2>&1 ||
		{ echo "cachesim: callgrind failed, see $log" >&2; exit 1; }
	grep -q "^BenchmarkDecideBatch/$size" "$log" || { echo "cachesim: the benchmark did not run, see $log" >&2; exit 1; }
	# The summary counts only the collected loop. testing runs it for b.N=1, then b.N=N.
	awk -v name="$name" -v reqs="$((n + 1))" '
		function num(s) { gsub(/,/, "", s); return s + 0 }
		/== I +refs:/ { ir = num($4) }
		/== D1 +misses:/ { d1 = num($4) }
		/== LLd misses:/ { ll = num($4) }
		END { printf "%s %.0f %.1f %.2f\n", name, ir / reqs, d1 / reqs, ll / reqs }' "$log"
}

log() { printf 'cachesim: %s\n' "$*" >&2; }

ensure_topology "$size"

log "building this checkout"
build_explain "$repo" "$out/new.test"
rows=()
if [[ -n "${BASE:-}" ]]; then
	rev="$(git rev-parse --short "$BASE")"
	log "building $rev"
	build_base "$rev" "$out/base.test"
	log "counting $rev ($size, $n requests, LL $ll bytes)"
	rows+=("$(count "$out/base.test" "base-$rev")")
fi
log "counting this checkout ($size, $n requests, LL $ll bytes)"
rows+=("$(count "$out/new.test" "this")")

echo "per request of BenchmarkDecideBatch/$size (callgrind, L1d 32 KB, LL $ll bytes, $n requests):"
printf '%-14s %14s %14s %14s\n' "" instructions "L1d misses" "LL misses"
for r in "${rows[@]}"; do
	read -r name ir d1 llm <<<"$r"
	printf '%-14s %14s %14s %14s\n' "$name" "$ir" "$d1" "$llm"
done
if [[ ${#rows[@]} == 2 ]]; then
	read -r _ bi bd bl <<<"${rows[0]}"
	read -r _ ni nd nl <<<"${rows[1]}"
	printf '%-14s %14s %14s %14s\n' "this / base" "$(awk "BEGIN{printf \"%.3f\", $ni/$bi}")" \
		"$(awk "BEGIN{printf \"%.3f\", $nd/$bd}")" "$(awk "BEGIN{printf \"%.3f\", $nl/$bl}")"
fi
