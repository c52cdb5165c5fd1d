package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/testsupport/difftest"
)

// shuffledExamples copies the documents of testdata/examples (not its request file)
// into dir, in an order and file layout drawn from seed: documents shuffled, spread over
// files with names that sort differently.
func shuffledExamples(t *testing.T, dir string, seed uint64) {
	t.Helper()
	files, err := filepath.Glob("testdata/examples/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, f := range files {
		if filepath.Base(f) == "requests.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
			if strings.Contains(d, "kind:") {
				docs = append(docs, strings.Trim(d, "\n")+"\n")
			}
		}
	}
	if len(docs) < 10 {
		t.Fatalf("only %d documents in the examples", len(docs))
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	r.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
	nfiles := 2 + r.IntN(4)
	out := make([][]string, nfiles)
	for i, d := range docs {
		out[i%nfiles] = append(out[i%nfiles], d)
	}
	for i, ds := range out {
		name := filepath.Join(dir, fmt.Sprintf("%c-%d.yaml", 'z'-rune(i*int(seed%5+1)%26), r.IntN(1000)))
		if err := os.WriteFile(name, []byte(strings.Join(ds, "---\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// positions are file:line[:column] source positions and the file, line and column
// fields of JSON, which differ between layouts.
var positions = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[^\s"(\[]*\.yaml:\d+(:\d+)?`), "FILE:POS"},
	{regexp.MustCompile(`"file": "[^"]*"`), `"file": "FILE"`},
	{regexp.MustCompile(`"(line|column)": \d+`), `"$1": 0`},
}

func withoutPositions(s string) string {
	for _, p := range positions {
		s = p.re.ReplaceAllString(s, p.with)
	}
	return s
}

// TestDeterministicOutput: the same objects in a different order and file layout give
// the same output, apart from file positions, for every command that prints decisions
// or findings; and one input gives the same output twice.
func TestDeterministicOutput(t *testing.T) {
	t.Chdir("../..")
	render.Now = func() time.Time { return fixedNow }
	defer func() { render.Now = realNow }()
	dirs := []string{"testdata/examples"}
	for _, seed := range []uint64{1, 2, 3} {
		d := t.TempDir()
		shuffledExamples(t, d, seed)
		dirs = append(dirs, d)
	}
	commands := [][]string{
		{"describe", "gateway", "infra/edge"},
		{"describe", "xbackend", "pay/ledger"},
		{"describe", "httproute", "pay/ledger", "--semantics", "proposal-0059"},
		{"describe", "xap", "-A"},
		{"describe", "authpolicies", "-A", "-o", "json"},
		{"explain", "--from", "sa:agents/billing", "--gateway", "infra/edge", "--host", "ledger.mcp.example.com", "--tool", "refund", "--header", "X-Tenant=a", "--header", "x-tenant=b", "--time", "2026-05-01T10:00:00Z", "-o", "json"},
		{"explain", "--from", "sa:agents/analytics", "--gateway", "infra/edge", "--backend", "tools/calc", "--tool", "add", "--time", "2026-05-01T10:00:00Z", "--semantics", "all"},
		{"simulate", "--requests", "testdata/requests.yaml", "-o", "json", "--semantics", "all"},
		// Findings are ordered by file position: compared as a set (sorted lines).
		{"lint", "--fail-on", "none"},
		{"get", "xap,xb,gw,routes,authpolicies", "-A", "-o", "json"},
		{"get", "xap,xb,gw,routes,authpolicies", "-A", "-o", "wide"},
		{"effective", "authpolicy", "--target", "httproute/pay/ledger", "-o", "json"},
		{"matrix", "--semantics", "all"},
		{"who-can", "--tool", "refund", "--backend", "pay/ledger"},
	}
	for _, cmd := range commands {
		t.Run(strings.Join(cmd[:3], " "), func(t *testing.T) {
			var want string
			for i, d := range dirs {
				args := append(append([]string{}, cmd...), "-f", d)
				out, errOut, code := runDecide(t, "", args...)
				if code == exitUsage {
					t.Fatalf("%s: exit %d: %s", d, code, errOut)
				}
				again, _, _ := runDecide(t, "", args...)
				if again != out {
					t.Fatalf("%s: two runs on the same input differ:\n%s", d, firstDiff(out, again))
				}
				got := withoutPositions(out)
				if cmd[0] == "lint" {
					lines := strings.Split(got, "\n")
					sort.Strings(lines)
					got = strings.Join(lines, "\n")
				} else {
					// Text wraps at 100 columns, and the file names differ in length from one
					// layout to the next: compare the words, without the lines of a tree
					// (explain's trace, describe's chains) that a wrapped item continues on.
					var words []string
					for _, f := range strings.Fields(got) {
						if f != "│" {
							words = append(words, f)
						}
					}
					got = strings.Join(words, " ")
				}
				if i == 0 {
					want = got
					continue
				}
				if got != want {
					t.Errorf("layout %d (%s) differs from testdata/examples:\n%s", i, d, firstDiff(want, got))
				}
			}
		})
	}
}

// firstDiff shows the first differing line of two outputs.
func firstDiff(a, b string) string {
	n, x, y := difftest.FirstLineDiff(a, b)
	if n == 0 {
		return "(same)"
	}
	return fmt.Sprintf("line %d:\n- %s\n+ %s", n, x, y)
}
