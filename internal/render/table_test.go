package render

import (
	"bytes"
	"strings"
	"testing"
)

// TestTableText: kubectl's look (left-aligned, three spaces, no trailing blanks) when
// the table fits; when it does not, the widest column wraps at spaces first, the gap
// narrows to two spaces when needed, and a word longer than the room stays whole.
func TestTableText(t *testing.T) {
	long := "alpha beta gamma delta epsilon zeta eta theta"
	for _, tc := range []struct {
		name  string
		tab   Table
		width int
		want  string
	}{
		{"fits", Table{Header: []string{"A", "B"}, Rows: [][]string{{"x", "y"}, {"xxxx", ""}}}, 100,
			"A      B\nx      y\nxxxx\n"},
		{"escaped", Table{Header: []string{"A"}, Rows: [][]string{{"a\x1b[2Jb\rc"}}}, 0,
			"A\na^[[2Jb\\rc\n"},
		{"widest wraps", Table{Header: []string{"ID", "TEXT"}, Rows: [][]string{{"one", long}}}, 30,
			"ID    TEXT\none   alpha beta gamma delta\n      epsilon zeta eta theta\n"},
		{"narrow gap", Table{Header: []string{"AAAAAAAAAA", "BBBBBBBBBB", "CCCCCCCCCC"}, Rows: [][]string{{"a", "b", "c"}}}, 34,
			"AAAAAAAAAA  BBBBBBBBBB  CCCCCCCCCC\na           b           c\n"},
		{"words whole", Table{Header: []string{"A", "B"}, Rows: [][]string{{"x", "unbreakable-word-longer-than-room"}}}, 20,
			"A  B\nx  unbreakable-word-longer-than-room\n"},
	} {
		var b bytes.Buffer
		if err := tc.tab.Text(&b, tc.width); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("%s:\n%q\nwant\n%q", tc.name, b.String(), tc.want)
		}
	}
}

// TestWrapLine: lines within the width are unchanged; longer ones break at spaces,
// keep extra spaces and placeholders such as "<other tool>" whole, and indent their
// continuations two columns more.
func TestWrapLine(t *testing.T) {
	if got := wrapLine("  short  line", 20); got != "  short  line" {
		t.Errorf("short line changed: %q", got)
	}
	got := wrapLine("  before:  one two three <other tool> four five", 24)
	for _, l := range strings.Split(got, "\n") {
		if len(l) > 24 {
			t.Errorf("line %q wider than 24", l)
		}
	}
	if !strings.HasPrefix(got, "  before:  one") || !strings.Contains(got, "<other tool>") || !strings.Contains(got, "\n    ") {
		t.Errorf("wrapped:\n%s", got)
	}
	if strings.Join(strings.Fields(got), " ") != "before: one two three <other tool> four five" {
		t.Errorf("words lost or reordered:\n%s", got)
	}
}
