package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

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
	l, err := newListWriter(w, format, key)
	if err != nil {
		return nil, err
	}
	out, err := render(format, doc)
	if err != nil {
		return nil, err
	}
	i, err := l.find(out)
	if err != nil {
		return nil, err
	}
	_, err = io.WriteString(w, out[1:i+l.open()])
	return l, err
}

func newListWriter(w io.Writer, format Format, key string) (*ListWriter, error) {
	l := &ListWriter{w: w, format: format, key: key}
	switch format {
	case FormatJSON:
		l.marker = "\n  \"" + key + "\": []"
	case FormatYAML:
		l.marker = "\n" + key + ": []\n"
	default:
		return nil, fmt.Errorf("unknown streamed format %q", format)
	}
	return l, nil
}

// render renders doc after a newline, so that a list on the first line is found as
// one at the start of a line.
func render(format Format, doc any) (string, error) {
	var b bytes.Buffer
	if err := format.Encode(&b, doc); err != nil {
		return "", err
	}
	return "\n" + b.String(), nil
}

// find returns where the empty list is in out (rendered).
func (l *ListWriter) find(out string) (int, error) {
	i := strings.Index(out, l.marker)
	if i < 0 || strings.Count(out, l.marker) != 1 {
		return 0, fmt.Errorf("report: the list %q is not where a streamed report expects it", l.key)
	}
	return i, nil
}

// open is the length of the empty list's marker up to where the items go: json ends
// with "[", yaml with "key:".
func (l *ListWriter) open() int {
	if l.format == FormatYAML {
		return len(l.marker) - len(" []\n")
	}
	return len(l.marker) - len("]")
}

// end is what ends the items, and how many bytes of the rendered document after open
// it replaces: the empty list's "]" (json) or " []" (yaml) gives way to the items'
// close.
func (l *ListWriter) end() (string, int) {
	switch {
	case l.n == 0:
		return "", 0
	case l.format == FormatJSON:
		return "\n  ]", len("]")
	}
	return "", len(" []")
}

// Add writes one item of the list.
func (l *ListWriter) Add(item any) error {
	items := l.Items()
	if err := items.Add(item); err != nil {
		return err
	}
	return l.WriteItems(items)
}

// ListItems are items of a ListWriter's list encoded ahead, into memory, to be
// written in order by WriteItems: items can be encoded on several goroutines, each
// into its own ListItems.
type ListItems struct {
	format Format
	key    string
	b      *bytes.Buffer
	n      int
}

// chunkBuffers keeps the buffers of items written (ListItems, simulate's text chunks)
// for the next ones: a buffer of a chunk's items grows to megabytes, and allocating
// it anew for every chunk, cleared, took 8% of simulate -o json's CPU.
var chunkBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// chunkBuffer returns an empty buffer from chunkBuffers.
func chunkBuffer() *bytes.Buffer { return chunkBuffers.Get().(*bytes.Buffer) }

// releaseBuffer empties b and returns it to chunkBuffers.
func releaseBuffer(b *bytes.Buffer) {
	b.Reset()
	chunkBuffers.Put(b)
}

// Items returns an empty ListItems of l's list.
func (l *ListWriter) Items() *ListItems {
	return &ListItems{format: l.format, key: l.key, b: chunkBuffer()}
}

// Add encodes one item after those already in li. A json item is written after the
// separator ",": WriteItems drops it before the list's first item.
func (li *ListItems) Add(item any) error {
	b := li.b
	switch li.format {
	case FormatJSON:
		b.WriteString(",\n    ")
		at := b.Len()
		if err := jsonv2.MarshalWrite(b, item, listItemJSON); err != nil {
			return err
		}
		if bytes.Contains(b.Bytes()[at:], replacementChar) {
			// encoding/json writes invalid UTF-8 as the escape \ufffd, jsontext as the
			// character itself: an item holding one (rare) is written by encoding/json.
			b.Truncate(at)
			enc := json.NewEncoder(b)
			enc.SetIndent("    ", "  ")
			enc.SetEscapeHTML(false)
			if err := enc.Encode(item); err != nil {
				return err
			}
		}
		if n := b.Len(); n > at && b.Bytes()[n-1] == '\n' {
			b.Truncate(n - 1)
		}
	case FormatYAML:
		// Rendered inside a one-item list under the key, so that each line is where
		// the whole document puts it (YAML folds long strings by their column).
		data, err := json.Marshal(map[string][]any{li.key: {item}})
		if err != nil {
			return err
		}
		y, err := yaml.JSONToYAML(data)
		if err != nil {
			return err
		}
		item, ok := strings.CutPrefix(string(y), li.key+":\n")
		if !ok {
			return fmt.Errorf("report: unexpected YAML for a list item")
		}
		b.WriteString("\n")
		b.WriteString(strings.TrimSuffix(item, "\n"))
	}
	li.n++
	return nil
}

// WriteItems writes the items of li (from l.Items) after those written before; li is
// spent.
func (l *ListWriter) WriteItems(li *ListItems) error {
	defer releaseBuffer(li.b)
	data := li.b.Bytes()
	if l.n == 0 && li.n > 0 && l.format == FormatJSON {
		data = data[len(","):]
	}
	l.n += li.n
	if len(data) == 0 {
		return nil
	}
	_, err := l.w.Write(data)
	return err
}

// Close ends the list and writes the rest of doc (its list field empty again).
func (l *ListWriter) Close(doc any) error {
	out, err := render(l.format, doc)
	if err != nil {
		return err
	}
	i, err := l.find(out)
	if err != nil {
		return err
	}
	end, skip := l.end()
	_, err = io.WriteString(l.w, end+out[i+l.open()+skip:])
	return err
}

// StreamedList is a list field of a report document whose items are written one by
// one: Items passes each to add as it is made.
type StreamedList struct {
	Key   string
	Items func(add func(item any) error) error
}

// WriteDocument writes doc as format (json or yaml) with the items of each of lists
// written one by one where doc has that list empty: the bytes are those of doc with its
// lists full, and no list is held whole. Every other field of doc is known before the
// first item. The lists are written in the order the document has them (YAML's keys
// are sorted).
func WriteDocument(w io.Writer, format Format, doc any, lists ...StreamedList) error {
	out, err := render(format, doc)
	if err != nil {
		return err
	}
	type at struct {
		l    *ListWriter
		i    int
		list StreamedList
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	order := make([]at, len(lists))
	for k, list := range lists {
		l, err := newListWriter(bw, format, list.Key)
		if err != nil {
			return err
		}
		i, err := l.find(out)
		if err != nil {
			return err
		}
		order[k] = at{l, i, list}
	}
	slices.SortFunc(order, func(a, b at) int { return a.i - b.i })
	pos := 1 // out starts with the newline render adds
	for _, x := range order {
		if _, err := bw.WriteString(out[pos : x.i+x.l.open()]); err != nil {
			return err
		}
		if err := x.list.Items(x.l.Add); err != nil {
			return err
		}
		end, skip := x.l.end()
		if _, err := bw.WriteString(end); err != nil {
			return err
		}
		pos = x.i + x.l.open() + skip
	}
	if _, err := bw.WriteString(out[pos:]); err != nil {
		return err
	}
	return bw.Flush()
}
