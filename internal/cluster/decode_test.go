package cluster

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestDecodeAsKubectl: YAML tags, YAML 1.1 booleans and UTF-16 files are read as
// kubectl reads them, or refused at file:line; never a different object silently.
func TestDecodeAsKubectl(t *testing.T) {
	const svc = "apiVersion: v1\nkind: Service\nmetadata:\n  name: !!binary ZWRnZQ==\n  namespace: ns\n  labels: {tls: on}\n"
	utf16File := func(order binary.ByteOrder, bom uint16, text string) string {
		units := append([]uint16{bom}, utf16.Encode([]rune(text))...)
		b := make([]byte, 2*len(units))
		for i, u := range units {
			order.PutUint16(b[2*i:], u)
		}
		return string(b)
	}
	for _, c := range []struct{ name, file string }{
		{"UTF-8", svc},
		{"UTF-8 with a byte-order mark", "\uFEFF" + svc},
		{"UTF-16 little endian with a byte-order mark", utf16File(binary.LittleEndian, 0xFEFF, svc)},
		{"UTF-16 big endian with a byte-order mark", utf16File(binary.BigEndian, 0xFEFF, svc)},
	} {
		t.Run(c.name, func(t *testing.T) {
			objs, _, err := readStdin([]byte(c.file), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(objs) != 1 {
				t.Fatalf("%d objects, want 1", len(objs))
			}
			o := objs[0].Object()
			if o.GetName() != "edge" || o.GetNamespace() != "ns" {
				t.Errorf("read %s/%s, want ns/edge", o.GetNamespace(), o.GetName())
			}
			if tls := o.Object["metadata"].(map[string]any)["labels"].(map[string]any)["tls"]; tls != true {
				t.Errorf("label tls = %#v, want true (YAML 1.1, as kubectl reads it; the API server then refuses it)", tls)
			}
		})
	}
	for _, c := range []struct {
		name, file string
		line       int
		msg        string
	}{
		{"!!binary that is not base64", "apiVersion: v1\nkind: Service\nmetadata:\n  name: !!binary edge!\n", 4, "!!binary value contains invalid base64 data"},
		{"!!binary that is not text", "apiVersion: v1\nkind: Service\nmetadata:\n  name: !!binary /w==\n", 4, "!!binary value is not UTF-8 text"},
		{"!!null on a value", "apiVersion: v1\nkind: Service\nmetadata:\n  name: !!null edge\n", 4, `cannot decode "edge" as a !!null`},
		{"UTF-16 with an error at line 3", utf16File(binary.LittleEndian, 0xFEFF, "apiVersion: v1\nkind: Service\nmetadata: [\n"), 4, "malformed YAML"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := readStdin([]byte(c.file), nil)
			checkInputError(t, err, "<stdin>", c.line, c.msg)
		})
	}
}

// TestLargePlainList: a valid 15 MB List of 200,000 objects without a single alias
// is read (it was refused as an alias bomb when every node counted toward the bound),
// item by item.
func TestLargePlainList(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes 15 MB")
	}
	const n = 200000
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "- {apiVersion: v1, kind: Service, metadata: {name: svc-%06d, namespace: ns}, spec: {}}\n", i)
	}
	if b.Len() < 15<<20 {
		t.Fatalf("generated %d bytes, want at least 15 MiB", b.Len())
	}
	path := filepath.Join(t.TempDir(), "list.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	objs, pos, err := ReadFiles(FileOptions{Filenames: []string{path}})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != n {
		t.Errorf("%d objects, want %d", len(objs), n)
	}
	// Read item by item (docs/limits.md, "Memory"), not as one node tree.
	if f := pos.files[path]; len(f.lists) != 1 || f.parts < 2 {
		t.Errorf("not read item by item in parts: %d Lists, %d parts", len(f.lists), f.parts)
	}
}
