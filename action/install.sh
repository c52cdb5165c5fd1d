#!/usr/bin/env bash
# install.sh installs agpol for the GitHub Action (action.yml) with go install.
#
# AGPOL_VERSION empty builds the action's own commit (GITHUB_ACTION_PATH, or this
# repository); otherwise github.com/agpol/agpol/cmd/agpol@AGPOL_VERSION is installed.
# The binary goes to AGPOL_BIN_DIR (default RUNNER_TEMP/agpol/bin), which is added to
# GITHUB_PATH; its path is the step output "agpol".
set -euo pipefail

src="${GITHUB_ACTION_PATH:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
bin="${AGPOL_BIN_DIR:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/agpol/bin}"
version="${AGPOL_VERSION:-}"

mkdir -p "$bin"
bin="$(cd "$bin" && pwd)"
export GOBIN="$bin"

if [[ -z "$version" ]]; then
	# A tag or branch of the action names its build (agpol version).
	ldflags=""
	if [[ -n "${GITHUB_ACTION_REF:-}" ]]; then
		ldflags="-X github.com/agpol/agpol/internal/version.version=$GITHUB_ACTION_REF"
	fi
	echo "agpol: building the action's own commit (${GITHUB_ACTION_REF:-$src})"
	(cd "$src" && go install -ldflags "$ldflags" ./cmd/agpol)
else
	echo "agpol: installing github.com/agpol/agpol/cmd/agpol@$version"
	go install "github.com/agpol/agpol/cmd/agpol@$version"
fi

"$bin/agpol" version
if [[ -n "${GITHUB_PATH:-}" ]]; then
	echo "$bin" >>"$GITHUB_PATH"
fi
if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
	echo "agpol=$bin/agpol" >>"$GITHUB_OUTPUT"
fi
