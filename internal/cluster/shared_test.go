package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/snapshot"
)

const (
	sharedList = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: a}
  spec: {ports: [{port: 80}]}
- apiVersion: agentic.networking.x-k8s.io/v0alpha0
  kind: XBackend
  metadata: {name: calc}
  spec:
    mcp: {serviceName: calc, port: 8080}
    notInTheSchema: dropped
`
	sharedChangedBefore = `apiVersion: v1
kind: Service
metadata: {name: changed}
spec: {ports: [{port: 80}]}
`
	sharedChangedAfter = `apiVersion: v1
kind: Service
metadata: {name: changed}
spec: {ports: [{port: 8080}]}
`
)

// Two loads with SharedFiles read a file with the same bytes at the same path once, and
// each answers as if it had read its files alone: the same typed objects, sources,
// positions, dropped fields and objects as read, naming its own files.
func TestSharedFiles(t *testing.T) {
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before"), filepath.Join(dir, "after")
	for _, root := range []string{before, after} {
		tree := map[string]string{"sub/list.yaml": sharedList, "sub/changed.yaml": sharedChangedBefore}
		if root == after {
			tree["sub/changed.yaml"] = sharedChangedAfter
		}
		entries, err := os.ReadDir("../../testdata/examples")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join("../../testdata/examples", e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			tree[e.Name()] = string(data)
		}
		writeTree(t, root, tree)
	}
	load := func(root string, shared *SharedFiles, ns string) *snapshot.Snapshot {
		t.Helper()
		res, err := Load(context.Background(), LoadOptions{Files: []string{root}, Recursive: true, DefaultNamespace: ns, Shared: shared})
		if err != nil {
			t.Fatal(err)
		}
		return res.Snapshot
	}
	shared := NewSharedFiles()
	sb := load(before, shared, "tools")
	sa := load(after, shared, "tools")
	if got, want := dumpSnapshot(t, sa), dumpSnapshot(t, load(after, nil, "tools")); got != want {
		t.Errorf("after, files shared:\n%s\nread alone:\n%s", got, want)
	}
	if got, want := dumpSnapshot(t, sb), dumpSnapshot(t, load(before, nil, "tools")); got != want {
		t.Errorf("before, files shared:\n%s\nread alone:\n%s", got, want)
	}
	if len(sa.Dropped) != 2 {
		t.Errorf("after's dropped fields = %+v, want 2", sa.Dropped)
	}
	for _, d := range sa.Dropped {
		if !strings.HasPrefix(d.Source.File, after) {
			t.Errorf("after's dropped field %+v is not in %s", d, after)
		}
	}

	// What was shared: the files with the same bytes, not the changed one, and nothing
	// with a load that gives objects another namespace.
	kept := func(s *snapshot.Snapshot, root, name string) *keptFile {
		return s.Positions.(*FilePositions).files[filepath.Join(root, name)]
	}
	for _, name := range []string{"10-gateway.yaml", "sub/list.yaml"} {
		if kept(sa, after, name) != kept(sb, before, name) {
			t.Errorf("%s, the same on both sides, was read twice", name)
		}
	}
	if kept(sa, after, "sub/changed.yaml") == kept(sb, before, "sub/changed.yaml") {
		t.Error("sub/changed.yaml, changed, was shared")
	}
	other := load(after, shared, "other")
	if kept(other, after, "sub/list.yaml") == kept(sb, before, "sub/list.yaml") {
		t.Error("a load with another default namespace shared a file")
	}
	nsOfA := func(s *snapshot.Snapshot) string {
		for _, x := range s.Services {
			if x.Name == "a" {
				return x.Namespace
			}
		}
		return "(none)"
	}
	if nsOfA(other) != "other" || nsOfA(sa) != "tools" || nsOfA(sb) != "tools" {
		t.Errorf("namespaces of Service a: %q, %q, %q; want other, tools, tools", nsOfA(other), nsOfA(sa), nsOfA(sb))
	}
}

// dumpSnapshot writes what a snapshot answers: its typed objects, and for each object
// its source, header, object as read and the positions of a few fields.
func dumpSnapshot(t *testing.T, s *snapshot.Snapshot) string {
	t.Helper()
	var b strings.Builder
	typed, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	b.Write(typed)
	b.WriteString("\n")
	for _, o := range s.Objects() {
		h, _ := o.Header()
		obj, err := json.Marshal(o.Object())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%+v %+v %s %v\n", o.Source, h, obj, o.Annotations())
		for _, path := range []string{"metadata.name", "spec", "spec.ports[0].port", "spec.rules[0]"} {
			fmt.Fprintf(&b, "  %s: %v\n", path, s.FieldPosition(o.Source, path))
		}
	}
	for _, d := range s.Dropped {
		fmt.Fprintf(&b, "dropped %+v\n", d)
	}
	return b.String()
}

// Read is told the bytes a load parses before it parses them: every file's, and for a
// load with SharedFiles only those of the files another load did not read the same.
func TestReadToldBytesParsed(t *testing.T) {
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before"), filepath.Join(dir, "after")
	writeTree(t, before, map[string]string{"list.yaml": sharedList, "changed.yaml": sharedChangedBefore})
	writeTree(t, after, map[string]string{"list.yaml": sharedList, "changed.yaml": sharedChangedAfter})
	read := func(root string, shared *SharedFiles) int64 {
		t.Helper()
		var got int64
		calls := 0
		_, err := Load(context.Background(), LoadOptions{Files: []string{root}, Recursive: true, DefaultNamespace: "tools", Shared: shared,
			Read: func(n int64) { got += n; calls++ }})
		if err != nil {
			t.Fatal(err)
		}
		if calls != 1 {
			t.Errorf("Read called %d times, want once", calls)
		}
		return got
	}
	all := int64(len(sharedList) + len(sharedChangedBefore))
	if got := read(before, nil); got != all {
		t.Errorf("alone: Read told %d bytes, want %d", got, all)
	}
	shared := NewSharedFiles()
	if got := read(before, shared); got != all {
		t.Errorf("before: Read told %d bytes, want %d", got, all)
	}
	if got, want := read(after, shared), int64(len(sharedChangedAfter)); got != want {
		t.Errorf("after, list.yaml shared: Read told %d bytes, want %d", got, want)
	}
}
