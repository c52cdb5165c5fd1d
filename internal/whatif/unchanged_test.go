package whatif

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agpol/agpol/hack/gen/topogen"
	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
)

// loadShared loads before and after as diff does: the files both hold with the same
// bytes are read once (cluster.SharedFiles).
func loadShared(t testing.TB, before, after string) (*snapshot.Snapshot, *snapshot.Snapshot) {
	t.Helper()
	shared := cluster.NewSharedFiles()
	load := func(root string) *snapshot.Snapshot {
		res, err := cluster.Load(context.Background(), cluster.LoadOptions{Files: []string{root}, Recursive: true, DefaultNamespace: "default", Shared: shared})
		if err != nil {
			t.Fatal(err)
		}
		return res.Snapshot
	}
	return load(before), load(after)
}

// diffTwice returns the JSON of the diff of sb and sa with the after engine built on
// the before one (Options.Before) and built alone, and how many targets the after
// engine took from the before one.
func diffTwice(t testing.TB, sb, sa *snapshot.Snapshot, sems []effective.Semantics, o Options) (reused, alone []byte, taken int) {
	t.Helper()
	before := New(model.New(sb), sems, o)
	ob := o
	ob.Before = before
	after := New(model.New(sa), sems, ob)
	for _, st := range after.state {
		for _, bst := range before.state {
			if st == bst {
				taken++
				break
			}
		}
	}
	afterAlone := New(model.New(sa), sems, o)
	var err error
	if reused, err = json.Marshal(Diff(before, after, Filter{})); err != nil {
		t.Fatal(err)
	}
	if alone, err = json.Marshal(Diff(before, afterAlone, Filter{})); err != nil {
		t.Fatal(err)
	}
	return reused, alone, taken
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// writeFiles writes files (name → content) below dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDiffReuseSameAsAlone: on every testdata scenario, each object taken out on one
// side (before, then after), the diff whose after engine takes the unchanged paths
// from the before engine is the diff of two engines built alone, byte for byte.
func TestDiffReuseSameAsAlone(t *testing.T) {
	scenarios := map[string][]string{
		"examples":     {"../../testdata/examples"},
		"whatif-after": {"../../testdata/whatif/after"},
		"upstream-prs": {"../../testdata/semantics/upstream-prs.yaml"},
	}
	sims, _ := filepath.Glob("../../testdata/simulate/*/manifests.yaml")
	if testing.Short() {
		sims = nil // the examples and the upstream pull requests' objects only
	}
	for _, m := range sims {
		scenarios["simulate/"+filepath.Base(filepath.Dir(m))] = []string{m}
	}
	all := allPresets(t)
	inv, err := ParseInventory("tools.json", mustRead(t, "../../testdata/whatif/tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pairs, taken int
	for name, paths := range scenarios {
		// The scenario's files, by name below the scenario.
		files := map[string]string{}
		for _, p := range paths {
			err := filepath.WalkDir(p, func(f string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() || !strings.HasSuffix(f, ".yaml") {
					return err
				}
				rel, _ := filepath.Rel(p, f)
				if rel == "." {
					rel = filepath.Base(f)
				}
				data, err := os.ReadFile(f)
				files[rel] = string(data)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		for file, data := range files {
			docs := docSeparator.Split(data, -1)
			for k := range docs {
				if strings.TrimSpace(stripComments(docs[k])) == "" {
					continue
				}
				less := map[string]string{}
				for f, d := range files {
					less[f] = d
				}
				less[file] = strings.Join(append(append([]string(nil), docs[:k]...), docs[k+1:]...), "\n---\n")
				dir := t.TempDir()
				full, cut := filepath.Join(dir, "full"), filepath.Join(dir, "cut")
				writeFiles(t, full, files)
				writeFiles(t, cut, less)
				// Every preset and the inventory on the examples; the reference elsewhere.
				sems, opts := reference(), []Options{{}}
				if name == "examples" {
					sems, opts = all, []Options{{}, {Inventory: inv}}
				}
				for _, o := range opts {
					for _, side := range [][2]string{{full, cut}, {cut, full}} {
						sb, sa := loadShared(t, side[0], side[1])
						reused, alone, n := diffTwice(t, sb, sa, sems, o)
						pairs++
						taken += n
						if string(reused) != string(alone) {
							t.Errorf("%s, %s document %d taken out of %s: the diff taking unchanged paths differs from the diff of engines built alone:\n%s\nalone:\n%s",
								name, file, k, filepath.Base(side[1]), reused, alone)
						}
					}
				}
			}
		}
	}
	if taken == 0 {
		t.Fatalf("%d pairs, no target taken from the before engine: the test compares nothing", pairs)
	}
	t.Logf("%d pairs, %d targets taken from the before engine", pairs, taken)
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestDiffReuseGenerated: the small generated topology against itself with the files
// of every tenth application namespace from another seed (as bench/run.sh builds
// large-after): the same diff with and without taking unchanged paths, and most paths
// taken.
func TestDiffReuseGenerated(t *testing.T) {
	size, err := topogen.SizeByName("small")
	if err != nil {
		t.Fatal(err)
	}
	gen := func(seed uint64) map[string]string {
		top, err := topogen.Generate(topogen.Options{Size: size, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, f := range top.Files {
			out[f.Name] = string(f.Data)
		}
		return out
	}
	one, two := gen(1), gen(2)
	after := map[string]string{}
	changed := 0
	for name, data := range one {
		after[name] = data
		if m, _ := filepath.Match("20-app-*0.yaml", name); m && two[name] != "" && two[name] != data {
			after[name] = two[name]
			changed++
		}
	}
	if changed == 0 {
		t.Fatal("no application file differs between the seeds")
	}
	dir := t.TempDir()
	writeFiles(t, filepath.Join(dir, "before"), one)
	writeFiles(t, filepath.Join(dir, "after"), after)
	sb, sa := loadShared(t, filepath.Join(dir, "before"), filepath.Join(dir, "after"))
	reused, alone, taken := diffTwice(t, sb, sa, allPresets(t), Options{})
	if string(reused) != string(alone) {
		t.Errorf("the diff taking unchanged paths differs from the diff of engines built alone")
	}
	var d struct{ Compared int }
	if err := json.Unmarshal(alone, &d); err != nil {
		t.Fatal(err)
	}
	targets := len(New(model.New(sa), []effective.Semantics{effective.Reference()}, Options{}).Targets)
	t.Logf("%d of %d application files changed; %d of %d targets taken; %d points compared", changed, len(one), taken, targets, d.Compared)
	if taken == 0 || taken == targets {
		t.Errorf("%d of %d targets taken from the before engine: want some, not all", taken, targets)
	}
}
