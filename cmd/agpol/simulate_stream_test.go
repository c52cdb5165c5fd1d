package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/render"
)

// TestSimulateStreamsSameBytes: simulate writes each result as it is decided; its
// output in every format is byte for byte what rendering all the results at once
// gives (the document of json and yaml, with the summary after the results).
func TestSimulateStreamsSameBytes(t *testing.T) {
	t.Chdir("../..")
	s := loadScenarioManifests(t, "testdata/examples")
	sems, err := effective.ParsePresets("all")
	if err != nil {
		t.Fatal(err)
	}
	full, err := os.ReadFile("testdata/requests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The same requests without expectations (no summary), and none at all.
	noExpect := filepath.Join(dir, "no-expect.yaml")
	var kept []string
	for _, l := range strings.Split(string(full), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "expect") {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(noExpect, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(empty, []byte("requests: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, reqFile := range []string{"testdata/requests.yaml", noExpect, empty} {
		data, err := os.ReadFile(reqFile)
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range []render.Format{"text", "json", "yaml", "junit"} {
			t.Run(filepath.Base(reqFile)+" "+string(format), func(t *testing.T) {
				rf, err := explain.ParseRequestFile(reqFile, data, "default")
				if err != nil {
					t.Fatal(err)
				}
				results, err := explain.New(model.New(s), sems, rf.TrustDomain).Explain(render.SimulateDetail(format), rf.Requests...)
				if err != nil {
					t.Fatal(err)
				}
				var want bytes.Buffer
				doc := render.NewDecisionList(s, results)
				if p, f := render.SimulateSummary(results); p+f > 0 {
					doc.Summary = &render.Summary{Passed: p, Failed: f}
				}
				switch format {
				case "json":
					err = render.JSON(&want, doc)
				case "yaml":
					err = render.YAML(&want, doc)
				case "junit":
					err = render.SimulateJUnit(&want, reqFile, results)
				default:
					err = render.SimulateText(&want, results, render.Styler{})
				}
				if err != nil {
					t.Fatal(err)
				}
				got, errOut, code := runDecide(t, "", "simulate", "-f", "testdata/examples", "--requests", reqFile, "--semantics", "all", "-o", string(format))
				if code == exitUsage {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				if format == "text" && len(results) == 0 {
					want.WriteString("0 requests in " + reqFile + ": nothing was simulated\n")
				}
				if format == "text" && reqFile == "testdata/requests.yaml" {
					p, f := render.SimulateSummary(results)
					want.WriteString(strings.Join([]string{itoa(p), " passed, ", itoa(f), " failed\n"}, ""))
				}
				if got != want.String() {
					t.Errorf("streamed output differs from the whole rendering:\n%s", firstDiff(want.String(), got))
				}
			})
		}
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
