#!/usr/bin/env bash
# run.sh is the GitHub Action's main step (action.yml). It runs, from the repository root:
#
#   agpol lint -o github (or text), then -o sarif into INPUT_SARIF_FILE
#   agpol simulate --requests INPUT_REQUESTS (text, then -o junit into INPUT_JUNIT_FILE)
#   agpol diff --before <diff-base checked out into a folder> --after PATH -o markdown,
#     appended to GITHUB_STEP_SUMMARY
#
# and exits with agpol's exit code: the first non-zero one of lint, simulate and diff
# (each is also a step output). Inputs are the INPUT_* variables action.yml sets; AGPOL
# is the agpol binary (default: agpol on PATH).
set -uo pipefail

agpol="${AGPOL:-agpol}"
[[ -n "$agpol" ]] || agpol=agpol

output() { # name value
	if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
		echo "$1=$2" >>"$GITHUB_OUTPUT"
	fi
}
fail_input() { # message: a bad input is a usage error (exit 2), as in agpol
	echo "::error title=agpol::$*"
	output exit-code 2
	exit 2
}
bool() { # name value
	case "$2" in
	true | false) ;;
	*) fail_input "input $1 is \"$2\": use true or false" ;;
	esac
}

bool recursive "${INPUT_RECURSIVE:-true}"
bool annotations "${INPUT_ANNOTATIONS:-true}"
bool diff "${INPUT_DIFF:-false}"

read -r -d '' -a paths <<<"${INPUT_PATHS:-}"
if ((${#paths[@]} == 0)); then
	fail_input "input paths is empty: name the manifest files or directories to check"
fi
files=()
for p in "${paths[@]}"; do
	files+=(-f "$p")
done
if [[ "${INPUT_RECURSIVE:-true}" == true ]]; then
	files+=(-R)
fi

# lint: the log (annotations) first; the SARIF file unless the input could not be read.
lint=(lint "${files[@]}" --fail-on "${INPUT_FAIL_ON:-error}")
if [[ -n "${INPUT_CONFIG:-}" ]]; then
	lint+=(--config "$INPUT_CONFIG")
fi
format=text
if [[ "${INPUT_ANNOTATIONS:-true}" == true ]]; then
	format=github
fi
echo "::group::agpol ${lint[*]}"
"$agpol" "${lint[@]}" -o "$format"
lint_rc=$?
echo "::endgroup::"
sarif="${INPUT_SARIF_FILE:-agpol.sarif}"
if ((lint_rc != 2)); then
	"$agpol" "${lint[@]}" -o sarif >"$sarif"
	output sarif-file "$sarif"
fi
output lint-exit-code "$lint_rc"
rc=$lint_rc

# simulate: the request file as a test suite.
if [[ -n "${INPUT_REQUESTS:-}" ]]; then
	simulate=(simulate "${files[@]}" --requests "$INPUT_REQUESTS")
	echo "::group::agpol ${simulate[*]}"
	"$agpol" "${simulate[@]}"
	sim_rc=$?
	echo "::endgroup::"
	junit="${INPUT_JUNIT_FILE:-agpol-simulate.xml}"
	if ((sim_rc != 2)); then
		"$agpol" "${simulate[@]}" -o junit >"$junit" 2>/dev/null
		output junit-file "$junit"
	fi
	output simulate-exit-code "$sim_rc"
	((rc != 0)) || rc=$sim_rc
fi

# diff: the pull request's access changes against its base commit.
if [[ "${INPUT_DIFF:-false}" == true ]]; then
	base="${INPUT_DIFF_BASE:-}"
	diff_rc=""
	if [[ -z "$base" ]]; then
		echo "::notice title=agpol diff::no base commit (diff-base is empty, as outside a pull request): the access diff is skipped"
	elif ((${#paths[@]} != 1)) || [[ "${paths[0]}" == /* ]]; then
		echo "::error title=agpol diff::diff compares one file or directory relative to the repository: paths is \"${INPUT_PATHS}\""
		diff_rc=2
	else
		path="${paths[0]}"
		tmp="$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/agpol-diff.XXXXXX")"
		base_dir="$tmp/base"
		echo "::group::agpol diff: checking out $base into $base_dir"
		if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
			git fetch --no-tags --depth=1 origin "$base"
		fi
		git worktree add --detach "$base_dir" "$base"
		diff_rc=$?
		echo "::endgroup::"
		if ((diff_rc != 0)); then
			echo "::error title=agpol diff::cannot check out the base commit $base"
			diff_rc=2
		else
			before="$base_dir/$(git rev-parse --show-prefix)$path"
			if [[ ! -e "$before" ]]; then
				echo "agpol diff: $path does not exist at $base: comparing with no manifests"
				before="$tmp/empty"
				mkdir -p "$before"
			fi
			"$agpol" diff --before "$before" --after "$path" -o markdown \
				--fail-on "${INPUT_DIFF_FAIL_ON:-none}" >"$tmp/diff.md"
			diff_rc=$?
			cat "$tmp/diff.md"
			if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
				cat "$tmp/diff.md" >>"$GITHUB_STEP_SUMMARY"
			fi
			git worktree remove --force "$base_dir"
		fi
		rm -rf "$tmp"
	fi
	if [[ -n "$diff_rc" ]]; then
		output diff-exit-code "$diff_rc"
		((rc != 0)) || rc=$diff_rc
	fi
fi

output exit-code "$rc"
exit "$rc"
