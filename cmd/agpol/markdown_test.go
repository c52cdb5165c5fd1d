package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMarkdownNeutralised: text a pull request controls (tool names, rule names) comes
// out inert in `diff -o markdown` and `matrix -o markdown`, the comment the GitHub Action
// posts: no image loads, no link renders, no team is mentioned; and every table keeps
// its shape (as many cells in each row as in its header).
func TestMarkdownNeutralised(t *testing.T) {
	dir := t.TempDir()
	repl := strings.NewReplacer(
		"params: [balance, history]", `params: [balance, "![x](https://e.example/x.png)", "@org/team"]`,
		"name: read-only", `name: "[ok](javascript:alert(1))|*b*_i_`+"`c`"+`"`,
	)
	files, err := filepath.Glob("../../testdata/examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("examples: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), []byte(repl.Replace(string(data))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	live := regexp.MustCompile(`!\[|(^|[^\\])\]\(|(^|[^\\])\[ok|@org|(^|[^\\])\*b|(^|[^\\])_i|(^|[^\\])` + "`c")
	for _, args := range [][]string{
		{"diff", "--before", "../../testdata/examples", "--after", dir, "-o", "markdown"},
		{"matrix", "-f", dir, "-o", "markdown"},
	} {
		t.Run(args[0], func(t *testing.T) {
			out, errOut, code := runDecide(t, "", args...)
			if code == exitUsage {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if !strings.Contains(out, "x.png") || !strings.Contains(out, "org/team") {
				t.Fatalf("the hostile names are not in the output:\n%s", out)
			}
			for i, line := range strings.Split(out, "\n") {
				if m := live.FindString(line); m != "" {
					t.Errorf("line %d: live markdown %q: %s", i+1, m, line)
				}
			}
			// Table shape: every row of a table has its header's number of cells.
			cells := func(line string) int { return len(regexp.MustCompile(`(^|[^\\])\|`).FindAllString(line, -1)) }
			want := 0
			for _, line := range strings.Split(out, "\n") {
				switch {
				case !strings.HasPrefix(line, "|"):
					want = 0
				case want == 0:
					want = cells(line)
				case cells(line) != want:
					t.Errorf("row with %d cells, header %d: %s", cells(line), want, line)
				}
			}
		})
	}
}
