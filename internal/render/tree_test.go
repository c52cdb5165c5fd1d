package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// writeTree draws lipgloss branches, keeps every line within TextWidth, loses no
// word, and puts an item's continuation lines under its first word.
func TestWriteTree(t *testing.T) {
	long := strings.Repeat("rule allows tools/call [balance, history] ", 6)
	root := &node{text: "trace:"}
	g := root.add("gateway allow")
	g.add("matched a#b: " + long)
	g.add("short")
	root.add("backend allow").add("not-matched c#d: " + long)
	var b bytes.Buffer
	writeTree(&b, "  ", root)
	got := b.String()
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if lines[0] != "  trace:" || lines[1] != "  ├── gateway allow" || !strings.HasPrefix(lines[2], "  │   ├── matched a#b: ") ||
		!strings.HasPrefix(lines[3], "  │   │   history") {
		t.Errorf("tree shape:\n%s", got)
	}
	var words []string
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > TextWidth {
			t.Errorf("line %d has %d columns: %q", i+1, w, l)
		}
		if strings.HasSuffix(l, " ") {
			t.Errorf("line %d has trailing blanks: %q", i+1, l)
		}
		for _, f := range strings.Fields(l) {
			if !strings.ContainsAny(f, "├└│─") {
				words = append(words, f)
			}
		}
	}
	want := strings.Fields("trace: gateway allow matched a#b: " + long + "short backend allow not-matched c#d: " + long)
	if strings.Join(words, " ") != strings.Join(want, " ") {
		t.Errorf("words lost or reordered:\n%s", got)
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "          ") {
		t.Errorf("continuation of the last item not under its first word: %q", last)
	}
}

// A style that spans a wrapped item is closed at the end of each line and opened
// again on the next, so the branches between the lines stay plain.
func TestCloseStylesPerLine(t *testing.T) {
	st := Styler{Color: true}
	in := st.Yellow("one "+st.Bold("two")+" three") + " four"
	s := wrapHang(in, 9, 0)
	got := closeStylesPerLine(s)
	for i, l := range strings.Split(got, "\n") {
		depth := 0
		for j := 0; j+1 < len(l); j++ {
			if l[j] == styleMark {
				if l[j+1] == styleEnd {
					depth--
				} else {
					depth++
				}
				j++
			}
		}
		if depth != 0 {
			t.Errorf("line %d leaves %d styles open: %q", i+1, depth, l)
		}
	}
	var b bytes.Buffer
	tw := st.Writer(&b)
	_, _ = tw.Write([]byte(strings.ReplaceAll(got, "\n", "\n│ ")))
	if !strings.Contains(b.String(), "\n│ ") {
		t.Errorf("a branch between lines is styled: %q", b.String())
	}
}
