package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/lint"
)

func TestLintNotes(t *testing.T) {
	for _, tc := range []struct {
		format string
		notes  lint.Notes
		want   []string
	}{
		{"text", lint.Notes{}, nil},
		{"text", lint.Notes{NothingRead: true}, []string{"note: no objects read from the input: nothing to lint"}},
		{"text", lint.Notes{NotRevalidated: 1}, []string{"note: 1 object read from the cluster not validated again"}},
		{"github", lint.Notes{NotRevalidated: 3}, []string{"note: 3 objects read from the cluster"}},
		// JSON and SARIF carry the count in the report.
		{"json", lint.Notes{NotRevalidated: 3}, nil},
		{"sarif", lint.Notes{NothingRead: true, NotRevalidated: 3}, []string{"nothing to lint"}},
	} {
		var b bytes.Buffer
		LintNotes(&b, Format(tc.format), "the input", tc.notes)
		lines := strings.Count(b.String(), "\n")
		if lines != len(tc.want) {
			t.Errorf("%s %+v: %d lines, want %d:\n%s", tc.format, tc.notes, lines, len(tc.want), b.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s %+v: no %q in\n%s", tc.format, tc.notes, w, b.String())
			}
		}
	}
}
