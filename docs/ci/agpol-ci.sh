#!/bin/sh
# agpol in any CI, as a plain shell script: copy it into your repository and run it from
# the repository root. See docs/ci.md; hack/citest runs this file.
#
#   MANIFESTS=deploy REQUESTS=deploy/requests.yaml BASE=origin/main sh agpol-ci.sh
#
# MANIFESTS  the manifest directory (required)
# REQUESTS   a request file to run as a test suite (optional)
# BASE       a commit to compare with: the access diff goes to $OUT/agpol-diff.md (optional)
# FAIL_ON    lint --fail-on: error (default), warning, info or none
# OUT        where the reports go (default: agpol-reports)
#
# It writes agpol.sarif and agpol-lint.xml (lint), agpol-simulate.xml (simulate) and
# agpol-diff.md (diff, failing when access is granted) into $OUT, and exits with agpol's
# exit code: the first non-zero one of lint, simulate and diff (1 findings, failed
# expectations or granted access; 2 unreadable input).
set -u
if [ -z "${MANIFESTS:-}" ]; then
	echo "agpol-ci.sh: set MANIFESTS to the manifest directory" >&2
	exit 2
fi
OUT="${OUT:-agpol-reports}"
FAIL_ON="${FAIL_ON:-error}"
mkdir -p "$OUT"

if ! command -v agpol >/dev/null 2>&1; then
	go install "github.com/agpol/agpol/cmd/agpol@${AGPOL_VERSION:-latest}" || exit 2
	PATH="$(go env GOPATH)/bin:$PATH"
fi

status=0
keep() { # the first non-zero exit code wins
	if [ "$status" -eq 0 ]; then status=$1; fi
}

rc=0
agpol lint -f "$MANIFESTS" -R --fail-on "$FAIL_ON" || rc=$?
if [ "$rc" -ne 2 ]; then
	agpol lint -f "$MANIFESTS" -R --fail-on "$FAIL_ON" -o sarif >"$OUT/agpol.sarif"
	agpol lint -f "$MANIFESTS" -R --fail-on "$FAIL_ON" -o junit >"$OUT/agpol-lint.xml"
fi
keep "$rc"

if [ -n "${REQUESTS:-}" ]; then
	rc=0
	agpol simulate -f "$MANIFESTS" -R --requests "$REQUESTS" -o junit >"$OUT/agpol-simulate.xml" || rc=$?
	keep "$rc"
fi

if [ -n "${BASE:-}" ]; then
	base="$(mktemp -d)/base"
	if git worktree add --detach "$base" "$BASE"; then
		mkdir -p "$base/$MANIFESTS"
		rc=0
		agpol diff --before "$base/$MANIFESTS" --after "$MANIFESTS" -o markdown \
			--fail-on granted >"$OUT/agpol-diff.md" || rc=$?
		cat "$OUT/agpol-diff.md"
		git worktree remove --force "$base"
		keep "$rc"
	else
		echo "agpol-ci.sh: cannot check out $BASE" >&2
		keep 2
	fi
fi

exit "$status"
