package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/agpol/agpol/internal/snapshot"
)

// LoadNotes writes what loading s noticed: fields the API server would drop and
// objects it would refuse (unless reportsDropped: lint reports each itself), the warnings of a live read, and
// the objects of kinds agpol does not use. The first two count the objects the load
// admitted; how many it did not (Snapshot.Unadmitted) is said after them.
func LoadNotes(w io.Writer, s *snapshot.Snapshot, reportsDropped bool) {
	if dropped := s.DroppedFields(); len(dropped) > 0 && !reportsDropped {
		// A note on how the input was read, not a gap in it: stderr only.
		d := dropped[0]
		fmt.Fprintf(w, "warning: %d field(s) of the manifests are not stored by the API server and were left out, as a cluster would (first: %s %s %s %s); agpol lint lists them (AGP102)\n",
			len(dropped), EscapeTerminal(s.FieldPosition(d.Source, d.Path).String()), d.Kind,
			EscapeTerminal(d.Namespace+"/"+d.Name), EscapeTerminal(d.Path))
	}
	if rejected := s.RejectedFields(); len(rejected) > 0 && !reportsDropped {
		d := rejected[0]
		fmt.Fprintf(w, "warning: %d object(s) of the manifests would be refused by the API server, so no cluster holds them as written; answers on them are about objects that cannot exist (first: %s %s %s: %s); agpol lint lists them (AGP101)\n",
			countObjects(rejected), EscapeTerminal(s.FieldPosition(d.Source, d.Path).String()), d.Kind,
			EscapeTerminal(d.Namespace+"/"+d.Name), EscapeTerminal(d.Rejected))
	}
	if s.Unadmitted > 0 {
		why := "they are printed as written and nothing is decided on them"
		if s.UnadmittedUnread {
			why = "the answer does not read them"
		}
		fmt.Fprintf(w, "note: %d object(s) of the manifests were not checked against their CRDs (fields the API server would drop, lists it would refuse): %s; agpol lint checks them (AGP101, AGP102)\n", s.Unadmitted, why)
	}
	for _, x := range s.Warnings {
		fmt.Fprintf(w, "warning: %s\n", x.Message)
	}
	if note := skippedNote(s); note != "" {
		fmt.Fprintln(w, note)
	}
}

// countObjects counts the distinct objects of fields.
func countObjects(fields []snapshot.DroppedField) int {
	seen := map[snapshot.Source]bool{}
	for _, d := range fields {
		seen[d.Source] = true
	}
	return len(seen)
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
