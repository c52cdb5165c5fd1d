package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
)

const (
	loadGateway = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: infra}
spec:
  gatewayClassName: agentic
  listeners: [{name: http, protocol: HTTP, port: 80}]
`
	loadBackendNoNS = `apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XBackend
metadata: {name: calc}
spec:
  mcp: {serviceName: calc, port: 8080}
`
	loadBackendWrongType = `apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XBackend
metadata: {name: bad, namespace: tools}
spec:
  mcp: {serviceName: calc, port: "eighty"}
`
	loadConfigMap = `apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: infra}
`
)

// TestLoad runs Load on files: which objects it keeps and where, what it records on the
// snapshot, and which options stop it. The live paths are tested against a real API
// server by cmd/agpol's live tests.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"gw.yaml":          loadGateway,
		"sub/backend.yaml": loadBackendNoNS,
		"bad/backend.yaml": loadBackendWrongType,
		"other/cm.yaml":    loadConfigMap,
		"broken.yaml":      "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n name: y\n",
	})
	in := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, filepath.Join(dir, n))
		}
		return out
	}
	missingKubeconfig := genericclioptions.NewConfigFlags(false)
	kc := filepath.Join(dir, "no-such-kubeconfig")
	missingKubeconfig.KubeConfig = &kc

	type want struct {
		// objects are KIND NS/NAME, sorted.
		objects  []string
		origins  []string
		planes   map[string]string
		skipped  []string // names handed to SkipUndecodable
		notUsed  int      // objects of kinds agpol does not use
		complete bool
		// err is a substring of the error; "" for none.
		err string
	}
	cases := []struct {
		name string
		opts LoadOptions
		want want
	}{
		{
			name: "files, objects without a namespace get default",
			opts: LoadOptions{Files: in("gw.yaml", "sub")},
			want: want{objects: []string{"Gateway infra/edge", "XBackend default/calc"}, origins: []string{"files"}},
		},
		{
			name: "files, DefaultNamespace (-n) for objects without one",
			opts: LoadOptions{Files: in("gw.yaml", "sub/backend.yaml"), DefaultNamespace: "tools"},
			want: want{objects: []string{"Gateway infra/edge", "XBackend tools/calc"}, origins: []string{"files"}},
		},
		{
			name: "a directory is read one level without Recursive",
			opts: LoadOptions{Files: []string{dir}, DefaultNamespace: "tools", SkipUndecodable: func(RawObject, error) {}},
			want: want{err: "broken.yaml:5"},
		},
		{
			name: "Recursive reads subdirectories; undecodable objects go to SkipUndecodable",
			opts: LoadOptions{Files: in("gw.yaml", "sub", "bad", "other"), Recursive: true},
			want: want{objects: []string{"Gateway infra/edge", "XBackend default/calc"}, origins: []string{"files"},
				skipped: []string{"bad"}, notUsed: 1},
		},
		{
			name: "without SkipUndecodable an undecodable object stops the load at its line",
			opts: LoadOptions{Files: in("bad/backend.yaml")},
			want: want{err: "backend.yaml:5"},
		},
		{
			name: "ClassDataPlanes are recorded",
			opts: LoadOptions{Files: in("gw.yaml"), ClassDataPlanes: map[string]string{"agentic": "kuadrant"}},
			want: want{objects: []string{"Gateway infra/edge"}, origins: []string{"files"}, planes: map[string]string{"agentic": "kuadrant"}},
		},
		{
			name: "stdin",
			opts: LoadOptions{Files: []string{"-"}, Stdin: strings.NewReader(loadGateway)},
			want: want{objects: []string{"Gateway infra/edge"}, origins: []string{"files"}},
		},
		{
			name: "no files: the cluster is read, and needs kubeconfig flags",
			opts: LoadOptions{},
			want: want{err: "no kubeconfig flags given"},
		},
		{
			name: "files laid over the cluster read the cluster first",
			opts: LoadOptions{Files: in("gw.yaml"), Live: true, Getter: missingKubeconfig},
			want: want{err: "no-such-kubeconfig"},
		},
		{
			name: "a missing file",
			opts: LoadOptions{Files: in("nope.yaml")},
			want: want{err: "nope.yaml: no such file or directory"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var skipped []string
			if c.opts.SkipUndecodable != nil || c.want.skipped != nil {
				c.opts.SkipUndecodable = func(o RawObject, _ error) { skipped = append(skipped, o.Object().GetName()) }
			}
			var stages []string
			c.opts.Stage = func(name string) func() { stages = append(stages, name); return func() {} }
			res, err := Load(context.Background(), c.opts)
			if c.want.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.want.err) {
					t.Fatalf("error %v, want one containing %q", err, c.want.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s := res.Snapshot
			var objs []string
			for _, g := range s.Gateways {
				objs = append(objs, "Gateway "+g.Namespace+"/"+g.Name)
			}
			for _, b := range s.XBackends {
				objs = append(objs, "XBackend "+b.Namespace+"/"+b.Name)
			}
			slices.Sort(objs)
			if !reflect.DeepEqual(objs, c.want.objects) {
				t.Errorf("objects %v, want %v", objs, c.want.objects)
			}
			if !reflect.DeepEqual(s.Origins, c.want.origins) {
				t.Errorf("origins %v, want %v", s.Origins, c.want.origins)
			}
			if !reflect.DeepEqual(s.ClassDataPlanes, c.want.planes) {
				t.Errorf("class data planes %v, want %v", s.ClassDataPlanes, c.want.planes)
			}
			if !reflect.DeepEqual(skipped, c.want.skipped) {
				t.Errorf("skipped %v, want %v", skipped, c.want.skipped)
			}
			notUsed := 0
			for _, n := range s.Skipped {
				notUsed += n
			}
			if notUsed != c.want.notUsed {
				t.Errorf("%d objects of unused kinds, want %d", notUsed, c.want.notUsed)
			}
			if s.Complete != c.want.complete || res.LiveNamespace != "" {
				t.Errorf("complete %v, live namespace %q: a read of files is not the whole cluster", s.Complete, res.LiveNamespace)
			}
			if !reflect.DeepEqual(stages, []string{"reading manifests"}) {
				t.Errorf("stages %v", stages)
			}
		})
	}
}

// TestLoadSnapshotOut writes the loaded objects and reads them back: the same objects,
// with the namespace Load gave them.
func TestLoadSnapshotOut(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"in.yaml": loadGateway + "---\n" + loadBackendNoNS})
	out := filepath.Join(dir, "snap.yaml")
	if _, err := Load(context.Background(), LoadOptions{Files: []string{filepath.Join(dir, "in.yaml")}, DefaultNamespace: "tools", SnapshotOut: out}); err != nil {
		t.Fatal(err)
	}
	res, err := Load(context.Background(), LoadOptions{Files: []string{out}})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Snapshot
	if len(s.Gateways) != 1 || len(s.XBackends) != 1 || s.XBackends[0].Namespace != "tools" {
		t.Fatalf("read back %d gateways, %d backends %v", len(s.Gateways), len(s.XBackends), s.XBackends)
	}
	// A snapshot that cannot be written is an error, after the objects were read.
	_, err = Load(context.Background(), LoadOptions{Files: []string{out}, SnapshotOut: filepath.Join(dir, "no", "such", "dir", "x.yaml")})
	if err == nil || !strings.Contains(err.Error(), "writing snapshot") {
		t.Fatalf("error %v, want writing snapshot", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "no")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stat: %v", err)
	}
}
