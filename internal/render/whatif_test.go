package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/whatif"
)

func TestMarkdownEscape(t *testing.T) {
	var b bytes.Buffer
	tab := &Table{Header: []string{"A", "B", "C"}, Rows: [][]string{{"a|b", "<other tool>", "x\ny\x1b[2J"}}}
	if err := tab.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `| a\|b | &lt;other tool&gt; | x y^\[\[2J |`) {
		t.Errorf("markdown row not escaped:\n%s", b.String())
	}
}

func TestCellText(t *testing.T) {
	c := func(d string) whatif.Cell { return whatif.Cell{Decision: d} }
	for _, tc := range []struct {
		o    whatif.Outcome
		want string
	}{
		{whatif.Outcome{Cells: []whatif.Cell{c(explain.Allow)}}, "allow"},
		{whatif.Outcome{Cells: []whatif.Cell{c(explain.Indeterminate)}}, "?"},
		{whatif.Outcome{Cells: []whatif.Cell{c(explain.Deny), c(explain.Allow)}, Differs: true}, "deny*"},
		{whatif.Outcome{}, ""},
	} {
		if got := CellText(tc.o); got != tc.want {
			t.Errorf("CellText(%+v) = %q, want %q", tc.o, got, tc.want)
		}
	}
	if got := othersText([]string{"reference", "pr-220"}, whatif.Outcome{Cells: []whatif.Cell{c(explain.Deny), c(explain.Allow)}, Differs: true}); got != "pr-220=allow" {
		t.Errorf("othersText: %q", got)
	}
}
