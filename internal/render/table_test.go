package render

import (
	"bytes"
	"strings"
	"testing"
)

// TestTableText: kubectl's look (left-aligned, three spaces, no trailing blanks) when
// the table fits; when it does not, the widest column wraps at spaces first, the gap
// narrows to two spaces when needed, and a word longer than the room breaks (at a
// hyphen, slash, '#' or dot when it can) so the table keeps its width; only a table
// that cannot fit even with broken words is wider.
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
		{"words broken", Table{Header: []string{"A", "B"}, Rows: [][]string{{"x", "unbreakable-word-longer-than-room"}}}, 20,
			"A  B\nx  unbreakable-word-\n   longer-than-room\n"},
		{"names broken at a slash", Table{Header: []string{"WHO", "RULE"}, Rows: [][]string{{"sa:a/b", "tools/calc-arithmetic#handshake"}}}, 26,
			"WHO     RULE\nsa:a/b  tools/calc-\n        arithmetic#\n        handshake\n"},
		{"too narrow even broken", Table{Header: []string{"HEADER-ONE", "HEADER-TWO"}, Rows: [][]string{{"a", "b"}}}, 12,
			"HEADER-ONE  HEADER-TWO\na           b\n"},
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

// TestTableWriteFit: get's tables keep kubectl's layout; fitted to a terminal's width,
// the widest column that is not a name gives way, its cells cut with "…"; NAMESPACE,
// NAME and the first column stay whole; width 0 (a pipe) prints every cell whole.
func TestTableWriteFit(t *testing.T) {
	tab := Table{Header: []string{"NAMESPACE", "NAME", "LISTENERS", "AGE"},
		Rows: [][]string{{"infra", "a-long-gateway-name", "https:HTTPS/443,http:HTTP/80,grpc:HTTP/8080", "3d"}}}
	for _, tc := range []struct {
		width int
		want  string
	}{
		{0, "NAMESPACE   NAME                  LISTENERS                                     AGE\n" +
			"infra       a-long-gateway-name   https:HTTPS/443,http:HTTP/80,grpc:HTTP/8080   3d\n"},
		{60, "NAMESPACE   NAME                  LISTENERS              AGE\n" +
			"infra       a-long-gateway-name   https:HTTPS/443,htt…   3d\n"},
		{20, "NAMESPACE   NAME                  LISTENERS   AGE\n" +
			"infra       a-long-gateway-name   https:HT…   3d\n"},
	} {
		var b bytes.Buffer
		if err := tab.WriteFit(&b, false, tc.width); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("width %d:\n%s\nwant\n%s", tc.width, b.String(), tc.want)
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
