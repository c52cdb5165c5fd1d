package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/agpol/agpol/internal/snapshot"
)

// LoadNotes writes what loading s noticed: fields the API server would drop (unless
// reportsDropped: the command reports each itself), the warnings of a live read, and
// the objects of kinds agpol does not use.
func LoadNotes(w io.Writer, s *snapshot.Snapshot, reportsDropped bool) {
	if len(s.Dropped) > 0 && !reportsDropped {
		// A note on how the input was read, not a gap in it: stderr only.
		d := s.Dropped[0]
		fmt.Fprintf(w, "warning: %d field(s) of the manifests are not stored by the API server and were left out, as a cluster would (first: %s %s %s %s); agpol lint lists them (AGP102)\n",
			len(s.Dropped), EscapeTerminal(s.FieldPosition(d.Source, d.Path).String()), d.Kind,
			EscapeTerminal(d.Namespace+"/"+d.Name), EscapeTerminal(d.Path))
	}
	for _, x := range s.Warnings {
		fmt.Fprintf(w, "warning: %s\n", x.Message)
	}
	if note := skippedNote(s); note != "" {
		fmt.Fprintln(w, note)
	}
}

// skippedNote says how many objects of kinds agpol does not use were skipped, kind by
// kind ("" if none). agpol's own side files (request files, kind.agpol.dev) sit among
// manifests by design and are not counted.
func skippedNote(s *snapshot.Snapshot) string {
	var parts []string
	total := 0
	for _, k := range s.SkippedKinds() {
		if strings.HasSuffix(k, ".agpol.dev") {
			continue
		}
		total += s.Skipped[k]
		parts = append(parts, fmt.Sprintf("%s: %d", k, s.Skipped[k]))
	}
	if total == 0 {
		return ""
	}
	noun := "objects"
	if total == 1 {
		noun = "object"
	}
	return fmt.Sprintf("note: skipped %d %s of kinds agpol does not use (%s)", total, noun, strings.Join(parts, ", "))
}
