package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/snapshot"
)

// runDecide runs the CLI in-process (from the repository root: callers t.Chdir("../..")).
func runDecide(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}
	code = run(context.Background(), append([]string{"agpol"}, args...), streams)
	return out.String(), errOut.String(), code
}

type simulateJSON struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Results    []struct {
		Name      string            `json:"name"`
		Decision  string            `json:"decision"`
		Level     string            `json:"level"`
		DecidedBy string            `json:"decidedBy"`
		Reason    string            `json:"reason"`
		Semantics string            `json:"semantics"`
		Trace     []json.RawMessage `json:"trace"`
		Expect    *struct {
			Passed bool `json:"passed"`
		} `json:"expect"`
	} `json:"results"`
	Summary *struct{ Passed, Failed int } `json:"summary"`
}

// TestSimulateScenarios runs every scenario of testdata/simulate (the upstream conformance
// and e2e tests of kube-agentic-networking v0.1.0, conformance/tests and tests/e2e, re-expressed) and the examples' request file.
func TestSimulateScenarios(t *testing.T) {
	t.Chdir("../..")
	type scenario struct{ name, manifests, requests string }
	scenarios := []scenario{{"examples", "testdata/examples", "testdata/requests.yaml"}}
	dirs, _ := filepath.Glob("testdata/simulate/*")
	for _, d := range dirs {
		scenarios = append(scenarios, scenario{filepath.Base(d), filepath.Join(d, "manifests.yaml"), filepath.Join(d, "requests.yaml")})
	}
	if len(scenarios) < 6 {
		t.Fatalf("scenarios missing: %v", dirs)
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			out, errOut, code := runDecide(t, "", "simulate", "-f", sc.manifests, "--requests", sc.requests, "-o", "json")
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, errOut, out)
			}
			var doc simulateJSON
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("json: %v\n%s", err, out)
			}
			if doc.Summary == nil || doc.Summary.Failed != 0 || doc.Summary.Passed == 0 || doc.Summary.Passed != len(doc.Results) {
				t.Fatalf("summary %+v for %d results", doc.Summary, len(doc.Results))
			}
			for _, r := range doc.Results {
				if r.Semantics != "reference" || len(r.Trace) == 0 || r.Decision == "" || r.Level == "" || r.DecidedBy == "" {
					t.Errorf("%s: incomplete result %+v", r.Name, r)
				}
			}
			if !strings.Contains(errOut, "passed, 0 failed") {
				t.Errorf("stderr: %q", errOut)
			}
		})
	}
}

func TestSimulateFailedExpectation(t *testing.T) {
	t.Chdir("../..")
	reqs := filepath.Join(t.TempDir(), "r.yaml")
	if err := os.WriteFile(reqs, []byte(`requests:
- name: wrong
  from: {serviceAccount: agents/support}
  gateway: infra/edge
  http: {host: ledger.mcp.example.com}
  mcp: {tool: refund}
  extauth: allow
  expect: allow
`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code := runDecide(t, "", "simulate", "-f", "testdata/examples", "--requests", reqs, "--color", "never")
	if code != exitFail || !strings.Contains(out, "0 passed, 1 failed") || !strings.Contains(out, "decision: expected allow, got deny") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	out, _, code = runDecide(t, "", "simulate", "-f", "testdata/examples", "--requests", reqs, "-o", "junit")
	if code != exitFail || !strings.Contains(out, "<testsuites") || !strings.Contains(out, `failures="1"`) || !strings.Contains(out, "<failure") {
		t.Fatalf("junit exit %d\n%s", code, out)
	}
}

// Bad request files name file:line and exit 2.
func TestSimulateRequestFileErrors(t *testing.T) {
	t.Chdir("../..")
	cases := map[string]string{
		"requests:\n- name: a\n  form: {anonymous: true}\n":                           `:3: unknown field "form"`,
		"requests:\n- name: a\n  expect: maybe\n":                                     `:3: invalid expect "maybe"`,
		"requests:\n- name: a\n  http: {port: 70000}\n":                               `:3: invalid port "70000"`,
		"requests:\n- name: a\n  http: {time: yesterday}\n":                           `:3: invalid time "yesterday"`,
		"requests:\n- name: a\n  from: {serviceAccount: nope}\n":                      `:3: invalid serviceAccount "nope"`,
		"requests:\n- name: a\n  from: {anonymous: true, spiffe: \"spiffe://x/y\"}\n": `:3: from needs exactly one`,
		"requests:\n- name: a\n  extauth: maybe\n":                                    `:3: invalid authorizer answer "maybe"`,
		"requests:\n- name: a\n- name: a\n":                                           `:3: duplicate request name "a"`,
		"requests:\n- name: a\n  gateway: infra/nope\n":                               `gateway infra/nope not found`,
		"kind: Other\nrequests: []\n":                                                 `:1: kind must be SimulationRequests`,
		"requests: [\n":                                                               `not valid YAML`,
	}
	dir := t.TempDir()
	for content, want := range cases {
		f := filepath.Join(dir, "r.yaml")
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := runDecide(t, "", "simulate", "-f", "testdata/examples", "--requests", f)
		if code != exitUsage || !strings.Contains(errOut, want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", content, code, errOut, want)
		}
	}
}

// The example request file parses from stdin too, and multi-semantics gives one result
// per semantics with the disagreement flagged.
func TestSimulateSemanticsAll(t *testing.T) {
	t.Chdir("../..")
	data, err := os.ReadFile("testdata/requests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runDecide(t, string(data), "simulate", "-f", "testdata/examples", "--requests", "-", "--semantics", "all", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc simulateJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, r := range doc.Results {
		per[r.Semantics]++
	}
	if len(per) != len(effective.PresetNames()) || per["reference"] != per["v0alpha0-legacy"] || per["reference"] != per["pr-236"] {
		t.Errorf("results per semantics: %v", per)
	}
	// Under the legacy preset the v0alpha0 policy on the calculator is enforced.
	for _, r := range doc.Results {
		if r.Name == "v0alpha0-policy-is-inert" && r.Semantics == "v0alpha0-legacy" && r.Decision != "deny" {
			t.Errorf("legacy: %+v", r)
		}
	}
}

// agpol get xaccesspolicies shows the computed admission in its ACCEPTED column (the
// examples record no status, so every value there is agpol's).
func TestGetAdmission(t *testing.T) {
	t.Chdir("../..")
	render.Now = func() timeT { return fixedNow }
	defer func() { render.Now = realNow }()
	out, _, code := runDecide(t, "", "get", "xap", "-A", "-f", "testdata/examples", "-o", "custom-columns=NAME:.metadata.name", "--no-headers")
	if code != 0 {
		t.Fatal(out)
	}
	names := strings.Fields(out)
	out, _, code = runDecide(t, "", "get", "xap", "-A", "-f", "testdata/examples")
	if code != 0 {
		t.Fatal(out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(names) == 0 || len(lines) != len(names)+1 {
		t.Fatalf("%d names, table:\n%s", len(names), out)
	}
	col := strings.Index(lines[0], "ACCEPTED")
	for _, l := range lines[1:] {
		// No example carries a recorded status: agpol's computation decides.
		got := strings.Fields(l[col:])[0]
		if got != "True[computed]" {
			t.Errorf("ACCEPTED %q in %q", got, l)
		}
	}
}

// TestSimulateDetailSameOutput: text and junit print the same bytes whether the results
// are built in full (traced, with the AuthPolicy view) or with the detail those formats
// ask for (render.SimulateDetail), on every scenario with its expectations, with every
// expectation turned around (so that every failure prints its reason), and under
// several semantics.
func TestSimulateDetailSameOutput(t *testing.T) {
	dirs := []string{"../../testdata/examples"}
	m, _ := filepath.Glob("../../testdata/simulate/*")
	dirs = append(dirs, m...)
	sems, err := effective.ParsePresets("all")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		t.Run(filepath.Base(d), func(t *testing.T) {
			s := loadScenarioManifests(t, d)
			data, err := os.ReadFile(requestsOf(d))
			if err != nil {
				t.Fatal(err)
			}
			for _, flip := range []bool{false, true} {
				for _, ss := range [][]effective.Semantics{sems[:1], sems} {
					rf, err := explain.ParseRequestFile("requests.yaml", data, "default")
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range rf.Requests {
						if flip && r.Expect != explain.Allow {
							r.Expect = explain.Allow
						} else if flip {
							r.Expect = explain.Deny
						}
					}
					full, err := explain.New(model.New(s), ss, rf.TrustDomain).Explain(explain.Full, rf.Requests...)
					if err != nil {
						t.Fatal(err)
					}
					for _, out := range []render.Format{"text", "junit"} {
						brief, err := explain.New(model.New(s), ss, rf.TrustDomain).Explain(render.SimulateDetail(out), rf.Requests...)
						if err != nil {
							t.Fatal(err)
						}
						var want, got bytes.Buffer
						if out == "text" {
							err = render.SimulateText(&want, full, render.Styler{})
							if err == nil {
								err = render.SimulateText(&got, brief, render.Styler{})
							}
						} else {
							err = render.SimulateJUnit(&want, "requests.yaml", full)
							if err == nil {
								err = render.SimulateJUnit(&got, "requests.yaml", brief)
							}
						}
						if err != nil {
							t.Fatal(err)
						}
						if got.String() != want.String() {
							t.Errorf("%s (flip %v, %d semantics):\n got\n%s\n want\n%s", out, flip, len(ss), got.String(), want.String())
						}
					}
					if _, failed := render.SimulateSummary(full); flip && failed == 0 {
						t.Error("no expectation fails once turned around")
					}
				}
			}
		})
	}
}

// loadScenarioManifests loads the manifests of a scenario directory: every YAML file
// but its requests.yaml.
func loadScenarioManifests(t *testing.T, dir string) *snapshot.Snapshot {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	var manifests []string
	for _, f := range files {
		if filepath.Base(f) != "requests.yaml" {
			manifests = append(manifests, f)
		}
	}
	s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: manifests})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// requestsOf is the request file of a scenario directory: its requests.yaml, or for the
// shipped examples testdata/requests.yaml (kept out of the folder so that kubectl apply
// -f testdata/examples/ applies it whole).
func requestsOf(dir string) string {
	if filepath.Base(dir) == "examples" {
		return filepath.Join(filepath.Dir(dir), "requests.yaml")
	}
	return filepath.Join(dir, "requests.yaml")
}
