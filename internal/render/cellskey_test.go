package render

import (
	"fmt"
	"testing"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/whatif"
)

// TestCellsKey: the grouping key of diff's text output is what fmt.Sprint writes.
func TestCellsKey(t *testing.T) {
	cells := []whatif.Cell{
		{},
		{Decision: "allow", Level: "backend", DecidedBy: "ns/p#r"},
		{Decision: "deny", Level: "gateway", DecidedBy: "implicit-deny", Explicit: true, Branches: []explain.Branch{}},
		{Decision: "indeterminate", Level: "backend", DecidedBy: "ns/p#ext", Branches: []explain.Branch{
			{Assume: explain.ExtAuth{Backend: explain.AnswerAllow}, Decision: "allow", Level: "backend", DecidedBy: "ns/p#ext"},
			{Assume: explain.ExtAuth{Gateway: explain.AnswerDeny, Backend: explain.AnswerDeny}, Decision: "deny", Level: "gateway", DecidedBy: "x y"},
			{},
		}},
	}
	for _, b := range cells {
		for _, a := range cells {
			if got, want := cellsKey(b, a), fmt.Sprint(b, a); got != want {
				t.Errorf("cellsKey = %q, fmt.Sprint = %q", got, want)
			}
		}
	}
}
