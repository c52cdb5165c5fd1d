# bench/lib.sh: what bench/run.sh, bench/cachesim.sh and bench/abtime.sh share. Source
# it from the repository's root, with $out set to the script's folder.

# median: the median of the numbers on stdin, one per line.
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%s", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# range: "lowest-highest" of the numbers on stdin, one per line, rounded.
range() {
	sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%.0f-%.0f", lo, hi }'
}

# build_explain DIR BINARY: the explain test binary of the checkout in DIR.
build_explain() {
	(cd "$1" && go test -c -o "$2" ./internal/explain)
}

# build_base REV BINARY: the explain test binary of revision REV, built in a git
# worktree under $out with this checkout's internal/explain/scale_bench_test.go (whose
# benchmarks the scripts run); the worktree is removed when the script exits.
build_base() {
	local wt="$out/base-tree"
	git worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
	git worktree add -q --detach "$wt" "$1"
	trap 'git worktree remove --force "'"$wt"'" 2>/dev/null || true' EXIT
	cp internal/explain/scale_bench_test.go "$wt/internal/explain/"
	build_explain "$wt" "$2"
}

# ensure_topology SIZE: the generated topology and request file of a size, in bench/out
# (generated again, whole, when its request file is missing).
ensure_topology() {
	if [[ ! -f bench/out/topo/requests-$1.yaml ]]; then
		rm -rf "bench/out/topo/$1"
		go run ./hack/gen -size "$1" -seed 1 -out "bench/out/topo/$1" -requests 2000 \
			-requests-file "bench/out/topo/requests-$1.yaml" >&2
	fi
}
