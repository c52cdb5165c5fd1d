package topology

import (
	"path/filepath"
	"testing"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/snapshot"
)

// load reads YAML fixtures (files or directories, relative to testdata/) into a
// snapshot, giving namespaced objects without a namespace "default" as kubectl would.
// The snapshot is marked complete (as a whole live cluster would be), so objects the
// fixtures lack are missing; loadPartial keeps the files-only view.
func load(t testing.TB, names ...string) *snapshot.Snapshot {
	s := loadPartial(t, names...)
	s.Complete = true
	return s
}

// loadPartial reads fixtures as manifests given with -f: a part of a cluster.
func loadPartial(t testing.TB, names ...string) *snapshot.Snapshot {
	t.Helper()
	var paths []string
	for _, n := range names {
		paths = append(paths, filepath.Join("testdata", n))
	}
	objs, pos, err := cluster.ReadFiles(cluster.FileOptions{Filenames: paths, Recursive: true})
	if err != nil {
		t.Fatalf("read fixtures: %v", err)
	}
	cluster.DefaultNamespace(objs, "default")
	s, err := cluster.Build(objs, pos, "files")
	if err != nil {
		t.Fatalf("build snapshot: %v", err)
	}
	return s
}

func loadGraph(t testing.TB, names ...string) *Graph {
	t.Helper()
	return BuildGraph(load(t, names...))
}
