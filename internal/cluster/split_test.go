package cluster

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// readSplit reads data as stdin, parsing it in parts of about unitBytes (0: one stream).
func readSplit(data []byte, lim *Limits, unitBytes int) ([]RawObject, *FilePositions, error) {
	return readFiles(FileOptions{Filenames: []string{"-"}, Stdin: bytes.NewReader(data), Limits: lim}, unitBytes)
}

// sameAsStream checks that reading data in parts (every document and List item its own
// part, and the default parts) gives what parsing it as one stream gives: the same error,
// or the same objects, sources, identities and field positions. It returns the file as
// read in the smallest parts.
func sameAsStream(t *testing.T, data []byte, lim *Limits) *keptFile {
	t.Helper()
	want, wantPos, wantErr := readSplit(data, lim, 0)
	var kept *keptFile
	for _, unit := range []int{1, defaultUnitBytes} {
		got, pos, err := readSplit(data, lim, unit)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("parts of %d bytes: error %v, want %v", unit, err, wantErr)
		}
		if err != nil {
			continue
		}
		if unit == 1 {
			kept = pos.files["<stdin>"]
		}
		if len(got) != len(want) {
			t.Fatalf("parts of %d bytes: %d objects, want %d", unit, len(got), len(want))
		}
		DefaultNamespace(got, "dflt")
		DefaultNamespace(want, "dflt")
		paths := []string{"", "metadata", "metadata.name", "spec", "spec.ports[1].port", "spec.rules[0]", "items[0]", "spec.x.y"}
		for i := range want {
			g, w := got[i], want[i]
			if g.Source != w.Source {
				t.Errorf("parts of %d bytes: object %d source %+v, want %+v", unit, i, g.Source, w.Source)
			}
			if g.Ref() != w.Ref() {
				t.Errorf("parts of %d bytes: object %d is %v, want %v", unit, i, g.Ref(), w.Ref())
			}
			if fmt.Sprint(g.Check()) != fmt.Sprint(w.Check()) {
				t.Errorf("parts of %d bytes: object %d types with %v, want %v", unit, i, g.Check(), w.Check())
			}
			if !reflect.DeepEqual(g.Object(), w.Object()) {
				t.Errorf("parts of %d bytes: object %d is\n%v\nwant\n%v", unit, i, g.Object(), w.Object())
			}
			for _, p := range paths {
				l1, c1, ok1 := pos.Position(g.Source, p)
				l2, c2, ok2 := wantPos.Position(w.Source, p)
				if l1 != l2 || c1 != c2 || ok1 != ok2 {
					t.Errorf("parts of %d bytes: %s %q at %d:%d %v, want %d:%d %v", unit, g.Source, p, l1, c1, ok1, l2, c2, ok2)
				}
			}
		}
	}
	return kept
}

func svcItem(name, indent string) string {
	return indent + "- apiVersion: v1\n" + indent + "  kind: Service\n" + indent + "  metadata:\n" + indent + "    name: " + name +
		"\n" + indent + "  spec:\n" + indent + "    ports:\n" + indent + "    - port: 80\n" + indent + "    - port: 443\n"
}

// Lists are read item by item when they are block sequences under an "items:" line of
// their own, and as a whole otherwise, with the same objects and positions either way.
func TestListItemByItem(t *testing.T) {
	two := svcItem("a", "") + svcItem("b", "")
	tests := []struct {
		name   string
		data   string
		byItem bool // the file's List is read item by item
	}{
		{"block List", "apiVersion: v1\nkind: List\nitems:\n" + two, true},
		{"indented items", "apiVersion: v1\nkind: List\nitems:\n" + svcItem("a", "  ") + svcItem("b", "  "), true},
		{"items key first, comments", "items: # the items\n# before\n" + svcItem("a", "") + "# between\n\n" + svcItem("b", "") + "kind: List\napiVersion: v1\n", true},
		{"after other documents", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\n# c\n--- \napiVersion: v1\nkind: List\nitems:\n" + two + "---\napiVersion: v1\nkind: Service\nmetadata: {name: t}\n", true},
		{"typed list", "apiVersion: v1\nkind: ServiceList\nitems:\n- metadata: {name: a}\n- kind: Service\n  metadata: {name: b}\n", true},
		{"flow items", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: a}}\n- {apiVersion: v1, kind: Service, metadata: {name: b}}\n", true},
		{"crlf", strings.ReplaceAll("apiVersion: v1\nkind: List\nitems:\n"+two, "\n", "\r\n"), true},
		{"nested List", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n" + svcItem("a", "  ") + svcItem("b", ""), true},
		{"block scalars with markers", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data:\n    a: |\n      - x\n      items:\n" + svcItem("b", ""), true},
		{"merge key without alias", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata:\n    <<: {name: m}\n", true},
		// Read as a whole.
		{"JSON", `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Service","metadata":{"name":"a"}}]}`, false},
		{"flow sequence", "apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Service, metadata: {name: a}}]\n", false},
		{"aliases across items", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata: {name: a, labels: &l {x: y}}\n- apiVersion: v1\n  kind: Service\n  metadata: {name: b, labels: *l}\n", false},
		{"alias inside an item", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata: {name: a, labels: &l {x: y}, annotations: *l}\n", false},
		{"alias in the header", "apiVersion: &v v1\nkind: List\nx: *v\nitems:\n" + two, false},
		{"anchored items", "apiVersion: v1\nkind: List\nitems: &i\n" + two, false},
		{"not a List", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nitems:\n- a\n- b\n", false},
		{"quoted key", "apiVersion: v1\nkind: List\n\"items\":\n" + two, false},
		{"directive", "%YAML 1.1\n---\napiVersion: v1\nkind: List\nitems:\n" + two, false},
		{"items in a quoted scalar", "apiVersion: v1\nkind: List\nitems:\nnote: \"x\nitems:\n- y\n\"\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := readSplit([]byte(tt.data), nil, 0); err != nil {
				t.Fatalf("input does not read: %v", err)
			}
			f := sameAsStream(t, []byte(tt.data), nil)
			if got := f != nil && len(f.lists) > 0; got != tt.byItem {
				t.Errorf("read item by item = %v, want %v", got, tt.byItem)
			}
			sameAsHeld(t, []byte(tt.data), nil)
		})
	}
}

// Inputs that do not read give the same error read in parts as read as one stream.
func TestSplitErrorsAsStream(t *testing.T) {
	head := "apiVersion: v1\nkind: List\nitems:\n"
	many := strings.Repeat("---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n", 12)
	tests := map[string]string{
		"bad indentation in an item":     head + svcItem("a", "") + "- apiVersion: v1\n  kind: Service\n metadata: {}\n",
		"duplicate key in an item":       head + "- apiVersion: v1\n  kind: Service\n  kind: Service\n",
		"quoted scalar across items":     head + "- apiVersion: v1\n  kind: Service\n  metadata: {name: \"a\n- b\"}\n",
		"unknown anchor":                 head + "- apiVersion: v1\n  kind: Service\n  metadata: {name: *nope}\n",
		"item not an object":             head + svcItem("a", "") + "- 5\n",
		"empty item":                     head + "-\n" + svcItem("a", ""),
		"item without kind":              head + "- apiVersion: v1\n  metadata: {name: a}\n",
		"duplicate items key":            head + svcItem("a", "") + "items:\n" + svcItem("b", ""),
		"too deep":                       head + "- apiVersion: v1\n  kind: Service\n  metadata: {name: a, labels: " + strings.Repeat("[", 12) + strings.Repeat("]", 12) + "}\n",
		"alias bomb in an item":          head + "- apiVersion: v1\n  kind: Service\n  metadata:\n    a: &a [x, x, x, x, x, x, x, x, x, x]\n    b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n    c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n    d: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
		"too many documents":             many + "---\n" + head + svcItem("a", ""),
		"error in a later document":      many + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: a\n labels: {}\n",
		"marker inside a quoted scalar":  "apiVersion: v1\nkind: Service\nmetadata: {name: \"a\n---\nb\"}\n",
		"alias to an earlier document":   "apiVersion: v1\nkind: Service\nmetadata: {name: s, labels: &l {a: b}}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: t, labels: *l}\n",
		"document end then another":      "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n...\napiVersion: v1\nkind: Service\nmetadata: {name: t}\n---\n" + head + svcItem("a", ""),
		"List header after items broken": head + svcItem("a", "") + "kind: [\n",
	}
	lim := limits(func(l *Limits) { l.MaxDocuments = 12; l.MaxDepth = 10; l.MaxAliasNodes = 500 })
	for name, data := range tests {
		t.Run(name, func(t *testing.T) { sameAsStream(t, []byte(data), lim) })
	}
}

// A List read item by item in parts: the same objects and positions as the stream, in
// more than one part.
func TestLargeListInParts(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := range 1000 {
		b.WriteString(svcItem(fmt.Sprintf("svc-%04d", i), ""))
	}
	b.WriteString("---\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Service\nmetadata: {name: doc-%04d}\n", i)
	}
	f := sameAsStream(t, []byte(b.String()), nil)
	if f == nil || len(f.lists) != 1 || f.parts < 500 {
		t.Fatalf("read in %d parts", f.parts)
	}
	_, pos, err := readSplit([]byte(b.String()), nil, defaultUnitBytes)
	if err != nil {
		t.Fatal(err)
	}
	if parts := pos.files["<stdin>"].parts; parts < 3 {
		t.Errorf("read in %d parts of %d bytes, want several", parts, defaultUnitBytes)
	}
}
