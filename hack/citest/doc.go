// Package citest tests agpol's CI integrations the way CI systems run them: the GitHub
// Action (action.yml and action/), the pre-commit hook (.pre-commit-hooks.yaml) and the
// recipes of docs/ci. It holds only tests; install-tools.sh installs the tools they need
// besides Go (pre-commit, jq).
package citest
