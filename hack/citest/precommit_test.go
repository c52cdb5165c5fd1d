package citest

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// brokenManifest is an XBackend the API server rejects: its port is a string.
const brokenManifest = `apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XBackend
metadata:
  name: search
  namespace: tools
spec:
  mcp:
    serviceName: search-mcp
    port: "eighty"
`

// TestPreCommitHook runs the hook of .pre-commit-hooks.yaml with pre-commit try-repo, on
// a fixture repository with staged manifests: the example (its traps suppressed in
// .agpol.yaml) and a broken one. pre-commit builds agpol from a snapshot of this working
// tree with the Go on PATH, as it would from a clone of agpol.
func TestPreCommitHook(t *testing.T) {
	if testing.Short() {
		t.Skip("pre-commit builds agpol once more: skipped in -short mode")
	}
	needTool(t, "pre-commit")

	// The manifest and the example config are valid, and the example uses the hook.
	for _, args := range [][]string{
		{"validate-manifest", ".pre-commit-hooks.yaml"},
		{"validate-config", "docs/ci/pre-commit-config.yaml"},
	} {
		if code, stdout, stderr := run(root, nil, "pre-commit", args...); code != 0 {
			t.Errorf("pre-commit %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	var hooks []struct{ ID string }
	loadYAML(t, ".pre-commit-hooks.yaml", &hooks)
	var config struct {
		Repos []struct {
			Repo  string
			Hooks []struct{ ID, Files string }
		}
	}
	loadYAML(t, "docs/ci/pre-commit-config.yaml", &config)
	for _, r := range config.Repos {
		for _, h := range r.Hooks {
			if !slices.ContainsFunc(hooks, func(m struct{ ID string }) bool { return m.ID == h.ID }) {
				t.Errorf("docs/ci/pre-commit-config.yaml uses hook %q, which .pre-commit-hooks.yaml lacks", h.ID)
			}
		}
	}

	hook, rev := snapshot(t)
	fx := filepath.Join(t.TempDir(), "fixture")
	git(t, filepath.Dir(fx), "init", "-q", "-b", "main", fx)
	copyFiles(t, filepath.Join(root, "testdata/examples"), filepath.Join(fx, "deploy"))
	writeFile(t, filepath.Join(fx, ".agpol.yaml"), suppressions)
	writeFile(t, filepath.Join(fx, "deploy/search-backend.yaml"), brokenManifest)
	// YAML that is not a manifest: the hook's exclude keeps it out.
	writeFile(t, filepath.Join(fx, ".github/workflows/ci.yml"), "on: push\njobs: {}\n")
	writeFile(t, filepath.Join(fx, ".pre-commit-config.yaml"), readFile(t, filepath.Join(root, "docs/ci/pre-commit-config.yaml")))
	git(t, fx, "add", "-A")
	// Not staged: the hook must not read it.
	writeFile(t, filepath.Join(fx, "deploy/unstaged.yaml"), "kind: [\n")

	gomodcache := strings.TrimSpace(mustRun(t, root, "go", "env", "GOMODCACHE"))
	code, stdout, stderr := run(fx, []string{"PRE_COMMIT_HOME=" + t.TempDir(), "GOMODCACHE=" + gomodcache},
		"pre-commit", "try-repo", hook, "agpol-lint", "--ref", rev, "--color", "never")
	out := stdout + stderr
	if code != 1 {
		t.Errorf("pre-commit exit %d, want 1", code)
	}
	for _, want := range []string{
		"agpol lint...",
		"Failed\n- hook id: agpol-lint\n- exit code: 1\n",
		"deploy/search-backend.yaml:9:5: error AGP101 [schema] spec.mcp.port: Invalid value",
		"2 errors, 0 warnings, 0 info, 5 suppressed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	for _, unwanted := range []string{"unstaged.yaml", "ci.yml", "pre-commit-config", "AGP402 [", "AGP501 ["} {
		if strings.Contains(out, unwanted) {
			t.Errorf("the output has %q", unwanted)
		}
	}
	if t.Failed() {
		t.Logf("pre-commit output:\n%s", out)
	}
}

// snapshot commits this working tree (tracked and untracked files, without the ignored
// ones) into a new bare repository, for pre-commit to clone; the checkout is not touched.
func snapshot(t *testing.T) (repo, rev string) {
	t.Helper()
	repo = filepath.Join(t.TempDir(), "agpol.git")
	git(t, root, "init", "-q", "--bare", repo)
	gitDir, workTree := "--git-dir="+repo, "--work-tree="+root
	git(t, root, gitDir, workTree, "add", "-A")
	tree := git(t, root, gitDir, "write-tree")
	rev = git(t, root, gitDir, "commit-tree", tree, "-m", "agpol working tree")
	git(t, root, gitDir, "update-ref", "refs/heads/main", rev)
	return repo, rev
}

func mustRun(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	code, stdout, stderr := run(dir, nil, name, args...)
	if code != 0 {
		t.Fatalf("%s %s: exit %d\n%s", name, strings.Join(args, " "), code, stderr)
	}
	return stdout
}
