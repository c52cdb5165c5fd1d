// Package stages defines, once, what each benchmarked stage of agpol does, so that the
// Go benchmarks and bench/run.sh measure the same thing: the decode floor (reading the
// same YAML with sigs.k8s.io/yaml into unstructured objects, nothing else), agpol's
// load (files to typed snapshot), admission, and the compilation of every chain of
// every path of every gateway. It owns no agpol behaviour: it only calls the packages.
package stages

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// ManifestFiles lists the .yaml files of dir, sorted (as agpol -f DIR reads them).
func ManifestFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// InputBytes is the total size of the files.
func InputBytes(files []string) (int64, error) {
	var n int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return 0, err
		}
		n += st.Size()
	}
	return n, nil
}

// DecodeFloor reads the files and decodes every document with sigs.k8s.io/yaml into an
// unstructured object, splitting documents as kubectl does. It is the least any tool
// reading these manifests must do.
func DecodeFloor(files []string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			var obj map[string]any
			if err := yaml.Unmarshal(doc, &obj); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if obj == nil {
				continue
			}
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
	return out, nil
}

// DecodeStream is DecodeFloor without keeping anything: each file is read through a
// buffer and each document decoded into an unstructured object and dropped (the floor
// of a command that streams its input). It returns the number of objects.
func DecodeStream(files []string) (int, error) {
	n := 0
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return n, err
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(f))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				f.Close()
				return n, fmt.Errorf("%s: %w", name, err)
			}
			var obj map[string]any
			if err := yaml.Unmarshal(doc, &obj); err != nil {
				f.Close()
				return n, fmt.Errorf("%s: %w", name, err)
			}
			if obj == nil {
				continue
			}
			u := &unstructured.Unstructured{Object: obj}
			if u.GetKind() != "" {
				n++
			}
		}
		f.Close()
	}
	return n, nil
}

// Load is what agpol -f DIR does before deciding anything: read, default namespaces,
// type into a snapshot.
func Load(files []string) (*snapshot.Snapshot, error) {
	objs, pos, err := cluster.ReadFiles(cluster.FileOptions{Filenames: files})
	if err != nil {
		return nil, err
	}
	cluster.DefaultNamespace(objs, "default")
	return cluster.Build(objs, pos, "files")
}

// Chains compiles the chain of every path of every gateway (what describe shows for
// all gateways), plus the gateway-level chain of each gateway, and returns how many
// distinct paths it compiled.
func Chains(g *topology.Graph, e *effective.Engine) int {
	n := 0
	for _, gw := range g.Gateways() {
		ref := topology.GatewayRef(gw.Namespace, gw.Name)
		e.Chain(ref, "", nil)
		for _, p := range g.Paths(ref) {
			var be *topology.Ref
			if p.Backend.Kind == topology.BackendXBackend && p.Backend.Problem == nil && p.RuleProblem == nil {
				r := topology.XBackendRef(p.Backend.Ref.Namespace, p.Backend.Ref.Name)
				be = &r
			}
			e.Chain(ref, p.Listener, be)
			n++
		}
	}
	return n
}

// Result is what Pipeline built, with the time of each stage after loading.
type Result struct {
	Snapshot *snapshot.Snapshot
	Graph    *topology.Graph
	Engine   *effective.Engine
	Paths    int

	GraphTime, EngineTime, ChainsTime time.Duration
}

// Pipeline is load + admission + all chains, under the reference semantics: the budget
// of issue 8 compares it with DecodeFloor.
func Pipeline(files []string) (*Result, error) {
	s, err := Load(files)
	if err != nil {
		return nil, err
	}
	return PipelineFrom(s)
}

// PipelineFrom is Pipeline after loading: the routing graph, admission (NewEngine) and
// every chain.
func PipelineFrom(s *snapshot.Snapshot) (*Result, error) {
	t0 := time.Now()
	g := topology.BuildGraph(s)
	t1 := time.Now()
	e := effective.NewEngine(s, effective.Reference(), "cluster.local")
	t2 := time.Now()
	n := Chains(g, e)
	t3 := time.Now()
	return &Result{Snapshot: s, Graph: g, Engine: e, Paths: n, GraphTime: t1.Sub(t0), EngineTime: t2.Sub(t1), ChainsTime: t3.Sub(t2)}, nil
}
