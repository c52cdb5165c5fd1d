#!/usr/bin/env bash
# install-tools.sh installs the tools hack/citest runs besides Go and git: pre-commit
# (from Debian's apt, since PyPI may be unreachable) and jq. It installs only what is
# missing, and only as root with apt-get. Elsewhere it names what is missing: the tests
# that need it skip, except under CI=true, where they fail (and so does this script).
set -euo pipefail

missing=()
for tool in pre-commit jq; do
	command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if ((${#missing[@]} == 0)); then
	exit 0
fi

if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
	echo "citest: installing ${missing[*]} with apt-get" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${missing[@]}" >/dev/null
	exit 0
fi

echo "citest: ${missing[*]} not installed, and this script installs only as root with apt-get;" \
	"the tests that need them skip (install them, e.g. pip install pre-commit)" >&2
if [[ "${CI:-}" == true ]]; then
	exit 1
fi
