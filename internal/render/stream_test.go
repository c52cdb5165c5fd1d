package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// rawItem has a MarshalJSON of its own, whose output encoding/json indents again.
type rawItem struct{ raw string }

func (r rawItem) MarshalJSON() ([]byte, error) { return []byte(r.raw), nil }

// TestListWriterJSONAsEncodingJSON: a JSON list item is written in one pass
// (listItemJSON) with the bytes encoding/json writes for the whole document, on values
// where the two could part: HTML characters, line separators, invalid UTF-8, empty and
// nil lists and maps, map keys out of order, omitempty, embedded structs, numbers,
// times, and a value with its own MarshalJSON.
func TestListWriterJSONAsEncodingJSON(t *testing.T) {
	type inner struct {
		A string `json:"a,omitempty"`
		B []int  `json:"b"`
	}
	type item struct {
		inner
		Text   string            `json:"text"`
		Empty  []string          `json:"empty"`
		Nil    []string          `json:"nil"`
		Map    map[string]any    `json:"map"`
		NilMap map[string]string `json:"nilMap"`
		Omit   *inner            `json:"omit,omitempty"`
		Num    float64           `json:"num"`
		Big    int64             `json:"big"`
		When   time.Time         `json:"when"`
		Raw    rawItem           `json:"raw"`
		Any    any               `json:"any"`
		Bytes  []byte            `json:"bytes"`
		Skip   string            `json:"-"`
	}
	items := []any{
		item{
			inner: inner{A: "<a href=\"x\">&</a>", B: []int{}},
			Text:  "line\u2028sep\u2029 tab\t nul\x00 bad\xff utf8 é ✓ \"q\" \\",
			Empty: []string{},
			Map:   map[string]any{"z": 1, "a": []any{}, "m": map[string]any{}, "é": nil, "<": 1.5e300},
			Num:   0.000001, Big: 1 << 60,
			When:  time.Date(2026, 11, 27, 1, 2, 3, 4, time.UTC),
			Raw:   rawItem{`{"x":[1, 2,{}],"y" : "z"}`},
			Any:   []any{map[string]any{}, "s", 3, nil, true},
			Bytes: []byte("bytes"),
		},
		item{Raw: rawItem{"null"}},
		map[string]string{"b": "2", "a": "1"},
		[]any{},
		"plain",
	}
	doc := map[string]any{"kind": "List", "results": []any{}}
	var got bytes.Buffer
	l, err := NewListWriter(&got, FormatJSON, "results", doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if err := l.Add(it); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(doc); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"kind": "List", "results": items}); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("streamed list differs from encoding/json's:\n%s\nwant\n%s", got.String(), want.String())
	}
	if !strings.Contains(got.String(), `\u2028`) || !strings.Contains(got.String(), "<a href") {
		t.Errorf("the cases were not written as expected:\n%s", got.String())
	}
}

// TestWriteDocument: a document whose lists are written item by item has the bytes of
// the whole document, in JSON and YAML, whichever lists are empty, first or last.
func TestWriteDocument(t *testing.T) {
	type doc struct {
		Kind  string         `json:"kind"`
		A     []any          `json:"a"`
		Mid   map[string]int `json:"mid"`
		B     []any          `json:"b"`
		C     *[]any         `json:"c,omitempty"`
		After []string       `json:"after,omitempty"`
	}
	items := []any{map[string]any{"x": "a long string that YAML might fold at its column: " + strings.Repeat("word ", 30), "y": []any{1, "<&>"}}, "plain", 3, []any{}}
	ptr := func(v []any) *[]any { return &v }
	tests := []struct {
		name    string
		a, b, c []any
		cNil    bool
		after   []string
	}{
		{name: "all full", a: items, b: items[1:], c: items[:1], after: []string{"z"}},
		{name: "all empty", a: nil, b: nil, c: nil},
		{name: "middle empty, c omitted", a: items, cNil: true},
		{name: "only the last", c: items},
	}
	for _, tt := range tests {
		for _, format := range []Format{FormatJSON, FormatYAML} {
			t.Run(tt.name+"/"+string(format), func(t *testing.T) {
				whole := doc{Kind: "D", A: append([]any{}, tt.a...), Mid: map[string]int{"k": 1}, B: append([]any{}, tt.b...), After: tt.after}
				head := doc{Kind: "D", A: []any{}, Mid: map[string]int{"k": 1}, B: []any{}, After: tt.after}
				lists := []StreamedList{streamed("a", tt.a), streamed("b", tt.b)}
				if !tt.cNil {
					whole.C, head.C = ptr(append([]any{}, tt.c...)), ptr([]any{})
					lists = append(lists, streamed("c", tt.c))
				}
				var want, got bytes.Buffer
				if err := format.Encode(&want, whole); err != nil {
					t.Fatal(err)
				}
				if err := WriteDocument(&got, format, head, lists...); err != nil {
					t.Fatal(err)
				}
				if got.String() != want.String() {
					t.Errorf("streamed:\n%s\nwant:\n%s", got.String(), want.String())
				}
			})
		}
	}
	// A list the document does not hold empty is an error, not a wrong document.
	if err := WriteDocument(&bytes.Buffer{}, FormatJSON, doc{A: []any{1}}, streamed("a", nil)); err == nil {
		t.Error("a list that is not empty in the document was written over")
	}
}

func streamed(key string, items []any) StreamedList {
	return StreamedList{Key: key, Items: func(add func(any) error) error {
		for _, it := range items {
			if err := add(it); err != nil {
				return err
			}
		}
		return nil
	}}
}
