#!/usr/bin/env bash
# ensure.sh builds the kube-apiserver and etcd binaries agpol's live tests run against
# (versions pinned in hack/testenv/go.mod) into <repo>/bin, unless they are already there
# for the same pins and Go version. It prints that directory on stdout, for
# KUBEBUILDER_ASSETS:
#
#   KUBEBUILDER_ASSETS="$(hack/testenv/ensure.sh)" go test ./...
#
# Only the Go module proxy is needed. The first kube-apiserver build takes several minutes
# on two cores; later runs return at once. Progress goes to stderr.
# AGPOL_TESTENV_BIN overrides the output directory.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="${AGPOL_TESTENV_BIN:-$repo/bin}"
export GOTOOLCHAIN=local

log() { printf 'testenv: %s\n' "$*" >&2; }

mkdir -p "$bin"
bin="$(cd "$bin" && pwd)"

# One build at a time when several callers start together.
if command -v flock >/dev/null 2>&1; then
	exec 9>"$bin/.testenv.lock"
	flock 9
fi

# The stamp changes when the pins (go.mod, go.sum), this script or the Go version change.
want="$(cat "$here/go.mod" "$here/go.sum" "$here/ensure.sh" <(go version) | sha256sum | cut -d' ' -f1)"
stamp="$bin/.testenv-stamp"
if [[ -x "$bin/kube-apiserver" && -x "$bin/etcd" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
	echo "$bin"
	exit 0
fi

cd "$here"
k8s_version="$(go list -m -f '{{.Version}}' k8s.io/kubernetes)"
etcd_version="$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)"
minor="${k8s_version#v1.}"
minor="${minor%%.*}"

build() { # name package [go build flags...]
	local name="$1" pkg="$2" start
	shift 2
	start=$(date +%s)
	log "building $name from $pkg (this can take minutes the first time)"
	go build "$@" -o "$bin/.$name.tmp" "$pkg"
	mv -f "$bin/.$name.tmp" "$bin/$name"
	log "built $bin/$name in $(($(date +%s) - start))s"
}

rm -f "$stamp"
build etcd go.etcd.io/etcd/server/v3
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver -ldflags "\
 -X k8s.io/component-base/version.gitVersion=$k8s_version\
 -X k8s.io/component-base/version.gitMajor=1\
 -X k8s.io/component-base/version.gitMinor=$minor\
 -X k8s.io/component-base/version.gitTreeState=clean"
echo "$want" >"$stamp"
log "kube-apiserver $k8s_version and etcd $etcd_version are in $bin"
echo "$bin"
