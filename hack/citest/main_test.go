package citest

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// Set by TestMain.
var (
	root    string // the repository
	agpol   string // agpol, installed by the action's own install step
	install struct {
		outputs map[string]string // the install step's GITHUB_OUTPUT
		path    string            // what it appended to GITHUB_PATH
		log     string
	}
)

// TestMain installs agpol the way the action does (action.yml's "Install agpol" step,
// building this commit), and puts it on PATH for the recipes.
func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "citest:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	var err error
	if root, err = filepath.Abs("../.."); err != nil {
		return 0, err
	}
	tmp, err := os.MkdirTemp("", "agpol-citest-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)

	// Git must not depend on the user's configuration.
	for k, v := range map[string]string{
		"GIT_CONFIG_GLOBAL": os.DevNull, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "citest", "GIT_AUTHOR_EMAIL": "citest@example.com",
		"GIT_COMMITTER_NAME": "citest", "GIT_COMMITTER_EMAIL": "citest@example.com",
	} {
		os.Setenv(k, v)
	}

	if err := statInputs(); err != nil {
		return 0, err
	}
	a, err := loadAction()
	if err != nil {
		return 0, err
	}
	st, err := a.step("install")
	if err != nil {
		return 0, err
	}
	runner := filepath.Join(tmp, "runner")
	outFile, pathFile := filepath.Join(tmp, "install-output"), filepath.Join(tmp, "install-path")
	env, err := a.stepEnv(st, nil, map[string]string{"github.event.pull_request.base.sha": ""})
	if err != nil {
		return 0, err
	}
	env = append(env, "GITHUB_ACTION_PATH="+root, "GITHUB_ACTION_REF=v0.0.0-citest",
		"GITHUB_OUTPUT="+outFile, "GITHUB_PATH="+pathFile, "RUNNER_TEMP="+runner)
	code, stdout, stderr := shell(root, githubShell, st.Run, env)
	install.log = stdout + stderr
	if code != 0 {
		return 0, fmt.Errorf("the action's install step exited %d:\n%s", code, install.log)
	}
	if install.outputs, err = readOutputs(outFile); err != nil {
		return 0, err
	}
	p, err := os.ReadFile(pathFile)
	if err != nil {
		return 0, err
	}
	install.path = strings.TrimSpace(string(p))
	agpol = install.outputs["agpol"]
	if agpol == "" {
		return 0, errors.New("the install step set no agpol output")
	}
	os.Setenv("PATH", filepath.Dir(agpol)+string(os.PathListSeparator)+os.Getenv("PATH"))
	return m.Run(), nil
}

// statInputs stats every file of the working tree that is not ignored, and their
// directories. The tests build agpol from the tree and run its scripts in child
// processes, which go test's cache does not see; the files a test stats are part of its
// cached result, so a change to any of them runs the tests again.
func statInputs() error {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("listing the working tree: %w", err)
	}
	dirs := map[string]bool{}
	for _, f := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		for d := filepath.Dir(f); !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
			_, _ = os.Stat(filepath.Join(root, d))
		}
		_, _ = os.Stat(filepath.Join(root, f)) // a deleted file is recorded as missing
	}
	return nil
}

// needTool skips the test when a tool is missing, except under CI=true, where it fails.
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		msg := fmt.Sprintf("%s is not installed: hack/citest/install-tools.sh installs it (as root, with apt-get)", name)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// Shells as the CI systems run a script.
var (
	githubShell = []string{"bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"} // shell: bash
	gitlabShell = []string{"bash", "-c"}                                             // the script starts with set -eo pipefail
)

// baseEnv is this process's environment without the variables of a CI system the tests
// run in, so that no script writes to the real job's outputs.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "RUNNER_") ||
			strings.HasPrefix(k, "INPUT_") || strings.HasPrefix(k, "CI_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// shell runs script with sh (a shell command line) in dir, with env added to baseEnv.
func shell(dir string, sh []string, script string, env []string) (code int, stdout, stderr string) {
	return run(dir, env, sh[0], append(sh[1:], script)...)
}

// run runs a command in dir with env added to baseEnv, and returns its exit code (-1
// when it could not start) and output.
func run(dir string, env []string, name string, args ...string) (code int, stdout, stderr string) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(baseEnv(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		code = -1
		errOut.WriteString(err.Error())
	}
	return code, out.String(), errOut.String()
}

// git runs git in dir and returns its trimmed stdout.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, exit.Stderr)
		}
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// suppressions are the .agpol.yaml of a fixture: the deliberate traps of the example (the
// v0alpha0 policy is reported twice: never enforced, and its tools list dropped in storage;
// the AuthPolicies sit on a Gateway Kuadrant does not program).
const suppressions = `suppressions:
- {code: AGP402, object: XAccessPolicy/tools/calc-arithmetic, reason: "L7 methods kept as documentation"}
- {code: AGP501, object: XAccessPolicy/tools/calc-legacy, reason: "removed in the next release"}
- {code: AGP102, object: XAccessPolicy/tools/calc-legacy, reason: "removed in the next release"}
- {code: AGP212, object: AuthPolicy/infra/edge-jwt, reason: "moves to the Istio ingress with the next release"}
- {code: AGP212, object: AuthPolicy/pay/ledger-scopes, reason: "moves to the Istio ingress with the next release"}
`

// fixture makes a repository as CI checks it out: deploy/ holds the example manifests
// and request file at the base commit; the head commit changes the access policies as
// testdata/whatif/after does (it grants one call and revokes two). work is a shallow
// clone of the head (the base commit is only on origin); suppress adds .agpol.yaml.
func fixture(t *testing.T, suppress bool) (work, base string) {
	t.Helper()
	dir := t.TempDir()
	origin, seed := filepath.Join(dir, "origin.git"), filepath.Join(dir, "seed")
	git(t, dir, "init", "-q", "--bare", "-b", "main", origin)
	git(t, origin, "config", "uploadpack.allowReachableSHA1InWant", "true")
	git(t, dir, "init", "-q", "-b", "main", seed)
	copyFiles(t, filepath.Join(root, "testdata/examples"), filepath.Join(seed, "deploy"))
	// A repository may keep its request file among the manifests (agpol skips its kind).
	req, err := os.ReadFile(filepath.Join(root, "testdata/requests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(seed, "deploy/requests.yaml"), string(req))
	if suppress {
		writeFile(t, filepath.Join(seed, ".agpol.yaml"), suppressions)
	}
	git(t, seed, "add", "-A")
	git(t, seed, "commit", "-q", "-m", "base")
	base = git(t, seed, "rev-parse", "HEAD")
	copyFiles(t, filepath.Join(root, "testdata/whatif/after"), filepath.Join(seed, "deploy"))
	git(t, seed, "add", "-A")
	git(t, seed, "commit", "-q", "-m", "head: change the access policies")
	git(t, seed, "push", "-q", origin, "main")
	work = filepath.Join(dir, "work")
	git(t, dir, "clone", "-q", "--depth=1", "file://"+origin, work)
	return work, base
}

// copyFiles copies the regular files of src (not its subdirectories) into dst.
func copyFiles(t *testing.T, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dst, e.Name()), string(b))
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readOutputs reads a GITHUB_OUTPUT file of name=value lines; a missing file is empty.
func readOutputs(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s: not name=value: %q", path, line)
		}
		out[k] = v
	}
	return out, nil
}

// sarifRules returns the rule of each result of a SARIF file.
func sarifRules(t *testing.T, path string) []string {
	t.Helper()
	var log struct {
		Version string
		Runs    []struct {
			Results []struct {
				RuleID string `json:"ruleId"`
			}
		}
	}
	if err := json.Unmarshal([]byte(readFile(t, path)), &log); err != nil {
		t.Fatalf("%s: not SARIF: %v", path, err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 {
		t.Fatalf("%s: SARIF version %q with %d runs", path, log.Version, len(log.Runs))
	}
	rules := []string{}
	for _, r := range log.Runs[0].Results {
		rules = append(rules, r.RuleID)
	}
	return rules
}

// junitCounts returns the tests and failures of a JUnit XML file.
func junitCounts(t *testing.T, path string) (tests, failures int) {
	t.Helper()
	var suites struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Suites   []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(readFile(t, path)), &suites); err != nil {
		t.Fatalf("%s: not JUnit XML: %v", path, err)
	}
	for _, s := range suites.Suites {
		tests += s.Tests
		failures += s.Failures
	}
	return tests, failures
}

// reInstall finds the go install command of a recipe.
var reInstall = regexp.MustCompile(`go install "?([^"@\s]+)@`)

// checkInstall checks that a recipe installs agpol from this module's command: the
// recipes cannot run their go install here (it fetches a published version), so the
// tests put the agpol of this commit on PATH instead.
func checkInstall(t *testing.T, name, text string) {
	t.Helper()
	m := reInstall.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("%s: no go install of agpol", name)
	}
	mod := regexp.MustCompile(`(?m)^module (\S+)`).FindStringSubmatch(readFile(t, filepath.Join(root, "go.mod")))
	if mod == nil || m[1] != mod[1]+"/cmd/agpol" {
		t.Errorf("%s installs %s, not this module's cmd/agpol", name, m[1])
	}
}

// loadYAML decodes a file of the repository.
func loadYAML(t *testing.T, rel string, v any) {
	t.Helper()
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(root, rel))), v); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
}
