package render

import (
	"io"

	"github.com/agpol/agpol/internal/snapshot"
)

// Completeness says, inside a JSON or YAML report, what the answer did not see: objects
// the cluster refused to list (RBAC), kinds it does not serve, and other loading
// warnings. Text output prints the same warnings on stderr; a program reading the JSON
// needs them in the document, so that a partial answer is never taken for a whole one.
// Each field is omitted when there is nothing to say (a complete read without warnings
// leaves reports as they were). Reports embed it, which puts its fields at the top level.
type Completeness struct {
	// Partial is true when some objects of the kinds agpol reads could not be read, so
	// the answer may miss policies, routes or backends.
	Partial bool `json:"partial,omitempty"`
	// NotInstalled lists the kinds the cluster does not serve ("resource.group").
	NotInstalled []string `json:"notInstalled,omitempty"`
	// Warnings are the non-fatal problems met while loading, as printed on stderr.
	Warnings []string `json:"warnings,omitempty"`
}

// CompletenessOf is the completeness of the answers computed from the snapshots.
func CompletenessOf(snaps ...*snapshot.Snapshot) Completeness {
	return completenessOf(snaps, nil)
}

// CompletenessOfSides is CompletenessOf for labelled snapshots (labels[i] names snaps[i]).
func CompletenessOfSides(labels []string, snaps ...*snapshot.Snapshot) Completeness {
	return completenessOf(snaps, labels)
}

func completenessOf(snaps []*snapshot.Snapshot, labels []string) Completeness {
	var c Completeness
	seen := map[string]bool{}
	for i, s := range snaps {
		if s == nil {
			continue
		}
		prefix := ""
		if i < len(labels) && labels[i] != "" {
			prefix = labels[i] + ": "
		}
		c.Partial = c.Partial || s.Partial
		for _, k := range s.NotInstalled {
			if !seen[k] {
				seen[k] = true
				c.NotInstalled = append(c.NotInstalled, k)
			}
		}
		for _, w := range s.Warnings {
			c.Warnings = append(c.Warnings, prefix+w.Message)
		}
	}
	return c
}

// SetCompleteness records c in the report that embeds the Completeness.
func (x *Completeness) SetCompleteness(c Completeness) { *x = c }

// CompletenessSetter is a report that embeds Completeness.
type CompletenessSetter interface{ SetCompleteness(Completeness) }

// Report writes rep as the document format names (json or yaml) after recording in it
// the completeness c.
func Report(w io.Writer, format Format, rep CompletenessSetter, c Completeness) error {
	rep.SetCompleteness(c)
	return format.Encode(w, rep)
}
