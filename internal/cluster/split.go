// Splitting a file into parts parsed in parallel, and a List into its items.

package cluster

import (
	"bytes"
	"errors"
	"io"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agpol/agpol/internal/parallel"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/yamlnode"
)

// defaultUnitBytes is the size of the parts of a file parsed in parallel: a file smaller
// than this is parsed as one stream (ReadFiles already parses files in parallel), unless
// it holds a List read item by item.
const defaultUnitBytes = 256 << 10

// span is a part of a file's data, from off to end, that starts a line (line, 1-based).
type span struct {
	off, end int
	line     int
}

// listItems locates the items of a block-style List, each from the line of its "-"
// to the next item's: column is that of the "-" (0-based).
type listItems struct {
	file   *keptFile
	spans  []span
	column int
}

// listPlan is a List document read item by item: its header (the document without its
// items) is read first, then its items, each parsed alone.
type listPlan struct {
	u     *unstructured.Unstructured // the List, items: null
	src   snapshot.Source            // the List's, Doc counted from the file's first document at the join
	start docStart
	items *listItems
}

// unit is a part of a file parsed by one worker: a stream of whole documents (sp), the
// document of a List (head), or items from..to of a List.
type unit struct {
	sp       span
	list     *listPlan
	head     bool
	from, to int
}

// errNotAlone says a part does not parse alone as it does in its file; the file is then
// parsed as one stream, which reports the error the file has, if any.
var errNotAlone = errors.New("part does not parse alone")

// splitFile parses f in parts on every core and reports whether it did: the documents,
// split at their "---" markers, in parts of about r.unitBytes, and a block-style List
// item by item, so that no node tree of the whole List is built (docs/limits.md,
// "Memory"). The objects, their sources and positions are those of parsing the file as
// one stream (stream): when any part fails to parse alone, or does not parse as it
// would in the stream, nothing is kept and it returns false; the caller then parses
// the stream, which reports the first error of the file as it always did.
// f.lazy (documentsSplittable) must hold: a marker line then always starts a document.
func (r *fileReader) splitFile(f *keptFile) bool {
	var units []unit
	cur := span{off: -1}
	flush := func() {
		if cur.off >= 0 {
			units = append(units, unit{sp: cur})
			cur.off = -1
		}
	}
	for _, p := range documentSpans(f.data) {
		if plan := r.planList(f, p); plan != nil {
			flush()
			units = append(units, unit{list: plan, head: true})
			items := plan.items.spans
			for i := 0; i < len(items); {
				j, size := i, 0
				for j < len(items) && (j == i || size < r.unitBytes) {
					size += items[j].end - items[j].off
					j++
				}
				units = append(units, unit{list: plan, from: i, to: j})
				i = j
			}
			continue
		}
		if cur.off < 0 {
			cur = p
		} else {
			cur.end = p.end
		}
		if cur.end-cur.off >= r.unitBytes {
			flush()
		}
	}
	flush()
	if len(units) <= 1 && (len(units) == 0 || units[0].list == nil) {
		return false // one stream: parse it as such
	}
	parts := make([]*fileReader, len(units))
	parallel.For(len(units), func(i int) {
		u := units[i]
		p := &fileReader{lim: r.lim, shared: r.shared, inspect: r.inspect, admit: r.admit, file: f}
		switch {
		case u.head:
		case u.list != nil:
			p.err = p.items(f, u.list, u.from, u.to)
		default:
			p.err = p.stream(f, u.sp)
		}
		p.strings = nil
		parts[i] = p
	})
	var (
		out     []RawObject
		starts  []docStart
		lists   map[int]*listItems
		docs    int
		listDoc int
	)
	for i, p := range parts {
		u := units[i]
		if p.err != nil {
			return false
		}
		switch {
		case u.head:
			listDoc = docs
			starts = append(starts, u.list.start)
			if lists == nil {
				lists = map[int]*listItems{}
			}
			lists[docs] = u.list.items
			docs++
		case u.list != nil:
			for _, o := range p.out {
				o.Source.Doc = listDoc
				out = append(out, o)
			}
		default:
			for _, o := range p.out {
				o.Source.Doc += docs
				out = append(out, o)
			}
			for _, ref := range p.refs {
				ref.doc += docs
			}
			starts = append(starts, p.starts...)
			docs += p.docs
		}
		if docs > r.lim.MaxDocuments {
			return false
		}
	}
	r.out, r.docs, f.docs, f.lists, f.parts = out, docs, starts, lists, len(units)
	return true
}

// documentSpans splits data before each line that starts with a "---" marker.
func documentSpans(data []byte) []span {
	var out []span
	cur := span{line: 1}
	line := 1
	for off := 0; off < len(data); {
		eol := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if eol >= 0 {
			next = off + eol + 1
		}
		if off > 0 && isMarker(data[off:next], "---") {
			cur.end = off
			out = append(out, cur)
			cur = span{off: off, line: line}
		}
		off = next
		line++
	}
	cur.end = len(data)
	return append(out, cur)
}

// isMarker reports whether line starts with marker ("---" or "...") followed by a
// blank or the end of the line, as YAML's scanner takes a document marker.
func isMarker(line []byte, marker string) bool {
	if !bytes.HasPrefix(line, []byte(marker)) {
		return false
	}
	return len(line) == len(marker) || isBlank(line[len(marker)])
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

// planList returns the plan of reading document part p of f item by item, or nil when
// p is not a block-style List: one document whose root mapping, in the first column,
// has an "items:" line with nothing after it but a comment, followed by a block
// sequence; without aliases in what is read before the items.
func (r *fileReader) planList(f *keptFile, p span) *listPlan {
	data := f.data[p.off:p.end]
	at, line := itemsLine(data)
	if at < 0 {
		return nil
	}
	items, start, end, ok := itemSpans(data, at, line)
	if !ok {
		return nil
	}
	items.file = f
	// The header: the document without its items (they are the value of "items:").
	header := make([]byte, 0, start+len(data)-end)
	header = append(append(header, data[:start]...), data[end:]...)
	dec := yaml.NewDecoder(bytes.NewReader(header))
	var n, extra yaml.Node
	if dec.Decode(&n) != nil || !errors.Is(dec.Decode(&extra), io.EOF) || n.Kind != yaml.DocumentNode || len(n.Content) != 1 {
		return nil
	}
	root := n.Content[0]
	if root.Kind != yaml.MappingNode || !hasNullItemsAt(root, line) {
		return nil
	}
	if r.strings == nil {
		r.strings = map[string]string{}
	}
	v, res, err := yamlnode.ConvertAt(root, 0, r.lim.node(), r.intern)
	obj, isMap := v.(map[string]any)
	if err != nil || !isMap || res.AliasNodes > 0 {
		return nil
	}
	u := &unstructured.Unstructured{Object: obj}
	if checkHeader(u) != nil || !isList(u) {
		return nil
	}
	shift := p.line - 1
	for i := range items.spans {
		s := &items.spans[i]
		s.off, s.end, s.line = s.off+p.off, s.end+p.off, s.line+shift
	}
	d := docStart{rootLine: int32(root.Line + shift), rootColumn: int32(root.Column), ok: true}
	if p.off > 0 {
		d.offset, d.line = p.off, int32(p.line)
	}
	return &listPlan{
		u:     u,
		src:   snapshot.Source{File: f.name, Line: root.Line + shift, Column: root.Column, Item: -1, Stored: f.stored},
		start: d,
		items: items,
	}
}

// itemsLine returns the offset in data of the only line that is "items:" in the first
// column, with nothing after it but blanks and a comment, and its line (1-based); -1
// when there is none or more than one.
func itemsLine(data []byte) (int, int) {
	found, foundLine := -1, 0
	for off := 0; off < len(data); {
		i := bytes.Index(data[off:], []byte("items:"))
		if i < 0 {
			break
		}
		at := off + i
		off = at + len("items:")
		if at > 0 && data[at-1] != '\n' {
			continue
		}
		rest := bytes.TrimLeft(data[off:], " \t")
		if len(rest) > 0 && rest[0] != '\n' && rest[0] != '\r' && (rest[0] != '#' || len(rest) == len(data[off:])) {
			continue // a value after the key, or "items:#" (no comment without a blank before it)
		}
		if found >= 0 {
			return -1, 0
		}
		found, foundLine = at, 1+bytes.Count(data[:at], []byte("\n"))
	}
	return found, foundLine
}

// hasNullItemsAt reports whether mapping root has a plain key "items" at line, first
// column, whose value is empty.
func hasNullItemsAt(root *yaml.Node, line int) bool {
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "items" && k.Line == line && k.Column == 1 && k.Style == 0 {
			return v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" && v.Value == "" && v.Anchor == ""
		}
	}
	return false
}

// itemSpans locates the block sequence after the "items:" line at data[at:] (line
// itemLine): its items (offsets in data, 1-based lines of data), and where the
// sequence starts and ends. The sequence starts at the first line that is not blank
// or a comment, which must be a "-" item, and ends before the first line indented
// less than it, or as much but not an item. A line indented with a tab is not
// read here (false).
func itemSpans(data []byte, at, itemLine int) (*listItems, int, int, bool) {
	items := &listItems{column: -1}
	start := -1
	off := at + bytes.IndexByte(data[at:], '\n') + 1
	if off <= at {
		return nil, 0, 0, false
	}
	line := itemLine + 1
	for off < len(data) {
		next := len(data)
		if eol := bytes.IndexByte(data[off:], '\n'); eol >= 0 {
			next = off + eol + 1
		}
		l := data[off:next]
		ind := len(l) - len(bytes.TrimLeft(l, " "))
		rest := bytes.TrimLeft(l, " \t")
		if len(bytes.TrimRight(rest, "\r\n")) == 0 || rest[0] == '#' {
			off, line = next, line+1
			continue
		}
		if l[ind] == '\t' {
			return nil, 0, 0, false
		}
		item := rest[0] == '-' && (len(rest) == 1 || isBlank(rest[1]))
		if items.column < 0 {
			if !item {
				return nil, 0, 0, false
			}
			items.column, start = ind, off
		}
		if ind == items.column && item {
			items.spans = append(items.spans, span{off: off, line: line})
		} else if ind <= items.column {
			break
		}
		off, line = next, line+1
	}
	if start < 0 {
		return nil, 0, 0, false
	}
	for i := range items.spans {
		if i+1 < len(items.spans) {
			items.spans[i].end = items.spans[i+1].off
		} else {
			items.spans[i].end = off
		}
	}
	return items, start, off, true
}

// items reads items from..to of the List of plan, each parsed alone.
func (r *fileReader) items(f *keptFile, plan *listPlan, from, to int) error {
	if r.strings == nil {
		r.strings = map[string]string{}
	}
	for i := from; i < to; i++ {
		sp := plan.items.spans[i]
		node, err := parseItem(f.data, sp, plan.items.column)
		if err != nil {
			return err
		}
		r.shift = sp.line - 1
		v, res, err := yamlnode.ConvertAt(node, 2, r.lim.node(), r.intern)
		if err != nil {
			return err
		}
		if res.AliasNodes > 0 {
			return errNotAlone // aliases are bounded over the whole document
		}
		ref := &itemSpan{items: plan.items, item: i}
		if err := r.listItem(f.name, plan.u, i, v, node, plan.src, func() lazyObject { return ref }, 0); err != nil {
			return err
		}
	}
	return nil
}

// parseItem parses item sp of a List alone: a block sequence of one item at column
// (0-based). It returns the item's node, whose lines are short by sp.line-1.
func parseItem(data []byte, sp span, column int) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data[sp.off:sp.end]))
	var n, extra yaml.Node
	if err := dec.Decode(&n); err != nil {
		return nil, err
	}
	if !errors.Is(dec.Decode(&extra), io.EOF) || n.Kind != yaml.DocumentNode || len(n.Content) != 1 {
		return nil, errNotAlone
	}
	seq := n.Content[0]
	if seq.Kind != yaml.SequenceNode || len(seq.Content) != 1 || seq.Line != 1 || seq.Column != column+1 || seq.Style&yaml.FlowStyle != 0 || seq.Anchor != "" {
		return nil, errNotAlone
	}
	return seq.Content[0], nil
}
