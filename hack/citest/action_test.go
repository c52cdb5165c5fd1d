package citest

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// action is action.yml, as far as the tests run it.
type action struct {
	Inputs map[string]struct {
		Default  string
		Required bool
	}
	Outputs map[string]struct{ Value string }
	Runs    struct {
		Using string
		Steps []actionStep
	}
}

type actionStep struct {
	ID, Name, If, Shell, Run, Uses string
	Env                            map[string]string
	With                           map[string]string
}

func loadAction() (*action, error) {
	b, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		return nil, err
	}
	a := &action{}
	if err := yaml.Unmarshal(b, a); err != nil {
		return nil, fmt.Errorf("action.yml: %w", err)
	}
	return a, nil
}

func (a *action) step(id string) (actionStep, error) {
	for _, s := range a.Runs.Steps {
		if s.ID == id {
			return s, nil
		}
	}
	return actionStep{}, fmt.Errorf("action.yml has no step %q", id)
}

// reExpr is a ${{ }} expression; the tests know only the lookups the action uses.
var reExpr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// expand replaces each ${{ name }} in s by ctx[name]; any other expression is an error.
func expand(s string, ctx map[string]string) (string, error) {
	var err error
	out := reExpr.ReplaceAllStringFunc(s, func(m string) string {
		name := reExpr.FindStringSubmatch(m)[1]
		v, ok := ctx[name]
		if !ok && err == nil {
			err = fmt.Errorf("expression %q is unknown to the test", m)
		}
		return v
	})
	return out, err
}

// stepEnv is the environment of a step: its env: with the inputs (the defaults of
// action.yml, overridden by with) and ctx (other contexts) expanded.
func (a *action) stepEnv(st actionStep, with, ctx map[string]string) ([]string, error) {
	ctx = maps.Clone(ctx)
	for name, in := range a.Inputs {
		v := in.Default
		if w, ok := with[name]; ok {
			v = w
		} else if in.Required {
			continue // a step that reads it fails: the expression is unknown
		}
		v, err := expand(v, ctx)
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", name, err)
		}
		ctx["inputs."+name] = v
	}
	for name := range with {
		if _, ok := a.Inputs[name]; !ok {
			return nil, fmt.Errorf("input %q is not an input of action.yml", name)
		}
	}
	var env []string
	for _, k := range slices.Sorted(maps.Keys(st.Env)) {
		v, err := expand(st.Env[k], ctx)
		if err != nil {
			return nil, fmt.Errorf("step %s: env %s: %w", st.ID, k, err)
		}
		env = append(env, k+"="+v)
	}
	return env, nil
}

// actionRun is what one run of the action's main step left.
type actionRun struct {
	code    int
	log     string // stdout and stderr
	outputs map[string]string
	summary string
}

// runAction runs action.yml's "run" step in work as the runner would, with the inputs
// with, after the install step; base is the pull request's base commit ("" outside a
// pull request).
func runAction(t *testing.T, work string, with map[string]string, base string) actionRun {
	t.Helper()
	a, err := loadAction()
	if err != nil {
		t.Fatal(err)
	}
	st, err := a.step("run")
	if err != nil {
		t.Fatal(err)
	}
	if st.Shell != "bash" {
		t.Fatalf("the run step's shell is %q", st.Shell)
	}
	env, err := a.stepEnv(st, with, map[string]string{
		"steps.install.outputs.agpol":        install.outputs["agpol"],
		"github.event.pull_request.base.sha": base,
	})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	out, summary := filepath.Join(tmp, "output"), filepath.Join(tmp, "summary")
	env = append(env, "GITHUB_ACTION_PATH="+root, "GITHUB_OUTPUT="+out,
		"GITHUB_STEP_SUMMARY="+summary, "RUNNER_TEMP="+tmp)
	code, stdout, stderr := shell(work, githubShell, st.Run, env)
	outputs, err := readOutputs(out)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := os.ReadFile(summary)
	return actionRun{code: code, log: stdout + stderr, outputs: outputs, summary: string(s)}
}

// TestInstall checks what the action's install step (run by TestMain) left: agpol built
// from this commit and named after the action's ref, on PATH for later steps.
func TestInstall(t *testing.T) {
	if !strings.Contains(install.log, "agpol v0.0.0-citest ") {
		t.Errorf("agpol version does not name the action's ref:\n%s", install.log)
	}
	if install.path != filepath.Dir(agpol) {
		t.Errorf("GITHUB_PATH got %q, want %q", install.path, filepath.Dir(agpol))
	}
	if st, err := os.Stat(agpol); err != nil || st.Mode()&0o111 == 0 {
		t.Errorf("output agpol=%q is not an executable: %v", agpol, err)
	}
}

// TestActionGoVersion runs the step that reads the Go version for actions/setup-go.
func TestActionGoVersion(t *testing.T) {
	a, err := loadAction()
	if err != nil {
		t.Fatal(err)
	}
	st, err := a.step("gomod")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "output")
	if code, stdout, stderr := shell(root, githubShell, st.Run, []string{"GITHUB_ACTION_PATH=" + root, "GITHUB_OUTPUT=" + out}); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	outputs, err := readOutputs(out)
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(readFile(t, filepath.Join(root, "go.mod")))[1]
	if outputs["go-version"] != want {
		t.Errorf("go-version=%q, want %q (go.mod)", outputs["go-version"], want)
	}
	var setup *actionStep
	for i, s := range a.Runs.Steps {
		if strings.HasPrefix(s.Uses, "actions/setup-go@") {
			setup = &a.Runs.Steps[i]
		}
	}
	if setup == nil || setup.With["go-version"] != "${{ steps.gomod.outputs.go-version }}" {
		t.Errorf("actions/setup-go does not take the version the gomod step reads: %+v", setup)
	}
}

// docsActionInputs returns the inputs docs/ci/github-action.yml gives the action.
func docsActionInputs(t *testing.T) map[string]string {
	t.Helper()
	var wf struct {
		Jobs map[string]struct{ Steps []actionStep }
	}
	loadYAML(t, "docs/ci/github-action.yml", &wf)
	for _, job := range wf.Jobs {
		for _, s := range job.Steps {
			if strings.HasPrefix(s.Uses, "agpol/agpol@") {
				return s.With
			}
		}
	}
	t.Fatal("docs/ci/github-action.yml does not use agpol/agpol")
	return nil
}

func TestAction(t *testing.T) {
	requestsFailing := `requests:
- name: anonymous-refund-expected-allowed
  from: {anonymous: true}
  gateway: infra/edge
  http: {method: POST, path: /mcp, host: ledger.mcp.example.com}
  mcp: {method: tools/call, tool: refund}
  expect: allow
`
	tests := []struct {
		name     string
		suppress bool
		with     map[string]string
		pr       bool   // a pull request: diff-base defaults to its base
		files    string // an extra request file, written to tests/requests.yaml
		code     int
		outputs  map[string]string // "" = must be absent
		log      []string
		summary  []string
		rules    []string // SARIF results
		tests    int      // JUnit tests of simulate
	}{
		{
			// The head revokes multiply, which two requests expect to be allowed, and grants
			// statement (diff --fail-on granted).
			name: "the docs example on a pull request", suppress: true, pr: true,
			with: docsActionInputs(t),
			code: 1,
			outputs: map[string]string{"exit-code": "1", "lint-exit-code": "0", "simulate-exit-code": "1",
				"diff-exit-code": "1", "sarif-file": "agpol.sarif", "junit-file": "agpol-simulate.xml"},
			log:     []string{"0 errors, 0 warnings, 0 info, 5 suppressed", "16 passed, 2 failed", "## agpol: access changes"},
			summary: []string{"**1 granted, 2 revoked, 3 decided by a different rule**", "### Access granted (1)", "| sa:agents/support | infra/edge:https | XBackend pay/ledger | tools/call statement |"},
			rules:   []string{}, tests: 18,
		},
		{
			name: "granted access fails the step", suppress: true, pr: true,
			with: map[string]string{"paths": "deploy", "diff": "true", "diff-fail-on": "granted"},
			code: 1, outputs: map[string]string{"exit-code": "1", "lint-exit-code": "0", "simulate-exit-code": "", "diff-exit-code": "1"},
			summary: []string{"### Access granted (1)"}, rules: []string{},
		},
		{
			name: "diff-fail-on none only reports", suppress: true, pr: true,
			with: map[string]string{"paths": "deploy", "diff": "true"},
			code: 0, outputs: map[string]string{"exit-code": "0", "diff-exit-code": "0"},
			summary: []string{"### Access revoked (2)"}, rules: []string{},
		},
		{
			name: "findings become annotations and fail the step",
			with: map[string]string{"paths": "deploy"},
			code: 1,
			outputs: map[string]string{"exit-code": "1", "lint-exit-code": "1", "simulate-exit-code": "",
				"diff-exit-code": "", "sarif-file": "agpol.sarif", "junit-file": ""},
			log: []string{
				"::error file=deploy/40-access-policies.yaml,line=153,col=7,title=AGP402::rule \"analytics-read\"",
				"::error file=deploy/40-access-policies.yaml,line=156,col=1,title=AGP501::",
			},
			rules: []string{"AGP102", "AGP212", "AGP212", "AGP402", "AGP501"},
		},
		{
			name: "text output, fail-on none",
			with: map[string]string{"paths": "deploy/40-access-policies.yaml deploy/30-backends.yaml", "annotations": "false", "fail-on": "none"},
			code: 0, outputs: map[string]string{"exit-code": "0", "lint-exit-code": "0"},
			log:   []string{"deploy/40-access-policies.yaml:153:7: error AGP402"},
			rules: []string{"AGP102", "AGP203", "AGP402", "AGP501"},
		},
		{
			name: "a failed expectation fails the step", suppress: true,
			with:  map[string]string{"paths": "deploy", "requests": "tests/requests.yaml", "junit-file": "report.xml"},
			files: requestsFailing,
			code:  1, outputs: map[string]string{"exit-code": "1", "lint-exit-code": "0", "simulate-exit-code": "1", "junit-file": "report.xml"},
			log: []string{"0 passed, 1 failed"}, rules: []string{}, tests: 1,
		},
		{
			name: "diff outside a pull request is skipped", suppress: true,
			with: map[string]string{"paths": "deploy", "diff": "true"},
			code: 0, outputs: map[string]string{"exit-code": "0", "diff-exit-code": ""},
			log: []string{"::notice title=agpol diff::no base commit"}, rules: []string{},
		},
		{
			name: "diff compares one path", suppress: true, pr: true,
			with: map[string]string{"paths": "deploy\ndeploy/requests.yaml", "diff": "true"},
			code: 2, outputs: map[string]string{"exit-code": "2", "lint-exit-code": "0", "diff-exit-code": "2"},
			log: []string{"::error title=agpol diff::diff compares one file or directory"}, rules: []string{},
		},
		{
			name: "unreadable input is exit 2 and no SARIF",
			with: map[string]string{"paths": "deploy/missing.yaml"},
			code: 2, outputs: map[string]string{"exit-code": "2", "lint-exit-code": "2", "sarif-file": ""},
			log: []string{"error: deploy/missing.yaml: no such file or directory"},
		},
		{
			name: "a bad boolean input is exit 2",
			with: map[string]string{"paths": "deploy", "recursive": "yes"},
			code: 2, outputs: map[string]string{"exit-code": "2", "lint-exit-code": ""},
			log: []string{`::error title=agpol::input recursive is "yes": use true or false`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work, base := fixture(t, tt.suppress)
			if tt.files != "" {
				writeFile(t, filepath.Join(work, "tests/requests.yaml"), tt.files)
			}
			if !tt.pr {
				base = ""
			}
			r := runAction(t, work, tt.with, base)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d", r.code, tt.code)
			}
			for k, want := range tt.outputs {
				if got, ok := r.outputs[k]; got != want || (want == "") == ok {
					t.Errorf("output %s=%q (set: %v), want %q", k, got, ok, want)
				}
			}
			for _, s := range tt.log {
				if !strings.Contains(r.log, s) {
					t.Errorf("the log lacks %q", s)
				}
			}
			for _, s := range tt.summary {
				if !strings.Contains(r.summary, s) {
					t.Errorf("the job summary lacks %q", s)
				}
			}
			if len(tt.summary) == 0 && r.summary != "" {
				t.Errorf("unexpected job summary:\n%s", r.summary)
			}
			if tt.rules != nil {
				got := sarifRules(t, filepath.Join(work, r.outputs["sarif-file"]))
				slices.Sort(got)
				if !slices.Equal(got, tt.rules) {
					t.Errorf("SARIF results %v, want %v", got, tt.rules)
				}
			}
			if tt.tests > 0 {
				if n, _ := junitCounts(t, filepath.Join(work, r.outputs["junit-file"])); n != tt.tests {
					t.Errorf("JUnit has %d tests, want %d", n, tt.tests)
				}
			}
			if t.Failed() {
				t.Logf("log:\n%s", r.log)
			}
			if wt := git(t, work, "worktree", "list"); strings.Count(wt, "\n") != 0 {
				t.Errorf("the base checkout was left behind:\n%s", wt)
			}
		})
	}
}

// TestActionlint checks action.yml and the GitHub workflows of docs/ci with actionlint
// (pinned in hack/tools). actionlint checks workflows, so the test makes a repository
// where the action is local (uses: ./): the docs example then has its inputs checked
// against action.yml, and a workflow made of the action's own steps has their
// expressions, contexts and the inputs of the actions they use checked. Shell scripts are
// not given to shellcheck (it is not installed everywhere); the tests run them instead.
func TestActionlint(t *testing.T) {
	bin := os.Getenv("AGPOL_ACTIONLINT")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "actionlint")
		code, stdout, stderr := run(filepath.Join(root, "hack/tools"), nil,
			"go", "build", "-o", bin, "github.com/rhysd/actionlint/cmd/actionlint")
		if code != 0 {
			msg := "cannot build actionlint (pinned in hack/tools/go.mod; it needs the Go module proxy): " + stdout + stderr
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	proj := t.TempDir()
	writeFile(t, filepath.Join(proj, ".git/HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(proj, "action.yml"), readFile(t, filepath.Join(root, "action.yml")))
	docs := readFile(t, filepath.Join(root, "docs/ci/github-action.yml"))
	local := regexp.MustCompile(`uses: agpol/agpol@\S+`).ReplaceAllString(docs, "uses: ./")
	if local == docs {
		t.Fatal("docs/ci/github-action.yml does not use agpol/agpol@REF")
	}
	wfs := filepath.Join(proj, ".github/workflows")
	writeFile(t, filepath.Join(wfs, "docs-action.yml"), local)
	writeFile(t, filepath.Join(wfs, "docs-workflow.yml"), readFile(t, filepath.Join(root, "docs/ci/github-workflow.yml")))
	writeFile(t, filepath.Join(wfs, "action-steps.yml"), actionSteps(t))
	actionlint := func(files ...string) (int, string) {
		args := append([]string{"-no-color", "-oneline", "-shellcheck=", "-pyflakes="}, files...)
		code, stdout, stderr := run(proj, nil, bin, args...)
		return code, stdout + stderr
	}
	if code, out := actionlint(".github/workflows/docs-action.yml", ".github/workflows/docs-workflow.yml",
		".github/workflows/action-steps.yml"); code != 0 || out != "" {
		t.Errorf("actionlint (action-steps.yml is action.yml's steps as a workflow): exit %d\n%s", code, out)
	}

	// The check can fail: a misspelt input, and so a missing required one.
	bad := strings.Replace(local, "paths: deploy", "pahts: deploy", 1)
	writeFile(t, filepath.Join(wfs, "bad.yml"), bad)
	code, out := actionlint(".github/workflows/bad.yml")
	for _, want := range []string{`input "pahts" is not defined in action "agpol"`, `missing input "paths" which is required by action "agpol"`} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("a misspelt input: exit %d, want 1 and %q\n%s", code, want, out)
		}
	}
}

// actionSteps turns the action's steps into a workflow job with the action's inputs as
// workflow_dispatch inputs, so that actionlint checks them as it checks a workflow.
func actionSteps(t *testing.T) string {
	t.Helper()
	var doc struct {
		Inputs map[string]yaml.Node
		Runs   struct{ Steps []yaml.Node }
	}
	loadYAML(t, "action.yml", &doc)
	inputs := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(doc.Inputs)) {
		inputs[name] = map[string]any{"type": "string"}
	}
	wf := map[string]any{
		"name": "action.yml steps",
		"on":   map[string]any{"workflow_dispatch": map[string]any{"inputs": inputs}},
		"jobs": map[string]any{"action": map[string]any{"runs-on": "ubuntu-latest", "steps": doc.Runs.Steps}},
	}
	b, err := yaml.Marshal(wf)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
