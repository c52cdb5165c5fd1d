package cluster

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Bad input read from files: each refusal names the file and line.

// limits is DefaultLimits changed by f.
func limits(f func(*Limits)) *Limits {
	l := DefaultLimits
	f(&l)
	return &l
}

// aliasBomb is the "billion laughs" document: nine levels of ten aliases each.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n  a0: &a0 [\"lol\"]\n")
	for i := 1; i <= 9; i++ {
		p := fmt.Sprintf("*a%d", i-1)
		fmt.Fprintf(&b, "  a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(p+", ", 10), ", "))
	}
	return b.String()
}

// deepBlock nests n block mappings below "spec".
func deepBlock(n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Service\nmetadata: {name: deep}\nspec:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%sk:\n", strings.Repeat(" ", i))
	}
	return b.String()
}

func TestReadFilesErrors(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		args      []string
		recursive bool
		limits    *Limits
		build     bool // also type the objects (LoadFiles), for errors found while decoding
		wantFile  string
		wantLine  int // 0: the error must not name a line
		wantMsg   string
	}{
		{
			name:     "malformed YAML in the first document",
			files:    map[string]string{"bad.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n labels: {}\n"},
			wantFile: "bad.yaml", wantLine: 5, wantMsg: "malformed YAML: did not find expected key",
		},
		{
			name:     "parser error in a later document names the real line",
			files:    map[string]string{"bad.yaml": svcA + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: b\n kind: x\n"},
			wantFile: "bad.yaml", wantLine: 10, wantMsg: "did not find expected key",
		},
		{
			name:     "scanner error in a later document",
			files:    map[string]string{"bad.yaml": svcA + "---\n" + svcA + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: c\n   labels: x\n"},
			wantFile: "bad.yaml", wantLine: 15, wantMsg: "mapping values are not allowed",
		},
		{
			name:     "sequence broken in the third document",
			files:    map[string]string{"bad.yaml": svcA + "---\n" + svcA + "---\n- a\nb: 2\n"},
			wantFile: "bad.yaml", wantLine: 12, wantMsg: "did not find expected '-' indicator",
		},
		{
			name:     "unclosed flow sequence in a later document",
			files:    map[string]string{"bad.yaml": svcA + "---\napiVersion: v1\nkind: Service\nmetadata: {name: b}\nspec:\n  ports: [1, 2\n  type: x\n"},
			wantFile: "bad.yaml", wantLine: 11, wantMsg: "did not find expected ',' or ']'",
		},
		{
			name:     "tab indentation in a later document",
			files:    map[string]string{"bad.yaml": svcA + "---\napiVersion: v1\nkind: Service\nmetadata:\n\tname: b\n"},
			wantFile: "bad.yaml", wantLine: 9, wantMsg: "a tab indents this line",
		},
		{
			name:     "unknown anchor in a later document",
			files:    map[string]string{"bad.yaml": svcA + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: b\n  labels: *nope\n"},
			wantFile: "bad.yaml", wantLine: 10, wantMsg: "unknown anchor 'nope'",
		},
		{
			name:     "malformed JSON",
			files:    map[string]string{"bad.json": "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Service\"\n  \"metadata\": {}\n}\n"},
			wantFile: "bad.json", wantLine: 4, wantMsg: "malformed YAML",
		},
		{
			name:     "malformed YAML on stdin: the parser notices the open bracket at the end",
			args:     []string{"-"},
			wantFile: "<stdin>", wantLine: 3, wantMsg: "malformed YAML",
		},
		{
			name:     "unknown apiVersion of a known kind",
			files:    map[string]string{"v.yaml": svcA + "---\napiVersion: agentic.networking.x-k8s.io/v9\nkind: XAccessPolicy\nmetadata: {name: p}\n"},
			build:    true,
			wantFile: "v.yaml", wantLine: 6, wantMsg: `unsupported apiVersion "agentic.networking.x-k8s.io/v9"`,
		},
		{
			name: "wrong field type",
			files: map[string]string{"t.yaml": `apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XBackend
metadata: {name: b, namespace: ns}
spec:
  mcp:
    serviceName: s
    port: "abc"
`},
			build:    true,
			wantFile: "t.yaml", wantLine: 7, wantMsg: `XBackend "b": spec.mcp.port: expected an integer, got string`,
		},
		{
			name: "wrong field type in a list: the item's index and line",
			files: map[string]string{"l.yaml": `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: ns}
spec:
  gatewayClassName: c
  listeners:
  - name: a
    protocol: HTTP
    port: 80
  - name: b
    protocol: HTTP
    port: 8.5
`},
			build:    true,
			wantFile: "l.yaml", wantLine: 12, wantMsg: `Gateway "g": spec.listeners[1].port: expected an integer, got number 8.5`,
		},
		{
			name:     "duplicate key",
			files:    map[string]string{"d.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  name: b\n"},
			wantFile: "d.yaml", wantLine: 5, wantMsg: `duplicate key "name"`,
		},
		{
			name:     "duplicate key in a JSON object",
			files:    map[string]string{"d.json": "{\"apiVersion\": \"v1\",\n\"kind\": \"Service\",\n\"kind\": \"Pod\"}"},
			wantFile: "d.json", wantLine: 3, wantMsg: `duplicate key "kind"`,
		},
		{
			name:     "invalid UTF-8",
			files:    map[string]string{"u.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: \"\xff\xfe\"}\n"},
			wantFile: "u.yaml", wantLine: 3, wantMsg: "invalid UTF-8",
		},
		{
			name:     "binary file",
			files:    map[string]string{"b.yaml": "\x7fELF\x02\x01\x01\x00\x00\x00"},
			wantFile: "b.yaml", wantMsg: "binary file",
		},
		{
			name:     "YAML alias bomb",
			files:    map[string]string{"bomb.yaml": aliasBomb()},
			wantFile: "bomb.yaml", wantLine: 9, wantMsg: "more than the 99% YAML decoders allow (YAML alias bomb?)", // a4 passes yaml/v3's alias ratio
		},
		{
			name:     "aliases over MaxAliasNodes",
			files:    map[string]string{"fan.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fan}\ndata:\n  a: &a [x, y, z]\n  b: [" + strings.Repeat("*a, ", 5000) + "*a]\n"},
			wantFile: "fan.yaml", wantLine: 6, wantMsg: "aliases expand to more than 10000 nodes (YAML alias bomb?)",
			limits: limits(func(l *Limits) { l.MaxAliasNodes = 10000 }),
		},
		{
			name:     "deep nesting",
			files:    map[string]string{"deep.yaml": deepBlock(250)},
			wantFile: "deep.yaml", wantLine: 205, wantMsg: "nesting deeper than 200 levels",
		},
		{
			name:     "deep flow nesting stopped by the parser",
			files:    map[string]string{"deep.yaml": "a: " + strings.Repeat("[", 20000)},
			wantFile: "deep.yaml", wantLine: 1, wantMsg: "exceeded max depth",
		},
		{
			name:     "file too big",
			files:    map[string]string{"ok.yaml": svcA, "big.yaml": svcA + "# " + strings.Repeat("x", 200) + "\n"},
			args:     []string{"ok.yaml", "big.yaml"},
			limits:   limits(func(l *Limits) { l.MaxFileBytes = 100 }),
			wantFile: "big.yaml", wantMsg: "file is larger than 100 bytes",
		},
		{
			name:     "stdin too big",
			args:     []string{"-"},
			limits:   limits(func(l *Limits) { l.MaxFileBytes = 10 }),
			wantFile: "<stdin>", wantMsg: "larger than 10 bytes",
		},
		{
			name:     "all files together too big",
			files:    map[string]string{"d/1.yaml": svcA, "d/2.yaml": svcA, "d/3.yaml": svcA},
			args:     []string{"d"},
			limits:   limits(func(l *Limits) { l.MaxTotalBytes = int64(2*len(svcA) + 1) }),
			wantFile: "d/3.yaml", wantMsg: "input is larger than",
		},
		{
			name:     "too many documents",
			files:    map[string]string{"many.yaml": strings.Repeat(svcA+"---\n", 5)},
			limits:   limits(func(l *Limits) { l.MaxDocuments = 3 }),
			wantFile: "many.yaml", wantMsg: "more than 3 documents",
		},
		{
			name:     "too many documents counted over the files in order",
			files:    map[string]string{"d/1.yaml": svcA + "---\n" + svcA, "d/2.yaml": svcA + "---\n" + svcA, "d/3.yaml": "a: [\n"},
			args:     []string{"d"},
			limits:   limits(func(l *Limits) { l.MaxDocuments = 3 }),
			wantFile: "d/2.yaml", wantMsg: "more than 3 documents",
		},
		{
			name:     "malformed file before the document limit is reached",
			files:    map[string]string{"d/1.yaml": svcA + "---\na: [\n", "d/2.yaml": strings.Repeat(svcA+"---\n", 5)},
			args:     []string{"d"},
			limits:   limits(func(l *Limits) { l.MaxDocuments = 3 }),
			wantFile: "d/1.yaml", wantLine: 7, wantMsg: "malformed YAML",
		},
		{
			name:     "document limit reached before a malformed document of the same file",
			files:    map[string]string{"d/1.yaml": svcA, "d/2.yaml": svcA + "---\n" + svcA + "---\na: [\n"},
			args:     []string{"d"},
			limits:   limits(func(l *Limits) { l.MaxDocuments = 2 }),
			wantFile: "d/2.yaml", wantMsg: "more than 2 documents",
		},
		{
			name:     "malformed file before a missing one",
			files:    map[string]string{"bad.yaml": "a: [\n", "ok.yaml": svcA},
			args:     []string{"ok.yaml", "bad.yaml", "missing.yaml"},
			wantFile: "bad.yaml", wantLine: 2, wantMsg: "malformed YAML",
		},
		{
			name:     "malformed file before the total size limit is reached",
			files:    map[string]string{"d/1.yaml": "a: [\n", "d/2.yaml": svcA, "d/3.yaml": svcA},
			args:     []string{"d"},
			limits:   limits(func(l *Limits) { l.MaxTotalBytes = int64(len(svcA) + 1) }),
			wantFile: "d/1.yaml", wantLine: 2, wantMsg: "malformed YAML",
		},
		{
			name:     "document is not a mapping",
			files:    map[string]string{"s.yaml": svcA + "---\n- a\n- b\n"},
			wantFile: "s.yaml", wantLine: 6, wantMsg: "not a mapping",
		},
		{
			name:     "object without kind",
			files:    map[string]string{"k.yaml": "apiVersion: v1\nmetadata: {name: a}\n"},
			wantFile: "k.yaml", wantLine: 1, wantMsg: "no kind",
		},
		{
			name:     "object without apiVersion",
			files:    map[string]string{"k.yaml": svcA + "---\n\nkind: Service\nmetadata: {name: a}\n"},
			wantFile: "k.yaml", wantLine: 7, wantMsg: "Service has no apiVersion",
		},
		{
			name:     "metadata is not a mapping",
			files:    map[string]string{"m.yaml": "apiVersion: v1\nkind: Service\nmetadata: [a]\n"},
			wantFile: "m.yaml", wantLine: 1, wantMsg: "metadata is not a mapping",
		},
		{
			name:     "List item that is not an object",
			files:    map[string]string{"l.yaml": "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: a}}\n- just a string\n"},
			wantFile: "l.yaml", wantLine: 5, wantMsg: "items[1] is not an object",
		},
		{
			name:     "List item without kind",
			files:    map[string]string{"l.yaml": "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  metadata: {name: a}\n"},
			wantFile: "l.yaml", wantLine: 4, wantMsg: "items[0]: object has no kind",
		},
		{
			name:     "mapping key that is not a scalar",
			files:    map[string]string{"k.yaml": "apiVersion: v1\nkind: Service\n? [a, b]\n: c\n"},
			wantFile: "k.yaml", wantLine: 3, wantMsg: "mapping key is not a scalar",
		},
		{
			name:     "explicit !!int tag on a non-number",
			files:    map[string]string{"i.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec:\n  port: !!int abc\n"},
			wantFile: "i.yaml", wantLine: 5, wantMsg: `invalid integer "abc"`,
		},
		{
			name:     "file does not exist",
			args:     []string{"missing.yaml"},
			wantFile: "missing.yaml", wantMsg: "no such file or directory",
		},
		{
			name:      "dangling symlink in a directory",
			files:     map[string]string{"d/a.yaml": svcA, "d/gone.yaml": "symlink:nowhere.yaml"},
			args:      []string{"d"},
			recursive: true,
			wantFile:  "d/gone.yaml", wantMsg: "no such file or directory",
		},
		{
			name:  "symlink loop in a directory",
			files: map[string]string{"d/a.yaml": svcA, "d/sub/self.yaml": "symlink:self.yaml"},
			args:  []string{"d"}, recursive: true,
			wantFile: "d/sub/self.yaml", wantMsg: "too many levels of symbolic links",
		},
		{
			name:     "directory named like a manifest",
			files:    map[string]string{"d/a.yaml": svcA, "d/real/x": "", "d/dir.yaml": "symlink:real"},
			args:     []string{"d"},
			wantFile: "d/dir.yaml", wantMsg: "not a regular file (a directory)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tt.files)
			t.Chdir(dir)
			args := tt.args
			if args == nil {
				for name := range tt.files {
					args = append(args, name)
				}
			}
			opts := FileOptions{Filenames: args, Recursive: tt.recursive, Limits: tt.limits,
				Stdin: strings.NewReader("apiVersion: v1\nkind: [Service\n")}
			var err error
			if tt.build {
				_, err = LoadFiles(opts)
			} else {
				_, _, err = ReadFiles(opts)
			}
			checkInputError(t, err, tt.wantFile, tt.wantLine, tt.wantMsg)
		})
	}
}

func checkInputError(t *testing.T, err error, file string, line int, msg string) {
	t.Helper()
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("error = %v (%T), want an *InputError", err, err)
	}
	if ie.File != file || ie.Line != line {
		t.Errorf("error at %s:%d, want %s:%d (%v)", ie.File, ie.Line, file, line, err)
	}
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("error %q does not contain %q", err, msg)
	}
	prefix := file + ":"
	if line > 0 {
		prefix = fmt.Sprintf("%s:%d: ", file, line)
	}
	if !strings.HasPrefix(err.Error(), prefix) {
		t.Errorf("error %q does not start with %q", err, prefix)
	}
}

// A named pipe or device in a directory must be refused without opening it:
// opening a FIFO blocks until a writer appears.
