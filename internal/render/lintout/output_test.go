package lintout

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jstemmer/go-junit-report/v2/junit"
	sarif "github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/config"
	"github.com/agpol/agpol/internal/lint"
	textrender "github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/snapshot"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/lint/output")

const dir = "../../../testdata/lint/output"

// report lints the output fixture with its config file, as agpol lint does, and
// shortens file names so that golden files do not depend on the test's directory.
func report(t *testing.T) *lint.Report {
	t.Helper()
	objs, pos, err := cluster.ReadFiles(cluster.FileOptions{Filenames: []string{dir + "/../base.yaml", dir + "/manifests.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	var keep []cluster.RawObject
	for _, o := range objs {
		var scratch snapshot.Snapshot
		if scratch.Add(o.Object(), o.Source) == nil {
			keep = append(keep, o)
		}
	}
	s, err := cluster.Build(keep, pos, "files")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(dir + "/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx := lint.NewContext(s)
	ctx.Now = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	r := lint.Run(ctx, lint.Options{Config: cfg})
	for i := range r.Findings {
		f := &r.Findings[i]
		f.Source.File = "manifests/" + filepath.Base(f.Source.File)
		if f.Suppressed != nil {
			f.Suppressed.Source.File = filepath.Base(f.Suppressed.Source.File)
		}
	}
	return r
}

func render(t *testing.T, format string, o Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, textrender.Format(format), report(t), o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(dir, name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/render/lintout -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (run go test ./internal/render/lintout -update and review the diff):\n%s", name, got)
	}
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name, format string
		opts         Options
	}{
		{"text.txt", "text", Options{FailOn: "error"}},
		{"text-suppressed.txt", "text", Options{FailOn: "error", ShowSuppressed: true}},
		{"report.json", "json", Options{FailOn: "error", ShowSuppressed: true}},
		{"report.sarif", "sarif", Options{FailOn: "error", ShowSuppressed: true, ToolVersion: "v0.0.0-test"}},
		{"report.junit.xml", "junit", Options{FailOn: "warning", ShowSuppressed: true}},
		{"github.txt", "github", Options{FailOn: "error", ShowSuppressed: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, tt.name, render(t, tt.format, tt.opts))
		})
	}
}

func TestText(t *testing.T) {
	out := string(render(t, "text", Options{FailOn: "error"}))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	line := regexp.MustCompile(`^manifests/manifests\.yaml:\d+:\d+: (error|warning|info) AGP\d{3} \[[a-z-]+\] .+ \((XAccessPolicy|AuthPolicy) [a-z-]+/[a-z-]+( \S+)?\)$`)
	for _, l := range lines[:len(lines)-1] {
		if !line.MatchString(l) {
			t.Errorf("malformed line %q", l)
		}
	}
	if got := lines[len(lines)-1]; got != "2 errors, 1 warning, 1 info, 2 suppressed" {
		t.Errorf("summary %q", got)
	}
	if strings.Contains(out, "suppressed by") {
		t.Error("suppressed findings shown without --show-suppressed")
	}
}

// TestSARIFIsValid validates the SARIF log against the SARIF 2.1.0 JSON schema that
// go-sarif ships, and checks what GitHub code scanning relies on.
func TestSARIFIsValid(t *testing.T) {
	out := render(t, "sarif", Options{FailOn: "error", ShowSuppressed: true})
	rep, err := sarif.FromBytes(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Validate(); err != nil {
		t.Fatalf("SARIF does not validate against the 2.1.0 schema: %v", err)
	}
	var doc struct {
		Version string `json:"version"`
		Schema  string `json:"$schema"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID               string `json:"id"`
						ShortDescription struct{ Text string }
						DefaultConfig    struct{ Level string } `json:"defaultConfiguration"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
				Message   struct{ Text string }
				Locations []struct {
					Physical struct {
						Artifact struct{ URI string } `json:"artifactLocation"`
						Region   struct {
							StartLine   int `json:"startLine"`
							StartColumn int `json:"startColumn"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
				Suppressions []struct {
					Kind          string `json:"kind"`
					Justification string `json:"justification"`
				} `json:"suppressions"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Version != "2.1.0" || !strings.Contains(doc.Schema, "sarif-schema-2.1.0") || len(doc.Runs) != 1 {
		t.Fatalf("header: version %q schema %q runs %d", doc.Version, doc.Schema, len(doc.Runs))
	}
	run := doc.Runs[0]
	if run.Tool.Driver.Name != "agpol" || len(run.Tool.Driver.Rules) != len(lint.Checks()) {
		t.Errorf("driver %q with %d rules", run.Tool.Driver.Name, len(run.Tool.Driver.Rules))
	}
	if len(run.Results) != 6 {
		t.Errorf("%d results, want 6", len(run.Results))
	}
	suppressed := 0
	for _, res := range run.Results {
		if res.RuleIndex < 0 || res.RuleIndex >= len(run.Tool.Driver.Rules) || run.Tool.Driver.Rules[res.RuleIndex].ID != res.RuleID {
			t.Errorf("result %s has ruleIndex %d", res.RuleID, res.RuleIndex)
		}
		if len(res.Locations) != 1 {
			t.Fatalf("result %s has %d locations", res.RuleID, len(res.Locations))
		}
		p := res.Locations[0].Physical
		if p.Artifact.URI != "manifests/manifests.yaml" || p.Region.StartLine < 1 || p.Region.StartColumn < 1 {
			t.Errorf("result %s location %+v", res.RuleID, p)
		}
		if res.Message.Text == "" || res.Level == "" {
			t.Errorf("result %s without message or level", res.RuleID)
		}
		if len(res.Suppressions) > 0 {
			suppressed++
			if res.Suppressions[0].Justification == "" {
				t.Errorf("suppression of %s has no justification", res.RuleID)
			}
		}
	}
	if suppressed != 2 {
		t.Errorf("%d suppressed results, want 2", suppressed)
	}
}

func TestJUnit(t *testing.T) {
	for _, tt := range []struct {
		failOn       lint.Threshold
		wantFailures int
	}{{"error", 2}, {"warning", 3}, {"info", 4}, {"none", 0}} {
		out := render(t, "junit", Options{FailOn: tt.failOn})
		var suites junit.Testsuites
		if err := xml.Unmarshal(out, &suites); err != nil {
			t.Fatal(err)
		}
		failures := 0
		for _, s := range suites.Suites {
			for _, tc := range s.Testcases {
				if tc.Failure != nil {
					failures++
					if !strings.HasPrefix(tc.Name, "manifests/manifests.yaml:") || tc.Failure.Message == "" {
						t.Errorf("failure %+v", tc)
					}
				}
			}
		}
		if failures != tt.wantFailures || len(suites.Suites) != len(lint.Checks()) {
			t.Errorf("fail-on %s: %d failures in %d suites, want %d", tt.failOn, failures, len(suites.Suites), tt.wantFailures)
		}
	}
}

func TestGitHub(t *testing.T) {
	out := string(render(t, "github", Options{FailOn: "error"}))
	cmd := regexp.MustCompile(`^::(error|warning|notice) file=manifests/manifests\.yaml,line=\d+,col=\d+,title=AGP\d{3}::[^\n]+$`)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, l := range lines[:len(lines)-1] {
		if !cmd.MatchString(l) {
			t.Errorf("malformed workflow command %q", l)
		}
	}
	if !strings.Contains(out, "'a,b:c%25d'") {
		t.Errorf("%% not escaped in the message:\n%s", out)
	}
	if got := ghProperty("a:b,c%d\ne"); got != "a%3Ab%2Cc%25d%0Ae" {
		t.Errorf("ghProperty: %q", got)
	}
}

func TestClean(t *testing.T) {
	if got := clean("a\x1b[31mred\nnext\x00\r"); got != `a^[[31mred next\x00\r` {
		t.Errorf("clean: %q", got)
	}
}

func TestUnknownFormat(t *testing.T) {
	if err := Write(&bytes.Buffer{}, "xml", &lint.Report{}, Options{}); err == nil {
		t.Error("unknown format accepted")
	}
}

// TestNotRevalidated: JSON and SARIF say how many live objects the schema checks left
// alone, and say nothing when there were none.
func TestNotRevalidated(t *testing.T) {
	for _, n := range []int{0, 7} {
		r := &lint.Report{NotRevalidated: n}
		for _, format := range []textrender.Format{"json", "sarif"} {
			var b bytes.Buffer
			if err := Write(&b, format, r, Options{}); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				NotRevalidated *int `json:"notRevalidated"`
				Runs           []struct {
					Properties struct {
						NotRevalidated *int `json:"notRevalidated"`
					} `json:"properties"`
				} `json:"runs"`
			}
			if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			got := doc.NotRevalidated
			if format == "sarif" {
				got = doc.Runs[0].Properties.NotRevalidated
			}
			switch {
			case n == 0 && got != nil:
				t.Errorf("%s: notRevalidated %d, want none", format, *got)
			case n > 0 && (got == nil || *got != n):
				t.Errorf("%s: notRevalidated %v, want %d:\n%s", format, got, n, b.String())
			}
		}
	}
}

// TestArtifactURI: SARIF artifact URIs are percent-encoded (RFC 3986), so a path with a
// space or a '#' stays one path for GitHub code scanning.
func TestArtifactURI(t *testing.T) {
	for in, want := range map[string]string{
		"testdata/a.yaml":         "testdata/a.yaml",
		"dir with space/a#b.yaml": "dir%20with%20space/a%23b.yaml",
		"a?b%c.yaml":              "a%3Fb%25c.yaml",
		"c:x/a.yaml":              "./c:x/a.yaml",
	} {
		if got := artifactURI(in); got != want {
			t.Errorf("artifactURI(%q) = %q, want %q", in, got, want)
		}
	}
}
