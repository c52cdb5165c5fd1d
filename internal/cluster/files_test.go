package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agpol/agpol/internal/snapshot"
)

// writeTree creates files (path → content) under dir. A content starting with
// "symlink:" makes a symbolic link to the rest.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "symlink:"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// got is an object as ReadFiles located it.
type got struct {
	Kind, Name, File string
	Line, Item       int
}

func summarize(objs []RawObject) []got {
	out := make([]got, 0, len(objs))
	for _, o := range objs {
		out = append(out, got{o.Object().GetKind(), o.Object().GetName(), o.Source.File, o.Source.Line, o.Source.Item})
	}
	return out
}

func equalGot(a, b []got) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

const svcA = "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n"

func TestReadFiles(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		args      []string
		recursive bool
		stdin     string
		want      []got
	}{
		{
			name: "multi-document YAML with empty and comment-only documents",
			files: map[string]string{"m.yaml": `# leading comment
---
apiVersion: v1
kind: Service
metadata:
  name: a
---
---
# only a comment here
---

apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: g
...
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: sa}
`},
			args: []string{"m.yaml"},
			want: []got{
				{"Service", "a", "m.yaml", 3, -1},
				{"Gateway", "g", "m.yaml", 12, -1},
				{"ServiceAccount", "sa", "m.yaml", 18, -1},
			},
		},
		{
			name:  "document without a leading separator, CRLF line ends",
			files: map[string]string{"crlf.yml": "apiVersion: v1\r\nkind: Service\r\nmetadata:\r\n  name: a\r\n---\r\napiVersion: v1\r\nkind: Service\r\nmetadata:\r\n  name: b\r\n"},
			args:  []string{"crlf.yml"},
			want:  []got{{"Service", "a", "crlf.yml", 1, -1}, {"Service", "b", "crlf.yml", 6, -1}},
		},
		{
			name: "JSON object",
			files: map[string]string{"o.json": `

{
  "apiVersion": "v1",
  "kind": "Service",
  "metadata": {"name": "j"}
}
`},
			args: []string{"o.json"},
			want: []got{{"Service", "j", "o.json", 3, -1}},
		},
		{
			name: "JSON List: every item keeps its own line",
			files: map[string]string{"l.json": `{
  "apiVersion": "v1",
  "kind": "List",
  "items": [
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"}},
    {
      "apiVersion": "v1",
      "kind": "Service",
      "metadata": {"name": "y"}
    }
  ]
}`},
			args: []string{"l.json"},
			want: []got{{"Service", "x", "l.json", 5, 0}, {"Service", "y", "l.json", 6, 1}},
		},
		{
			name: "YAML kind List after another document",
			files: map[string]string{"l.yaml": svcA + `---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata:
    name: b
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata:
    name: r
`},
			args: []string{"l.yaml"},
			want: []got{{"Service", "a", "l.yaml", 1, -1}, {"Service", "b", "l.yaml", 9, 0}, {"HTTPRoute", "r", "l.yaml", 13, 1}},
		},
		{
			name: "typed lists (ServiceList) are flattened too",
			files: map[string]string{"sl.yaml": `apiVersion: v1
kind: ServiceList
items:
- {apiVersion: v1, kind: Service, metadata: {name: s1}}
`},
			args: []string{"sl.yaml"},
			want: []got{{"Service", "s1", "sl.yaml", 4, 0}},
		},
		{
			name: "a List inside a List is flattened (kubectl's FlattenListVisitor)",
			files: map[string]string{"nl.yaml": `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Service, metadata: {name: s1}}
- apiVersion: v1
  kind: List
  items:
  - {apiVersion: v1, kind: Service, metadata: {name: s2}}
  - apiVersion: gateway.networking.k8s.io/v1
    kind: HTTPRouteList
    items:
    - {apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute, metadata: {name: r}}
`},
			args: []string{"nl.yaml"},
			want: []got{{"Service", "s1", "nl.yaml", 4, 0}, {"Service", "s2", "nl.yaml", 8, -2}, {"HTTPRoute", "r", "nl.yaml", 12, -2}},
		},
		{
			name: "typed lists of a raw API GET: items without kind and apiVersion get the list's",
			files: map[string]string{"xl.json": `{"apiVersion": "agentic.networking.x-k8s.io/v1alpha1", "kind": "XAccessPolicyList",
"metadata": {"resourceVersion": "1"},
"items": [
  {"metadata": {"name": "p", "namespace": "t"}, "spec": {}},
  {"kind": "XAccessPolicy", "apiVersion": "agentic.networking.x-k8s.io/v1alpha1", "metadata": {"name": "q", "namespace": "t"}}
]}
`},
			args: []string{"xl.json"},
			want: []got{{"XAccessPolicy", "p", "xl.json", 4, 0}, {"XAccessPolicy", "q", "xl.json", 5, 1}},
		},
		{
			name: "directory without -R: only its own .yaml, .yml and .json files, sorted",
			files: map[string]string{
				"d/b.yaml":     strings.Replace(svcA, "name: a", "name: b", 1),
				"d/a.json":     `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "aj"}}`,
				"d/c.YML":      strings.Replace(svcA, "name: a", "name: c", 1),
				"d/notes.txt":  "not: [yaml",
				"d/README.md":  "# nothing",
				"d/sub/z.yaml": strings.Replace(svcA, "name: a", "name: z", 1),
			},
			args: []string{"d"},
			want: []got{{"Service", "aj", "d/a.json", 1, -1}, {"Service", "b", "d/b.yaml", 1, -1}, {"Service", "c", "d/c.YML", 1, -1}},
		},
		{
			name: "directory with -R descends into subdirectories",
			files: map[string]string{
				"d/b.yaml":         strings.Replace(svcA, "name: a", "name: b", 1),
				"d/sub/z.yaml":     strings.Replace(svcA, "name: a", "name: z", 1),
				"d/sub/deep/y.yml": strings.Replace(svcA, "name: a", "name: yy", 1),
				"d/sub/skip.txt":   "x",
			},
			args:      []string{"d"},
			recursive: true,
			want:      []got{{"Service", "b", "d/b.yaml", 1, -1}, {"Service", "yy", "d/sub/deep/y.yml", 1, -1}, {"Service", "z", "d/sub/z.yaml", 1, -1}},
		},
		{
			name: "-R does not loop through a symlink back to a parent",
			files: map[string]string{
				"d/a.yaml":    svcA,
				"d/sub/up":    "symlink:..",
				"d/sub/b.yml": strings.Replace(svcA, "name: a", "name: b", 1),
			},
			args:      []string{"d"},
			recursive: true,
			want:      []got{{"Service", "a", "d/a.yaml", 1, -1}, {"Service", "b", "d/sub/b.yml", 1, -1}},
		},
		{
			name:  "stdin and files in the order given",
			files: map[string]string{"f.yaml": svcA},
			args:  []string{"f.yaml", "-"},
			stdin: "\n\n" + strings.Replace(svcA, "name: a", "name: in", 1),
			want:  []got{{"Service", "a", "f.yaml", 1, -1}, {"Service", "in", "<stdin>", 3, -1}},
		},
		{
			name:  "a file named explicitly keeps any extension",
			files: map[string]string{"manifest.txt": svcA},
			args:  []string{"manifest.txt"},
			want:  []got{{"Service", "a", "manifest.txt", 1, -1}},
		},
		{
			name:  "empty input",
			files: map[string]string{"e.yaml": "", "c.yaml": "# just a comment\n---\n---\n"},
			args:  []string{"e.yaml", "c.yaml"},
			want:  []got{},
		},
		{
			name: "anchors, aliases and merge keys inside one document",
			files: map[string]string{"anchors.yaml": `apiVersion: v1
kind: Service
metadata:
  name: anchored
  labels: &l {app: x}
  annotations:
    <<: *l
    note: v
`},
			args: []string{"anchors.yaml"},
			want: []got{{"Service", "anchored", "anchors.yaml", 1, -1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tt.files)
			t.Chdir(dir)
			objs, _, err := ReadFiles(FileOptions{Filenames: tt.args, Recursive: tt.recursive, Stdin: strings.NewReader(tt.stdin)})
			if err != nil {
				t.Fatalf("ReadFiles: %v", err)
			}
			g := summarize(objs)
			if !equalGot(g, tt.want) {
				t.Errorf("objects:\n got  %+v\n want %+v", g, tt.want)
			}
		})
	}
}

func TestReadFilesFIFOInDirectory(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"d/a.yaml": svcA})
	t.Chdir(dir)
	if err := syscall.Mkfifo("d/pipe.yaml", 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := ReadFiles(FileOptions{Filenames: []string{"d"}})
		done <- err
	}()
	select {
	case err := <-done:
		checkInputError(t, err, "d/pipe.yaml", 0, "not a regular file (a named pipe)")
	case <-time.After(10 * time.Second):
		t.Fatal("ReadFiles blocked on a FIFO in a directory")
	}
}

// Permission errors: root reads everything, so these only run as another user.
func TestReadFilesUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: permissions are not enforced (dangling symlinks and FIFOs are tested instead)")
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"secret.yaml": svcA, "d/locked/x.yaml": svcA})
	t.Chdir(dir)
	for _, p := range []string{"secret.yaml", "d/locked"} {
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(p, 0o755) })
	}
	_, _, err := ReadFiles(FileOptions{Filenames: []string{"secret.yaml"}})
	checkInputError(t, err, "secret.yaml", 0, "permission denied")
	_, _, err = ReadFiles(FileOptions{Filenames: []string{"d"}, Recursive: true})
	checkInputError(t, err, "d/locked", 0, "permission denied")
}

func TestFieldPosition(t *testing.T) {
	const file = "testdata/access-policies.yaml"
	s, err := LoadFiles(FileOptions{Filenames: []string{file}})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*snapshot.XAccessPolicy{}
	for _, p := range s.XAccessPolicies {
		byName[p.Name] = p
	}
	tests := []struct {
		policy, path string
		line, column int
	}{
		{"edge-baseline", "", 3, 1},
		{"edge-baseline", "metadata.name", 6, 3},
		{"edge-baseline", "spec", 9, 1},           // a mapping: the key's line, not its first child's
		{"edge-baseline", "spec.rules", 15, 3},    // a list: the key's line
		{"edge-baseline", "spec.rules[2]", 32, 5}, // a list item: its "- name:" line
		{"edge-baseline", "spec.rules[1].source", 22, 5},
		{"edge-baseline", "spec.rules[1].source.serviceAccount.name", 26, 9},
		{"edge-baseline", "spec.targetRefs[0].name", 13, 5},
		{"edge-baseline", "spec.rules[9]", 15, 3},           // missing item: the deepest field that exists
		{"edge-baseline", "spec.rules[1].nothere.x", 21, 5}, // missing key
		{"edge-baseline", "spec.rules[x]", 15, 3},           // not an index
		{"edge-baseline", "metadata.name[0]", 6, 3},         // index into a scalar
		{"ledger-access", "spec.rules[1].authorization.mcp.methods[0].params", 74, 11},
		{"ledger-access", "spec.rules[1].authorization.mcp.methods[0].params[1]", 74, 29},
		{"ledger-fraud-check", "spec.externalAuth.grpc", 106, 5},
		{"calc-arithmetic", "spec.rules[2].authorization.methods", 150, 7},
		{"calc-legacy", "spec.rules[0].authorization.tools", 173, 7},
	}
	for _, tt := range tests {
		t.Run(tt.policy+"/"+tt.path, func(t *testing.T) {
			p := byName[tt.policy]
			if p == nil {
				t.Fatalf("policy %s not loaded", tt.policy)
			}
			got := s.FieldPosition(p.Source, tt.path)
			if got.File != file || got.Line != tt.line || got.Column != tt.column {
				t.Errorf("FieldPosition(%q) = %s:%d:%d, want %s:%d:%d", tt.path, got.File, got.Line, got.Column, file, tt.line, tt.column)
			}
		})
	}
	// Asked from several goroutines at once (simulate resolves positions on every
	// core; the parse runs outside the lock), every answer is the same.
	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range 40 {
					tt := tests[(g+k)%len(tests)]
					got := s.FieldPosition(byName[tt.policy].Source, tt.path)
					if got.Line != tt.line || got.Column != tt.column {
						t.Errorf("concurrent FieldPosition(%q) = %d:%d, want %d:%d", tt.path, got.Line, got.Column, tt.line, tt.column)
					}
				}
			}()
		}
		wg.Wait()
	})
}

// Positions of objects read from stdin and from List items resolve too.
func TestFieldPositionStdinAndLists(t *testing.T) {
	in := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata:
    name: first
- apiVersion: v1
  kind: Service
  metadata:
    name: second
  spec:
    ports:
    - port: 80
    - port: 443
`
	s, err := LoadFiles(FileOptions{Filenames: []string{"-"}, Stdin: strings.NewReader(in)})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Services) != 2 {
		t.Fatalf("got %d services, want 2", len(s.Services))
	}
	second := s.Services[1].Source
	if second.File != "<stdin>" || second.Line != 8 || second.Item != 1 {
		t.Fatalf("second service source = %+v, want <stdin> line 8 item 1", second)
	}
	if got := s.FieldPosition(second, "spec.ports[1].port"); got.Line != 15 {
		t.Errorf("spec.ports[1].port at line %d, want 15", got.Line)
	}
	if got := s.FieldPosition(second, "metadata"); got.Line != 10 {
		t.Errorf("metadata at line %d, want 10", got.Line)
	}
}

func TestLoadFilesSkipsUnknownKinds(t *testing.T) {
	in := svcA + `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d2}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
---
apiVersion: v1
kind: Secret
metadata: {name: s}
---
apiVersion: agentic.prototype.x-k8s.io/v0alpha0
kind: XBackend
metadata: {name: legacy-group, namespace: ns}
spec: {mcp: {serviceName: s, port: 80}}
`
	s, err := LoadFiles(FileOptions{Filenames: []string{"-"}, Stdin: strings.NewReader(in)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"Deployment.apps": 2, "ConfigMap": 1}
	if fmt.Sprint(s.Skipped) != fmt.Sprint(want) {
		t.Errorf("Skipped = %v, want %v", s.Skipped, want)
	}
	// Secrets are read for AuthPolicy apiKey rules, metadata only.
	if len(s.Secrets) != 1 {
		t.Errorf("got %d secrets, want 1", len(s.Secrets))
	}
	if len(s.Services) != 1 || len(s.XBackends) != 1 {
		t.Errorf("got %d services and %d backends, want 1 and 1", len(s.Services), len(s.XBackends))
	}
	if s.Len() != 2 {
		t.Errorf("Len = %d, want 2", s.Len())
	}
}

func TestDefaultNamespace(t *testing.T) {
	in := `apiVersion: v1
kind: Service
metadata: {name: no-ns}
---
apiVersion: v1
kind: Service
metadata: {name: has-ns, namespace: pay}
---
apiVersion: v1
kind: Namespace
metadata: {name: ns}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gc}
---
apiVersion: agentic.networking.x-k8s.io/v1alpha1
kind: XAccessPolicy
metadata: {name: p}
`
	objs, _, err := ReadFiles(FileOptions{Filenames: []string{"-"}, Stdin: strings.NewReader(in)})
	if err != nil {
		t.Fatal(err)
	}
	DefaultNamespace(objs, "tools")
	want := map[string]string{"no-ns": "tools", "has-ns": "pay", "ns": "", "gc": "", "p": "tools"}
	for _, o := range objs {
		if got := o.Object().GetNamespace(); got != want[o.Object().GetName()] {
			t.Errorf("%s: namespace %q, want %q", o.Object().GetName(), got, want[o.Object().GetName()])
		}
	}
}

// Values are typed as Kubernetes' JSON decoding would type them: integers stay int64
// (CEL and the converters reject float64 for integer fields), merge keys are applied.
func TestReadFilesValues(t *testing.T) {
	in := `apiVersion: v1
kind: Service
metadata:
  name: v
  labels: &l {app: x, tier: web}
  annotations:
    <<: *l
    tier: api
spec:
  port: 8080
  ratio: 0.5
  big: 99999999999999999999
  on: true
  quoted: "123"
  empty:
`
	objs, _, err := ReadFiles(FileOptions{Filenames: []string{"-"}, Stdin: strings.NewReader(in)})
	if err != nil {
		t.Fatal(err)
	}
	o := objs[0].Object().Object
	spec := o["spec"].(map[string]any)
	// The key on is YAML 1.1's true, which sigs.k8s.io/yaml (so kubectl) writes "true".
	for k, want := range map[string]any{"port": int64(8080), "ratio": 0.5, "big": 1e20, "true": true, "quoted": "123", "empty": nil} {
		if got := spec[k]; got != want {
			t.Errorf("spec.%s = %#v, want %#v", k, got, want)
		}
	}
	ann := o["metadata"].(map[string]any)["annotations"].(map[string]any)
	if ann["app"] != "x" || ann["tier"] != "api" {
		t.Errorf("annotations = %v, want app=x from the merge and tier=api overriding it", ann)
	}
}

// A nil *FilePositions (a typed nil in the PositionResolver) knows no position: a field
// of the wrong type is then reported at the object's line, not with a panic.
func TestBuildNilFilePositions(t *testing.T) {
	objs, _, err := readStdin([]byte("apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  ports:\n  - port: x\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(objs, (*FilePositions)(nil), "files")
	var ie *InputError
	if !errors.As(err, &ie) || ie.Line != 1 || !strings.Contains(err.Error(), "spec.ports[0].port: expected an integer, got string") {
		t.Errorf("Build: %v, want an input error at line 1 naming spec.ports[0].port", err)
	}
}
