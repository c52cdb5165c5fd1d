package yamlnode

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

func parse(t *testing.T, doc string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

func TestConvert(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		want      any
	}{
		{"scalars", "a: 1\nb: 1.5\nc: true\nd: null\ne: x\nf: '1'\ng: 2026-05-01\nh: 0x10\n",
			map[string]any{"a": int64(1), "b": 1.5, "c": true, "d": nil, "e": "x", "f": "1", "g": "2026-05-01", "h": int64(16)}},
		{"an integer too large for int64", "a: 99999999999999999999\n", map[string]any{"a": 1e20}},
		{"alias", "a: &x [1, 2]\nb: *x\n", map[string]any{"a": []any{int64(1), int64(2)}, "b": []any{int64(1), int64(2)}}},
		{"merge key, explicit wins before or after", "h: &h {a: 1, b: 2, c: 3}\nm: {a: 0, <<: *h, c: 9}\n",
			map[string]any{"h": map[string]any{"a": int64(1), "b": int64(2), "c": int64(3)}, "m": map[string]any{"a": int64(0), "b": int64(2), "c": int64(9)}}},
		{"merge of a list: the earlier mapping wins", "x: &x {a: 1}\nz: &z {a: 2, b: 2}\nm: {<<: [*x, *z]}\n",
			map[string]any{"x": map[string]any{"a": int64(1)}, "z": map[string]any{"a": int64(2), "b": int64(2)}, "m": map[string]any{"a": int64(1), "b": int64(2)}}},
		{"an alias as a key", "a: &k name\n*k : v\n", map[string]any{"a": "name", "name": "v"}},
		{"a scalar document", "x\n", "x"},
		// Read as kubectl reads them (sigs.k8s.io/yaml, with yaml.v2: YAML 1.1).
		{"!!binary is its decoded text", "name: !!binary ZWRnZQ==\n", map[string]any{"name": "edge"}},
		{"!!binary over several lines", "name: !!binary |\n  ZWRn\n  ZQ==\n", map[string]any{"name": "edge"}},
		{"a !!binary key", "!!binary ZWRnZQ==: x\n", map[string]any{"edge": "x"}},
		{"YAML 1.1 booleans, plain only", "a: yes\nb: off\nc: Y\nd: 'yes'\ne: !!str on\nf: N\n",
			map[string]any{"a": true, "b": false, "c": true, "d": "yes", "e": "on", "f": false}},
		{"a YAML 1.1 boolean key is its JSON text", "on: 1\nno: 2\n", map[string]any{"true": int64(1), "false": int64(2)}},
		{"an explicit !!timestamp stays text, as yaml.v2 keeps it", "t: !!timestamp 2001-12-14\n", map[string]any{"t": "2001-12-14"}},
		{"an explicit !!null", "a: !!null ~\nb: !!null\n", map[string]any{"a": nil, "b": nil}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, _, err := Convert(parse(t, c.doc), DefaultLimits, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %#v, want %#v", got, c.want)
			}
		})
	}
}

func TestConvertErrors(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e"} {
		bomb += n + ": &" + n + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+", ", 10), ", ") + "]\n"
		prev = n
	}
	for _, c := range []struct {
		name, doc string
		lim       Limits
		line      int
		msg       string
	}{
		{"alias bomb: the line of the alias that passes yaml/v3's alias ratio", bomb, DefaultLimits, 4, "aliases expand to 4258 of the document's first 4301 nodes, more than the 99% YAML decoders allow (YAML alias bomb?)"},
		{"aliases within the ratio, over MaxAliasNodes", "a: &a [x, y]\nb: [" + strings.Repeat("*a, ", 4000) + "*a]\n", Limits{MaxAliasNodes: 10000, MaxDepth: 200}, 2, "aliases expand to more than 10000 nodes (YAML alias bomb?)"},
		{"deep nesting", "a: " + strings.Repeat("[", 5) + strings.Repeat("]", 5) + "\n", Limits{MaxAliasNodes: 100, MaxDepth: 3}, 1, "nesting deeper than 3 levels"},
		{"deep block nesting: the line of the value too deep", "a:\n b:\n  c:\n   d: 1\n", Limits{MaxAliasNodes: 100, MaxDepth: 2}, 4, "nesting deeper than 2 levels"},
		{"error inside an alias: the alias's line", "a: &x {p: !!int q}\nb: *x\n", DefaultLimits, 1, `invalid integer "q"`},
		{"merge of a scalar", "a: {<<: x}\n", DefaultLimits, 1, "merge key value is not a mapping"},
		{"duplicate key", "a: 1\nb: 2\na: 3\n", DefaultLimits, 3, `duplicate key "a"`},
		{"duplicate key in a merged mapping", "m: {<<: {a: 1,\n a: 2}}\n", DefaultLimits, 2, `duplicate key "a"`},
		{"key that is not a scalar", "? [a]\n: b\n", DefaultLimits, 1, "mapping key is not a scalar"},
		{"key of a merged mapping that is not a scalar", "m: {<<: {[a]: b}}\n", DefaultLimits, 1, "mapping key is not a scalar"},
		{"bad bool", "a: !!bool maybe\n", DefaultLimits, 1, "cannot decode"},
		{"!!binary that is not base64", "a: 1\nname: !!binary 'not base64!'\n", DefaultLimits, 2, "!!binary value contains invalid base64 data"},
		{"!!binary that is not UTF-8 text", "name: !!binary /w==\n", DefaultLimits, 1, "!!binary value is not UTF-8 text"},
		{"!!null on a value", "a: !!null edge\n", DefaultLimits, 1, `cannot decode "edge" as a !!null`},
		{"duplicate keys once read as booleans", "on: 1\n'true': 2\n", DefaultLimits, 2, `duplicate key "true"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Convert(parse(t, c.doc), c.lim, nil)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v (%T), want an *Error", err, err)
			}
			if e.Line != c.line || !strings.Contains(e.Msg, c.msg) {
				t.Errorf("line %d: %s; want line %d: %s", e.Line, e.Msg, c.line, c.msg)
			}
		})
	}
}

// TestAliasBoundIsWhatAliasesAdd: a document without aliases is not bounded by its
// node count, and aliases within yaml/v3's ratio pass.
func TestAliasBoundIsWhatAliasesAdd(t *testing.T) {
	// 3,000 plain nodes, then an alias adding its 3,001 (half the document): within 99%.
	some := "a: &a [" + strings.Repeat("x, ", 2999) + "x]\nb: *a\n"
	if _, _, err := Convert(parse(t, some), DefaultLimits, nil); err != nil {
		t.Errorf("aliases within the ratio: %v", err)
	}
	for _, c := range []struct {
		nodes int
		want  float64
	}{{1000, 0.99}, {400000, 0.99}, {2200000, 0.545}, {4000000, 0.10}, {9000000, 0.10}} {
		if got := allowedAliasRatio(c.nodes); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("allowedAliasRatio(%d) = %v, want %v", c.nodes, got, c.want)
		}
	}
	if testing.Short() {
		t.Skip("a document of 2,000,002 nodes takes seconds to parse")
	}
	plain := "a: [" + strings.Repeat("x, ", 2000000) + "x]\n" // no alias, over the old bound of 2,000,000 nodes
	if _, n, err := Convert(parse(t, plain), DefaultLimits, nil); err != nil || n < 2000000 {
		t.Errorf("a plain document of %d nodes: %v", n, err)
	}
}

func TestConvertEmptyDocument(t *testing.T) {
	v, n, err := Convert(&yaml.Node{Kind: yaml.DocumentNode}, DefaultLimits, nil)
	if v != nil || n != 1 || err != nil {
		t.Errorf("Convert(empty document) = %v, %d, %v; want nil, 1, nil", v, n, err)
	}
}

// TestResolveSharesWhatHasNoAlias: a tree without aliases or merge keys is returned as
// is, and one with them is copied without changing the original.
func TestResolveSharesWhatHasNoAlias(t *testing.T) {
	plain := parse(t, "a: [1, {b: 2}]\n").Content[0]
	got, err := NewResolver(DefaultLimits).Resolve(plain, 0)
	if err != nil || got != plain {
		t.Fatalf("Resolve of a tree without aliases = %p, %v; want the tree itself %p", got, err, plain)
	}
	withAlias := parse(t, "a: &x {b: 1}\nc: *x\nd: {<<: *x}\n").Content[0]
	before, _ := yaml.Marshal(withAlias)
	r := NewResolver(DefaultLimits)
	got, err = r.Resolve(withAlias, 0)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := yaml.Marshal(withAlias)
	if string(before) != string(after) {
		t.Errorf("Resolve changed its input:\n%s\nto\n%s", before, after)
	}
	if c := got.Content[3]; c.Kind != yaml.MappingNode || c.Line != 1 {
		t.Errorf("c resolved to %v at line %d, want the anchored mapping of line 1", c.Kind, c.Line)
	}
	if d := got.Content[5]; len(d.Content) != 2 || d.Content[0].Value != "b" {
		t.Errorf("d resolved to %d nodes, want the merged key b", len(d.Content))
	}
	if r.Nodes == 0 {
		t.Error("no node counted")
	}
}

func TestConvertInterns(t *testing.T) {
	var seen []string
	_, _, err := Convert(parse(t, "k: v\nm: 1\n"), DefaultLimits, func(s string) string { seen = append(seen, s); return s })
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(seen, ",") != "v,k,m" {
		t.Errorf("interned %q, want the keys and the strings", seen)
	}
}
