package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const hostileDir = "../../testdata/hostile"

// TestHostileInputs loads every file of testdata/hostile: each must be refused with an
// *InputError naming the file and the line of the problem.
func TestHostileInputs(t *testing.T) {
	want := map[string]struct {
		line int
		msg  string
	}{
		"alias-bomb.yaml":            {10, "YAML alias bomb"},
		"broken-later-document.yaml": {11, "malformed YAML: did not find expected key"},
		"duplicate-keys.yaml":        {8, `duplicate key "action"`},
		"invalid-utf8.yaml":          {4, "invalid UTF-8"},
		"merge-loop.yaml":            {6, "alias *m refers to a value that contains it"},
		"not-an-object.yaml":         {4, "items[0] is not an object"},
		"nul-byte.yaml":              {0, "binary file"},
		"unknown-version.yaml":       {1, `unsupported apiVersion "agentic.networking.x-k8s.io/v1"`},
		"wrong-type.yaml":            {9, "spec.mcp.port: expected an integer, got string"},
	}
	files, err := filepath.Glob(filepath.Join(hostileDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no hostile inputs in %s: %v", hostileDir, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			w, ok := want[filepath.Base(f)]
			if !ok {
				t.Fatalf("%s has no expectation in this test", f)
			}
			_, err := LoadFiles(FileOptions{Filenames: []string{f}})
			checkInputError(t, err, f, w.line, w.msg)
		})
	}
	if len(files) != len(want) {
		t.Errorf("%d hostile files, %d expectations", len(files), len(want))
	}
}

// TestGeneratedHostileInputs covers inputs too big to commit.
func TestGeneratedHostileInputs(t *testing.T) {
	tests := []struct {
		name, content string
		line          int
		msg           string
	}{
		{"deep block nesting", deepBlock(1000), 205, "nesting deeper than 200 levels"},
		{"deep flow nesting", "a: " + strings.Repeat("{a: ", 100000), 1, "exceeded max depth"},
		{"long line", "apiVersion: v1\nkind: Service\nmetadata: {name: " + strings.Repeat("x", 1<<20) + "\n", 0, "file is larger than 1 MiB"},
		{"many documents", strings.Repeat(svcA+"---\n", 2000), 0, "more than 1000 documents"},
		{"wide alias fan-out", "a: &a [x]\nb: [" + strings.Repeat("*a, ", 200000) + "*a]\n", 2, "alias bomb"},
	}
	lim := limits(func(l *Limits) { l.MaxFileBytes = 1 << 20; l.MaxDocuments = 1000; l.MaxAliasNodes = 100000 })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := ReadFiles(FileOptions{Filenames: []string{"-"}, Stdin: strings.NewReader(tt.content), Limits: lim})
			checkInputError(t, err, "<stdin>", tt.line, tt.msg)
		})
	}
}

// FuzzReadFiles feeds arbitrary bytes as stdin through reading, typing and field
// positions: nothing may panic, every error must be an *InputError, and objects decoded
// again on demand must be what holding them as read gives.
func FuzzReadFiles(f *testing.F) {
	// Small seeds only (each document of a file, up to 1 KiB): the fuzzer minimises
	// every new input it finds from a seed, and a seed of a few kilobytes holds a target
	// at minimising for most of its time.
	for _, dir := range []string{hostileDir, "testdata", "../../testdata/examples"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, p := range files {
			data, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			for _, doc := range strings.Split(string(data), "\n---\n") {
				if len(doc) <= 1024 {
					f.Add([]byte(doc))
				}
			}
		}
	}
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: List, items: [{apiVersion: v1, kind: Service, metadata: {name: a}}]}\n"))
	f.Add([]byte(`{"apiVersion":"agentic.networking.x-k8s.io/v1alpha1","kind":"XAccessPolicyList","items":[{"metadata":{"name":"p"}}]}`))
	f.Add([]byte(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Service","metadata":{"name":"a"}}]}`))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems: [1, {kind: X}]\n"))
	f.Add([]byte("a: &a {b: *a}\n"))
	lim := limits(func(l *Limits) { l.MaxFileBytes = 1 << 20; l.MaxAliasNodes = 20000; l.MaxDocuments = 500 })
	paths := []string{"", "metadata.name", "spec.rules[0].source", "spec.targetRefs[1]", "items[0].x", "spec..a[", "[0]", "spec.rules[-1]"}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := LoadFiles(FileOptions{Filenames: []string{"-"}, Stdin: strings.NewReader(string(data)), Limits: lim})
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error is %T, not *InputError: %v", err, err)
			}
			if ie.File != "<stdin>" || ie.Line < 0 {
				t.Fatalf("error names %s:%d: %v", ie.File, ie.Line, err)
			}
			return
		}
		for _, p := range s.XAccessPolicies {
			for _, path := range paths {
				if pos := s.FieldPosition(p.Source, path); pos.Line <= 0 {
					t.Fatalf("position of %q is line %d", path, pos.Line)
				}
			}
		}
		for _, p := range s.Services {
			for _, path := range paths {
				_ = s.FieldPosition(p.Source, path)
			}
		}
		sameAsHeld(t, data, lim)
	})
}
