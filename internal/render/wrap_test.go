package render

import (
	"bytes"
	"strings"
	"testing"
)

// writeWrapped keeps every line within noteWidth, loses no word, and indents
// continuation lines.
func TestWriteWrapped(t *testing.T) {
	text := strings.Repeat("listener secure accepts the caller over mTLS ", 8)
	var b bytes.Buffer
	writeWrapped(&b, "  ", text, func(s string) string { return s })
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("not wrapped:\n%s", b.String())
	}
	var words []string
	for i, l := range lines {
		if len(l) > TextWidth {
			t.Errorf("line %d has %d columns: %q", i, len(l), l)
		}
		if want := map[bool]string{true: "  ", false: "    "}[i == 0]; !strings.HasPrefix(l, want) || l[len(want)] == ' ' {
			t.Errorf("line %d indent: %q", i, l)
		}
		words = append(words, strings.Fields(l)...)
	}
	if strings.Join(words, " ") != strings.Join(strings.Fields(text), " ") {
		t.Errorf("words lost or reordered:\n%s", b.String())
	}
}
