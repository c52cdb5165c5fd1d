package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"sigs.k8s.io/yaml"
)

// listItemJSON writes a list item as encoding/json's Encoder with SetIndent("    ",
// "  ") and SetEscapeHTML(false) writes it (encoding/json's semantics, v1 options), in
// one pass: the Encoder marshals the item and then indents it again, which took 12% of
// simulate -o json's CPU (bench/README.md, item 12).
var listItemJSON = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsontext.EscapeForHTML(false),
	jsontext.WithIndentPrefix("    "), jsontext.WithIndent("  "))

var replacementChar = []byte("\uFFFD")

// ListWriter writes a JSON or YAML report document whose one list field is written
// item by item, as the items are made, so that a report of many items is never held
// whole. The bytes are those JSON or YAML would write for the whole document.
//
// The document's other fields are rendered twice with the list empty: at the start for
// the fields before the list, and by Close for those after it (a summary known only
// once every item is written).
type ListWriter struct {
	w      io.Writer
	format Format // json or yaml
	key    string
	marker string // the empty list as the whole document renders it
	n      int
}

// NewListWriter starts doc (its list field, key, empty) on w and returns the writer of
// the list's items.
func NewListWriter(w io.Writer, format Format, key string, doc any) (*ListWriter, error) {
	l := &ListWriter{w: w, format: format, key: key}
	switch format {
	case FormatJSON:
		l.marker = "\n  \"" + key + "\": []"
	case FormatYAML:
		l.marker = "\n" + key + ": []\n"
	default:
		return nil, fmt.Errorf("unknown streamed format %q", format)
	}
	head, _, err := l.split(doc)
	if err != nil {
		return nil, err
	}
	_, err = io.WriteString(w, head)
	return l, err
}

// split renders doc and cuts it around its empty list.
func (l *ListWriter) split(doc any) (head, tail string, err error) {
	var b bytes.Buffer
	if err = l.format.Encode(&b, doc); err != nil {
		return "", "", err
	}
	out := "\n" + b.String()
	i := strings.Index(out, l.marker)
	if i < 0 || strings.Count(out, l.marker) != 1 {
		return "", "", fmt.Errorf("report: the list is not where a streamed report expects it")
	}
	open := len(l.marker) - len("]") // json: the head ends with "["
	if l.format == FormatYAML {
		open = len(l.marker) - len(" []\n") // yaml: with "key:"
	}
	return out[1 : i+open], out[i+open:], nil
}

// Add writes one item of the list.
func (l *ListWriter) Add(item any) error {
	var b bytes.Buffer
	switch l.format {
	case FormatJSON:
		if err := jsonv2.MarshalWrite(&b, item, listItemJSON); err != nil {
			return err
		}
		if bytes.Contains(b.Bytes(), replacementChar) {
			// encoding/json writes invalid UTF-8 as the escape \ufffd, jsontext as the
			// character itself: an item holding one (rare) is written by encoding/json.
			b.Reset()
			enc := json.NewEncoder(&b)
			enc.SetIndent("    ", "  ")
			enc.SetEscapeHTML(false)
			if err := enc.Encode(item); err != nil {
				return err
			}
		}
		sep := "\n    "
		if l.n > 0 {
			sep = "," + sep
		}
		if n := b.Len(); n > 0 && b.Bytes()[n-1] == '\n' {
			b.Truncate(n - 1)
		}
		if _, err := io.WriteString(l.w, sep); err != nil {
			return err
		}
	case FormatYAML:
		// Rendered inside a one-item list under the key, so that each line is where
		// the whole document puts it (YAML folds long strings by their column).
		data, err := json.Marshal(map[string][]any{l.key: {item}})
		if err != nil {
			return err
		}
		y, err := yaml.JSONToYAML(data)
		if err != nil {
			return err
		}
		item, ok := strings.CutPrefix(string(y), l.key+":\n")
		if !ok {
			return fmt.Errorf("report: unexpected YAML for a list item")
		}
		b.WriteString("\n")
		b.WriteString(strings.TrimSuffix(item, "\n"))
	}
	l.n++
	_, err := l.w.Write(b.Bytes())
	return err
}

// Close ends the list and writes the rest of doc (its list field empty again).
func (l *ListWriter) Close(doc any) error {
	_, tail, err := l.split(doc)
	if err != nil {
		return err
	}
	if l.n > 0 {
		// The empty list's "]" (json) or " []" (yaml) gives way to the items' close.
		if l.format == FormatJSON {
			tail = "\n  ]" + strings.TrimPrefix(tail, "]")
		} else {
			tail = strings.TrimPrefix(tail, " []")
		}
	}
	_, err = io.WriteString(l.w, tail)
	return err
}
