package whatif

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/snapshot"
)

func load(t testing.TB, files ...string) *snapshot.Snapshot {
	t.Helper()
	s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: files})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func allPresets(t testing.TB) []effective.Semantics {
	sems, err := effective.ParsePresets("all")
	if err != nil {
		t.Fatal(err)
	}
	return sems
}

// checkAgainstExplain decides every point of the space of s with the engine and with
// explain.Simulator.Explain, and fails on any difference.
func checkAgainstExplain(t *testing.T, s *snapshot.Snapshot, ext explain.ExtAuth) int {
	t.Helper()
	e := New(s, allPresets(t), Options{ExtAuth: ext})
	n := 0
	for _, tg := range e.Targets {
		for _, id := range e.Identities {
			for _, op := range tg.Ops {
				got := e.Decide(tg, id, op)
				res, err := e.Simulator().Explain(e.Request(tg, id.Identity, op))
				if err != nil {
					t.Fatalf("%s %s %s: %v", tg.Label(), id.ID, op.Label(), err)
				}
				if len(res) != len(got.Cells) {
					t.Fatalf("%s: %d results, %d cells", tg.Label(), len(res), len(got.Cells))
				}
				for k, r := range res {
					c := got.Cells[k]
					want := Cell{Decision: r.Verdict, Level: r.Level, DecidedBy: r.DecidedBy, Explicit: r.Explicit, Branches: r.Branches}
					if fmt.Sprint(c) != fmt.Sprint(want) {
						t.Errorf("%s | %s | %s | %s:\n got  %+v\n want %+v", tg.Label(), id.ID, op.Label(), r.Semantics, c, want)
					}
					n++
				}
			}
		}
	}
	return n
}

// TestFastMatchesExplain: the untraced port decides exactly as package explain, on the
// examples and every simulate scenario, under every preset and authorizer answer.
func TestFastMatchesExplain(t *testing.T) {
	dirs := []string{"../../testdata/examples"}
	m, _ := filepath.Glob("../../testdata/simulate/*/manifests.yaml")
	dirs = append(dirs, m...)
	for _, d := range dirs {
		for _, ext := range []explain.ExtAuth{{}, {Gateway: explain.AnswerAllow, Backend: explain.AnswerDeny}, {Gateway: explain.AnswerDeny, Backend: explain.AnswerAllow}} {
			t.Run(filepath.Base(filepath.Dir(d))+"/"+filepath.Base(d)+"/"+ext.String(), func(t *testing.T) {
				n := checkAgainstExplain(t, load(t, d), ext)
				t.Logf("%d decisions compared", n)
				if n == 0 {
					t.Fatal("no decision compared")
				}
			})
		}
	}
}
