package render

import (
	"strings"
	"testing"
)

// WrapExamples: a long command line breaks between shell words (a flag kept with its
// value, a quoted word whole), each broken line ending in " \" and continued four columns
// in; a long comment continues as a comment; lines that fit are kept as they are.
func TestWrapExamples(t *testing.T) {
	in := "  # May the Kuadrant persona john reach the toystore's routes on the first of May?\n" +
		"  agpol can-i --personas personas.yaml --from john -f toystore.yaml --time 2026-05-01T10:00:00Z\n" +
		"  agpol simulate --requests r.yaml --where 'a quoted value with spaces' -f dir \\\n" +
		"      -o json\n" +
		"  agpol version"
	want := "  # May the Kuadrant persona john reach the toystore's routes on the\n" +
		"  # first of May?\n" +
		"  agpol can-i --personas personas.yaml --from john -f toystore.yaml \\\n" +
		"      --time 2026-05-01T10:00:00Z\n" +
		"  agpol simulate --requests r.yaml \\\n" +
		"      --where 'a quoted value with spaces' -f dir \\\n" +
		"      -o json\n" +
		"  agpol version"
	if got := WrapExamples(in, 72); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := WrapExamples(in, 200); got != in {
		t.Errorf("text that fits changed:\n%s", got)
	}
}

// WrapHanging: a subcommand's summary continues under its column.
func TestWrapHanging(t *testing.T) {
	got := WrapHanging("  can-i       What may an identity call: one yes/no answer, or everything with --list", 80, 12)
	want := "  can-i       What may an identity call: one yes/no answer, or everything with\n" +
		"              --list"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	for _, l := range strings.Split(got, "\n") {
		if len(l) > 80 {
			t.Errorf("%d columns: %q", len(l), l)
		}
	}
}
