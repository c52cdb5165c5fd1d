package render

import (
	"bytes"
	"testing"
)

// TestFormatEncode: json and yaml are documents, encoded as JSON and YAML with the same
// field names; every other format is not, and encoding in it is an error, not text.
func TestFormatEncode(t *testing.T) {
	v := struct {
		Kind  string `json:"kind"`
		Count int    `json:"count"`
	}{"List", 2}
	for _, tc := range []struct {
		f    Format
		doc  bool
		want string
	}{
		{FormatJSON, true, "{\n  \"kind\": \"List\",\n  \"count\": 2\n}\n"},
		{FormatYAML, true, "count: 2\nkind: List\n"},
		{FormatText, false, ""},
		{FormatMarkdown, false, ""},
		{FormatJUnit, false, ""},
	} {
		if tc.f.Document() != tc.doc {
			t.Errorf("%s: Document() = %v", tc.f, !tc.doc)
		}
		var b bytes.Buffer
		err := tc.f.Encode(&b, v)
		if tc.doc && (err != nil || b.String() != tc.want) {
			t.Errorf("%s: %q, %v; want %q", tc.f, b.String(), err, tc.want)
		}
		if !tc.doc && (err == nil || b.Len() > 0) {
			t.Errorf("%s: encoded %q, err %v; want an error", tc.f, b.String(), err)
		}
	}
}
