#!/usr/bin/env bash
# release-check: `goreleaser check` on .goreleaser.yaml, with goreleaser built from the Go
# module proxy at a pinned version (no prebuilt binary is downloaded). The first build of
# goreleaser takes minutes (its module graph is large; later runs reuse the build cache),
# so this is `make release-check`, not part of `make test`. GORELEASER_VERSION overrides
# the version.
set -euo pipefail
cd "$(dirname "$0")/.."
# v2.15.1 builds with Go 1.26; v2.18 and newer need a newer Go.
version="${GORELEASER_VERSION:-v2.15.1}"
exec go run "github.com/goreleaser/goreleaser/v2@${version}" check "$@"
