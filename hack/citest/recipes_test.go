package citest

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestShellRecipe runs docs/ci/agpol-ci.sh in a fixture repository.
func TestShellRecipe(t *testing.T) {
	script := filepath.Join(root, "docs/ci/agpol-ci.sh")
	checkInstall(t, "docs/ci/agpol-ci.sh", readFile(t, script))
	tests := []struct {
		name     string
		suppress bool
		env      []string
		code     int
		reports  []string // files of OUT
		rules    []string // SARIF results
		log      []string
	}{
		{
			name: "findings, requests and the diff",
			env:  []string{"MANIFESTS=deploy", "REQUESTS=deploy/requests.yaml", "BASE=HEAD~1"},
			code: 1, reports: []string{"agpol-diff.md", "agpol-lint.xml", "agpol-simulate.xml", "agpol.sarif"},
			rules: []string{"AGP102", "AGP212", "AGP212", "AGP402", "AGP501"},
			log:   []string{"deploy/40-access-policies.yaml:153:7: error AGP402", "16 passed, 2 failed", "### Access granted (1)"},
		},
		{
			name: "suppressed findings, granted access fails", suppress: true,
			env:  []string{"MANIFESTS=deploy", "BASE=HEAD~1"},
			code: 1, reports: []string{"agpol-diff.md", "agpol-lint.xml", "agpol.sarif"},
			rules: []string{}, log: []string{"5 suppressed", "### Access granted (1)"},
		},
		{
			name: "suppressed findings pass", suppress: true,
			env:  []string{"MANIFESTS=deploy", "OUT=out/reports"},
			code: 0, reports: []string{"agpol-lint.xml", "agpol.sarif"}, rules: []string{},
		},
		{
			name: "fail on warnings",
			env:  []string{"MANIFESTS=deploy/40-access-policies.yaml", "FAIL_ON=warning"},
			code: 1, reports: []string{"agpol-lint.xml", "agpol.sarif"}, rules: []string{"AGP102", "AGP203", "AGP203", "AGP203", "AGP203", "AGP203", "AGP402", "AGP501"},
		},
		{
			name: "unreadable input",
			env:  []string{"MANIFESTS=nowhere"},
			code: 2, reports: []string{}, log: []string{"error: nowhere: no such file or directory"},
		},
		{
			name: "MANIFESTS is required",
			code: 2, log: []string{"set MANIFESTS to the manifest directory"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work, _ := fixture(t, tt.suppress)
			// The recipe's base is on origin only in a shallow clone: deepen as CI would.
			git(t, work, "fetch", "-q", "--deepen=1")
			code, stdout, stderr := run(work, tt.env, "sh", script)
			log := stdout + stderr
			if code != tt.code {
				t.Errorf("exit %d, want %d", code, tt.code)
			}
			out := filepath.Join(work, "agpol-reports")
			for _, kv := range tt.env {
				if v, ok := strings.CutPrefix(kv, "OUT="); ok {
					out = filepath.Join(work, v)
				}
			}
			if tt.reports != nil {
				var got []string
				entries, _ := os.ReadDir(out)
				for _, e := range entries {
					got = append(got, e.Name())
				}
				if !slices.Equal(got, tt.reports) && (len(got) > 0 || len(tt.reports) > 0) {
					t.Errorf("reports %v, want %v", got, tt.reports)
				}
			}
			if tt.rules != nil {
				got := sarifRules(t, filepath.Join(out, "agpol.sarif"))
				slices.Sort(got)
				if !slices.Equal(got, tt.rules) {
					t.Errorf("SARIF results %v, want %v", got, tt.rules)
				}
				junitCounts(t, filepath.Join(out, "agpol-lint.xml"))
			}
			if slices.Contains(tt.reports, "agpol-simulate.xml") {
				if n, f := junitCounts(t, filepath.Join(out, "agpol-simulate.xml")); n != 18 || f != 2 {
					t.Errorf("simulate JUnit: %d tests, %d failures; want 18, 2", n, f)
				}
			}
			for _, s := range tt.log {
				if !strings.Contains(log, s) {
					t.Errorf("the output lacks %q", s)
				}
			}
			if t.Failed() {
				t.Logf("output:\n%s", log)
			}
		})
	}
}

// workflow is a GitHub workflow, as far as the tests run it.
type workflow struct {
	Env  map[string]string
	Jobs map[string]struct {
		Steps []actionStep
	}
}

// TestGitHubWorkflowRecipe runs the shell steps of docs/ci/github-workflow.yml, in order,
// as the runner would on a pull request (so every step's if: holds), in a fixture
// repository, with the agpol of this commit in place of its go install step.
func TestGitHubWorkflowRecipe(t *testing.T) {
	var wf workflow
	loadYAML(t, "docs/ci/github-workflow.yml", &wf)
	if len(wf.Jobs) != 1 {
		t.Fatalf("%d jobs, want 1", len(wf.Jobs))
	}
	work, base := fixture(t, false)
	tmp := t.TempDir()
	summary := filepath.Join(tmp, "summary")
	env := []string{"RUNNER_TEMP=" + tmp, "GITHUB_STEP_SUMMARY=" + summary,
		"GITHUB_PATH=" + filepath.Join(tmp, "path"), "GITHUB_OUTPUT=" + filepath.Join(tmp, "output")}
	for _, k := range slices.Sorted(maps.Keys(wf.Env)) {
		env = append(env, k+"="+wf.Env[k])
	}
	ctx := map[string]string{"github.event.pull_request.base.sha": base}
	codes := map[string]int{}
	var log strings.Builder
	for _, job := range wf.Jobs {
		for _, st := range job.Steps {
			if st.Run == "" {
				continue // uses: checkout, setup-go, upload-sarif
			}
			if strings.Contains(st.Run, "${{") {
				t.Errorf("step %q: an expression in run: (pass it through env:)", st.Name)
			}
			if strings.Contains(st.Run, "go install") {
				checkInstall(t, "docs/ci/github-workflow.yml", st.Run)
				continue
			}
			stepEnv := slices.Clone(env)
			for _, k := range slices.Sorted(maps.Keys(st.Env)) {
				v, err := expand(st.Env[k], ctx)
				if err != nil {
					t.Fatalf("step %q: %v", st.Name, err)
				}
				stepEnv = append(stepEnv, k+"="+v)
			}
			code, stdout, stderr := shell(work, githubShell, st.Run, stepEnv)
			codes[st.Name] = code
			log.WriteString(stdout + stderr)
		}
	}
	want := map[string]int{"agpol lint": 1, "agpol simulate": 1, "Access diff of the pull request": 1}
	if !maps.Equal(codes, want) {
		t.Errorf("exit codes %v, want %v", codes, want)
	}
	if got := sarifRules(t, filepath.Join(work, "agpol.sarif")); len(got) != 5 {
		t.Errorf("SARIF results %v, want AGP402, AGP501, AGP102 and AGP212 twice", got)
	}
	if n, f := junitCounts(t, filepath.Join(work, "agpol-simulate.xml")); n != 18 || f != 2 {
		t.Errorf("simulate JUnit: %d tests, %d failures; want 18, 2", n, f)
	}
	for _, s := range []string{"::error file=deploy/40-access-policies.yaml,line=153,col=7,title=AGP402::"} {
		if !strings.Contains(log.String(), s) {
			t.Errorf("the log lacks %q", s)
		}
	}
	if s := readFile(t, summary); !strings.Contains(s, "### Access granted (1)") {
		t.Errorf("the job summary lacks the access diff:\n%s", s)
	}
	if t.Failed() {
		t.Logf("log:\n%s", log.String())
	}
}

// TestGitLabRecipe runs the scripts of the jobs of docs/ci/gitlab-ci.yml as a merge
// request pipeline would, in a fixture repository, and checks the reports they declare:
// the code quality report against the fields GitLab requires, the JUnit reports as XML.
func TestGitLabRecipe(t *testing.T) {
	needTool(t, "jq")
	type job struct {
		Extends      string
		BeforeScript []string `yaml:"before_script"`
		Script       []string
		Artifacts    struct {
			Reports map[string]string
			Paths   []string
		}
	}
	var doc map[string]job
	loadYAML(t, "docs/ci/gitlab-ci.yml", &doc)
	var vars struct{ Variables map[string]string }
	loadYAML(t, "docs/ci/gitlab-ci.yml", &vars)

	work, base := fixture(t, false)
	env := []string{"CI=true", "CI_PIPELINE_SOURCE=merge_request_event", "CI_PROJECT_DIR=" + work,
		"CI_MERGE_REQUEST_DIFF_BASE_SHA=" + base}
	for _, k := range slices.Sorted(maps.Keys(vars.Variables)) {
		env = append(env, k+"="+vars.Variables[k])
	}
	want := map[string]int{"agpol-lint": 1, "agpol-simulate": 1, "agpol-diff": 1}
	for name, j := range doc {
		if name == "variables" || strings.HasPrefix(name, ".") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			if _, ok := want[name]; !ok {
				t.Fatalf("job %s is unknown to the test", name)
			}
			before := j.BeforeScript
			if j.Extends != "" {
				before = append(doc[j.Extends].BeforeScript, before...)
			}
			checkInstall(t, "docs/ci/gitlab-ci.yml", strings.Join(before, "\n"))
			script := "set -eo pipefail\n" + strings.Join(j.Script, "\n")
			code, stdout, stderr := shell(work, gitlabShell, script, env)
			if code != want[name] {
				t.Errorf("exit %d, want %d\n%s%s", code, want[name], stdout, stderr)
			}
			for kind, file := range j.Artifacts.Reports {
				switch kind {
				case "codequality":
					checkCodeQuality(t, filepath.Join(work, file))
				case "junit":
					junitCounts(t, filepath.Join(work, file))
				default:
					t.Errorf("report %s is unknown to the test", kind)
				}
			}
			for _, p := range j.Artifacts.Paths {
				if _, err := os.Stat(filepath.Join(work, p)); err != nil {
					t.Error(err)
				}
			}
			if name == "agpol-diff" && !strings.Contains(readFile(t, filepath.Join(work, "agpol-diff.md")), "### Access granted (1)") {
				t.Error("agpol-diff.md lacks the access diff")
			}
			if wt := git(t, work, "worktree", "list"); strings.Count(wt, "\n") != 0 {
				t.Errorf("the base checkout was left behind:\n%s", wt)
			}
		})
	}
}

// checkCodeQuality checks a GitLab code quality report: the findings of the fixture with
// the fields GitLab requires.
func checkCodeQuality(t *testing.T, path string) {
	t.Helper()
	var issues []struct {
		Description string `json:"description"`
		CheckName   string `json:"check_name"`
		Fingerprint string `json:"fingerprint"`
		Severity    string `json:"severity"`
		Location    struct {
			Path  string `json:"path"`
			Lines struct {
				Begin *int `json:"begin"`
			} `json:"lines"`
		} `json:"location"`
	}
	if err := json.Unmarshal([]byte(readFile(t, path)), &issues); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	type issue struct {
		check, severity, path string
		line                  int
	}
	var got []issue
	prints := map[string]bool{}
	for _, i := range issues {
		if i.Description == "" || i.Fingerprint == "" || i.Location.Lines.Begin == nil {
			t.Errorf("incomplete code quality issue: %+v", i)
			continue
		}
		if !slices.Contains([]string{"info", "minor", "major", "critical", "blocker"}, i.Severity) {
			t.Errorf("severity %q is not one of GitLab's", i.Severity)
		}
		if prints[i.Fingerprint] {
			t.Errorf("fingerprint %q twice", i.Fingerprint)
		}
		prints[i.Fingerprint] = true
		got = append(got, issue{i.CheckName, i.Severity, i.Location.Path, *i.Location.Lines.Begin})
	}
	want := []issue{
		{"AGP402", "major", "deploy/40-access-policies.yaml", 153},
		{"AGP501", "major", "deploy/40-access-policies.yaml", 156},
		{"AGP102", "minor", "deploy/40-access-policies.yaml", 176},
		{"AGP212", "major", "deploy/50-auth-policies.yaml", 10},
		{"AGP212", "major", "deploy/50-auth-policies.yaml", 30},
	}
	if !slices.Equal(got, want) {
		t.Errorf("code quality issues %+v, want %+v", got, want)
	}
}
