package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/agpol/agpol/internal/render"
)

// TestTextFitsWidth: the text of matrix and can-i --list (and of who-can, can-i, diff
// and lint --list) on the shipped examples fits a 100-column terminal: long cells wrap
// under their column, long lines under their first words. Each output is pinned by a
// golden file.
func TestTextFitsWidth(t *testing.T) {
	t.Chdir("../..")
	if w := outputWidth(&strings.Builder{}); w != 100 {
		t.Fatalf("piped output is %d columns wide, want 100", w)
	}
	ex := []string{"-f", "testdata/examples"}
	golden := "testdata/whatif/golden"
	cases := []struct {
		golden string
		args   []string
	}{
		{"matrix.txt", append([]string{"matrix"}, ex...)},
		{"matrix-semantics.txt", append([]string{"matrix", "--semantics", "all"}, ex...)},
		{"width/matrix-ungroup.txt", append([]string{"matrix", "--ungroup"}, ex...)},
		{"width/matrix-inventory.txt", append([]string{"matrix", "--tools", "testdata/whatif/tools.json"}, ex...)},
		{"cani-list-billing.txt", append([]string{"can-i", "--list", "--from", "sa:agents/billing"}, ex...)},
		{"width/cani-list-analytics.txt", append([]string{"can-i", "--list", "--from", "sa:agents/analytics"}, ex...)},
		{"width/cani-list-support.txt", append([]string{"can-i", "--list", "--from", "sa:agents/support"}, ex...)},
		{"width/cani-list-anonymous.txt", append([]string{"can-i", "--list", "--from", "anonymous"}, ex...)},
		{"cani-indeterminate.txt", append([]string{"can-i", "--from", "sa:agents/billing", "--tool", "refund", "--backend", "pay/ledger"}, ex...)},
		{"whocan-refund.txt", append([]string{"who-can", "--tool", "refund", "--backend", "pay/ledger"}, ex...)},
		{"whocan-tools-list.txt", append([]string{"who-can", "--method", "tools/list", "--backend", "tools/calc", "--gateway", "infra/edge"}, ex...)},
		{"diff.txt", []string{"diff", "--before", "testdata/examples", "--after", "testdata/whatif/after"}},
		{"width/lint-list.txt", []string{"lint", "--list"}},
	}
	for _, tc := range cases {
		t.Run(tc.golden, func(t *testing.T) {
			out, errOut, code := runDecide(t, "", tc.args...)
			if code == exitUsage {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if w := lipgloss.Width(line); w > 100 {
					t.Errorf("line %d is %d columns wide:\n%s", i+1, w, line)
				}
			}
			decideGolden(t, filepath.Join(golden, tc.golden), out)
		})
	}
}

// TestGetAccessPoliciesFitWidth: the XAccessPolicy table of the shipped examples, with its
// ACCEPTED and ENFORCED columns, fits a 100-column terminal.
func TestGetAccessPoliciesFitWidth(t *testing.T) {
	t.Chdir("../..")
	render.Now = func() timeT { return fixedNow }
	defer func() { render.Now = realNow }()
	out, errOut, code := runDecide(t, "", "get", "xap", "-A", "-f", "testdata/examples")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "ENFORCED") {
		t.Fatalf("no ENFORCED column:\n%s", out)
	}
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if w := lipgloss.Width(line); w > 100 {
			t.Errorf("line %d is %d columns wide:\n%s", i+1, w, line)
		}
	}
}

// TestEveryCommandFitsWidth: the text output of every command on the shipped examples fits
// an 80-, 100- and 120-column terminal (tables break long names in their cells, get's
// tables cut the cells of columns that are not names with "…"): get (each kind,
// kubectl's default columns; -o wide is wide by design, as in kubectl), describe (each kind), explain and simulate (each semantics),
// effective, can-i (--list for every caller, with every semantics), who-can, matrix, diff,
// lint --list and --explain of every check, version, and --help of every command and
// subcommand (usage line, subcommand list, prose, examples, flags), as agpol and as the
// kubectl plugin. Not
// covered: lint's findings, one line each (file:line:col: …) for editors and CI logs to parse.
func TestEveryCommandFitsWidth(t *testing.T) {
	t.Chdir("../..")
	render.Now = func() timeT { return fixedNow }
	defer func() { render.Now = realNow }()
	ex := []string{"-f", "testdata/examples"}
	var cases [][]string
	add := func(args ...string) { cases = append(cases, args) }
	withEx := func(args ...string) { add(append(args, ex...)...) }
	for _, kind := range []string{"gateways", "httproutes", "xbackends", "xaccesspolicies", "authpolicies"} {
		withEx("get", kind)
		withEx("get", kind, "-A")
		withEx("describe", kind, "-A")
	}
	withEx("get", "gateway,httproute,xb,xap,authpolicy", "-A")
	withEx("describe", "xap", "tools/calc-legacy")
	for _, sem := range []string{"reference", "all"} {
		withEx("explain", "--semantics", sem, "--from", "sa:agents/support", "--gateway", "infra/edge", "--host", "ledger.mcp.example.com", "--tool", "refund")
		withEx("explain", "--semantics", sem, "--from", "sa:agents/billing", "--gateway", "infra/edge", "--host", "ledger.mcp.example.com", "--tool", "refund")
		withEx("explain", "--semantics", sem, "--from", "anonymous", "--gateway", "infra/edge", "--backend", "tools/calc", "--tool", "divide")
		withEx("explain", "--semantics", sem, "--from", "sa:agents/analytics", "--gateway", "infra/edge", "--listener", "http", "--host", "tools.mcp.example.com", "--path", "/calc", "--method", "GET")
		withEx("simulate", "--semantics", sem, "--requests", "testdata/requests.yaml")
		for _, who := range []string{"sa:agents/billing", "sa:agents/support", "sa:agents/analytics", "anonymous"} {
			withEx("can-i", "--list", "--semantics", sem, "--from", who)
		}
		withEx("who-can", "--semantics", sem, "--tool", "refund", "--backend", "pay/ledger")
		withEx("matrix", "--semantics", sem)
	}
	for _, target := range []string{"gateway/infra/edge", "httproute/pay/ledger", "httproute/tools/tools"} {
		withEx("effective", "authpolicy", "--target", target)
	}
	withEx("can-i", "--from", "sa:agents/billing", "--tool", "refund", "--backend", "pay/ledger")
	add("diff", "--before", "testdata/examples", "--after", "testdata/whatif/after")
	withEx("diff", "--semantics", "reference", "--semantics", "pr-293")
	add("lint", "--list")
	add("version")
	for _, c := range commandPaths(t) {
		add(append(c, "--help")...)
		add(append([]string{"kubectl-agpol"}, append(c, "--help")...)...) // the plugin's name is longer
	}
	list, _, _ := runDecide(t, "", "lint", "--list")
	for _, f := range strings.Fields(list) {
		if strings.HasPrefix(f, "AGP") {
			add("lint", "--explain", f)
		}
	}
	defer func() { outputWidth, outputTerminal = render.Width, render.IsTerminal }()
	outputTerminal = func(io.Writer) bool { return true }
	for _, width := range []int{80, 100, 120} {
		outputWidth = func(io.Writer) int { return width }
		for _, args := range cases {
			t.Run(fmt.Sprintf("%d/%s", width, strings.Join(args, " ")), func(t *testing.T) {
				out, errOut, code := runDecide(t, "", args...)
				if args[0] == "kubectl-agpol" {
					out, errOut, code = runAs(t, args[0], args[1:]...)
				}
				if code == exitUsage || out == "" {
					t.Fatalf("exit %d, no output: %s", code, errOut)
				}
				for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
					if w := lipgloss.Width(line); w > width {
						t.Errorf("line %d is %d columns wide:\n%s", i+1, w, line)
					}
				}
			})
		}
	}
}

// TestWidthFollowsTerminal: the text of explain (a tree), simulate and can-i --list fills
// the width the terminal gives (render.Width: 80 and 120 here), pinned by goldens; at 120
// columns lines are longer than at 100, and at 80 no line (tree lines included) is wider
// than 80; lint --explain's prose reflows to fit 80.
func TestWidthFollowsTerminal(t *testing.T) {
	t.Chdir("../..")
	defer func() { outputWidth = render.Width }()
	ex := []string{"-f", "testdata/examples"}
	cases := []struct {
		name string
		args []string
	}{
		{"explain-support-refund", append([]string{"explain", "--from", "sa:agents/support", "--gateway", "infra/edge", "--host", "ledger.mcp.example.com", "--tool", "refund"}, ex...)},
		{"simulate", append([]string{"simulate", "--requests", "testdata/requests.yaml"}, ex...)},
		{"describe-route", append([]string{"describe", "httproute", "pay/ledger"}, ex...)},
		{"lint-explain-AGP209", []string{"lint", "--explain", "AGP209"}},
	}
	for _, width := range []int{80, 120} {
		outputWidth = func(io.Writer) int { return width }
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%d/%s", width, tc.name), func(t *testing.T) {
				out, errOut, code := runDecide(t, "", tc.args...)
				if code == exitUsage {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				widest := 0
				for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
					w := lipgloss.Width(line)
					widest = max(widest, w)
					if w > width {
						t.Errorf("line %d is %d columns wide:\n%s", i+1, w, line)
					}
				}
				if width > 100 && tc.args[0] != "lint" && widest <= 100 { // lint --explain: prose reflows only to fit
					t.Errorf("no line uses the columns beyond 100 of a %d-column terminal", width)
				}
				decideGolden(t, filepath.Join("testdata/whatif/golden/width", fmt.Sprintf("%s-%d.txt", tc.name, width)), out)
			})
		}
	}
}

// TestGetFitsOnlyTerminals: in an 80-column terminal get cuts the LISTENERS cell (not
// the names) to fit; piped, whatever COLUMNS says, it prints every cell whole, as
// kubectl does, for scripts to read.
func TestGetFitsOnlyTerminals(t *testing.T) {
	t.Chdir("../..")
	render.Now = func() timeT { return fixedNow }
	defer func() { render.Now = realNow }()
	defer func() { outputWidth, outputTerminal = render.Width, render.IsTerminal }()
	outputWidth = func(io.Writer) int { return 80 }
	for _, terminal := range []bool{true, false} {
		outputTerminal = func(io.Writer) bool { return terminal }
		out, errOut, code := runDecide(t, "", "get", "gateways", "-A", "-f", "testdata/examples")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		whole := strings.Contains(out, "https:HTTPS/443,http:HTTP/80")
		if terminal == whole || !strings.Contains(out, "infra       edge") {
			t.Errorf("terminal %v: cells whole %v:\n%s", terminal, whole, out)
		}
		if terminal && !strings.Contains(out, "…") {
			t.Errorf("terminal: no cut cell:\n%s", out)
		}
	}
}

// commandPaths is every command and subcommand of agpol (the root as an empty path),
// from the command tree itself, so that a new command is covered without being listed.
func commandPaths(t *testing.T) [][]string {
	t.Helper()
	a := &app{streams: genericiooptions.NewTestIOStreamsDiscard(), name: "agpol", progress: render.NewProgress(io.Discard)}
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				walk(sub, append(slices.Clone(path), sub.Name()))
			}
		}
	}
	walk(a.newRootCmd(), []string{})
	if len(paths) < 15 {
		t.Fatalf("only %d commands found: %v", len(paths), paths)
	}
	return paths
}

// runAs is runDecide with argv[0] set to name (kubectl-agpol: agpol as a kubectl plugin).
func runAs(t *testing.T, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code = run(context.Background(), append([]string{name}, args...), streams)
	return out.String(), errOut.String(), code
}
