// Decoding an object again from its file's kept bytes, as it was decoded when read.

package cluster

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/agpol/agpol/internal/yamlnode"
	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// keptFile is the content of a file as read, kept to decode its objects again (and to
// resolve positions) without reading the file again: what was read is what is decoded.
type keptFile struct {
	name string
	data []byte
	lim  Limits
	// lazy says its documents can be parsed alone (documentsSplittable).
	lazy bool
	// stored says the file is a snapshot of a cluster (it starts with SnapshotHeader).
	stored bool
	// docs describes each document of the file, by index.
	docs []docStart
	// lists locates the items of the Lists read item by item (splitFile), by document.
	lists map[int]*listItems
	// parts is how many parts splitFile parsed the file in (0: parsed as one stream).
	parts int
}

// docStart locates a document in its file's data, and records what the document's root
// looked like when read, to check that parsing it alone finds the same document.
type docStart struct {
	offset int   // of the first byte of the line where the document starts
	line   int32 // that line (1-based; 0 for the first document, which starts the data)
	// rootLine and rootColumn locate the root node; nodes is yamlnode.Convert's node count.
	rootLine, rootColumn, nodes int32
	// ok is set when the document holds objects and can be parsed alone.
	ok bool
}

func (d docStart) shift() int {
	if d.line == 0 {
		return 0
	}
	return int(d.line) - 1
}

// documentsSplittable reports whether a document of data parses the same alone, from
// the start of the line of its "---" to the end of the data, as in the stream, with
// lines counted at each newline. It is false for what could make either differ:
// directives (a %TAG of the stream's directives could apply), line breaks other than
// LF and CRLF (YAML also breaks lines at a lone CR, NEL, LS and PS), and a byte order
// mark after the start. Their objects are held as read instead.
func documentsSplittable(data []byte) bool {
	if len(data) > 0 && data[0] == '%' || bytes.Contains(data, []byte("\n%")) {
		return false
	}
	for _, b := range [][]byte{[]byte("\u0085"), []byte("\u2028"), []byte("\u2029")} {
		if bytes.Contains(data, b) {
			return false
		}
	}
	bom := []byte("\uFEFF")
	if bytes.Contains(bytes.TrimPrefix(data, bom), bom) {
		return false
	}
	for i := bytes.IndexByte(data, '\r'); i >= 0; {
		if i+1 >= len(data) || data[i+1] != '\n' {
			return false
		}
		j := bytes.IndexByte(data[i+1:], '\r')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return true
}

// parseAlone parses the document alone and returns its root node (lines short by
// d.shift()), or false when it does not find the document that was read there.
func (f *keptFile) parseAlone(d docStart) (*yaml.Node, bool) {
	var n yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(f.data[d.offset:])).Decode(&n); err != nil {
		return nil, false
	}
	root := &n
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, false
		}
		root = root.Content[0]
	}
	if root.Line+d.shift() != int(d.rootLine) || root.Column != int(d.rootColumn) {
		return nil, false
	}
	return root, true
}

// decode converts document doc again, as it was converted when read.
func (f *keptFile) decode(doc int) map[string]any {
	if d := f.docs[doc]; d.ok {
		if root, ok := f.parseAlone(d); ok {
			v, nodes, err := yamlnode.Convert(root, f.lim.node(), nil)
			if m, isMap := v.(map[string]any); err == nil && isMap && nodes == int(d.nodes) {
				return m
			}
		}
	}
	// Parse the stream up to the document, as when it was read. The bytes are those that
	// were read and decoded then, kept unchanged in memory, and decoding is deterministic:
	// a failure here is a bug in agpol, and Object has no error to return, hence the panics
	// (recovered by the command with a bug-report hint).
	dec := yaml.NewDecoder(bytes.NewReader(f.data))
	for i := 0; ; i++ {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			panic(fmt.Sprintf("cluster: document %d of %s no longer decodes: %v", doc, f.name, err))
		}
		if i < doc {
			continue
		}
		root := &n
		if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
			root = root.Content[0]
		}
		v, _, err := yamlnode.Convert(root, f.lim.node(), nil)
		m, isMap := v.(map[string]any)
		if err != nil || !isMap {
			panic(fmt.Sprintf("cluster: document %d of %s no longer decodes: %v", doc, f.name, err))
		}
		return m
	}
}

// lineIndex finds the offsets of increasing line numbers in one pass over data.
type lineIndex struct {
	data []byte
	line int // the line that starts at off
	off  int
}

func (x *lineIndex) offset(line int) int {
	for x.line < line {
		i := bytes.IndexByte(x.data[x.off:], '\n')
		if i < 0 {
			break
		}
		x.off += i + 1
		x.line++
	}
	return x.off
}

// lazyObject rebuilds an object read from a file.
type lazyObject interface {
	object() *unstructured.Unstructured
	// transient is object() for a caller that drops it soon; nil when the object is
	// better kept (an item of a List, whose whole List is decoded at once).
	transient() *unstructured.Unstructured
	// setNamespace records the namespace DefaultNamespace gave the object.
	setNamespace(ns string)
	// clone returns a lazyObject rebuilding the same object whose namespace is set apart
	// (SharedFiles: the same file's object in another load).
	clone() lazyObject
}

// docRef is an object that is a whole document.
type docRef struct {
	file *keptFile
	doc  int
	ns   string
}

func (d *docRef) object() *unstructured.Unstructured {
	return withNamespace(d.file.decode(d.doc), d.ns)
}

// withNamespace wraps an object decoded again, with the namespace DefaultNamespace gave
// it when it was read ("" for none).
func withNamespace(obj map[string]any, ns string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: obj}
	if ns != "" {
		u.SetNamespace(ns)
	}
	return u
}

func (d *docRef) transient() *unstructured.Unstructured { return d.object() }

func (d *docRef) setNamespace(ns string) { d.ns = ns }

func (d *docRef) clone() lazyObject { c := *d; return &c }

// listRef is a v1 List document, decoded once for all its items.
type listRef struct {
	doc   *docRef
	once  sync.Once
	items []any
}

func (l *listRef) item(i int) map[string]any {
	l.once.Do(func() {
		l.items, _ = l.doc.file.decode(l.doc.doc)["items"].([]any)
	})
	return l.items[i].(map[string]any)
}

// itemRef is an object that is an item of a List.
type itemRef struct {
	list *listRef
	item int
	ns   string
}

func (it *itemRef) object() *unstructured.Unstructured {
	return withNamespace(it.list.item(it.item), it.ns)
}

func (it *itemRef) transient() *unstructured.Unstructured { return nil }

func (it *itemRef) setNamespace(ns string) { it.ns = ns }

// clone shares the List decoded once (its items are read, never changed).
func (it *itemRef) clone() lazyObject { c := *it; return &c }

// itemSpan is an item of a List read item by item (splitFile): it is decoded alone.
type itemSpan struct {
	items *listItems
	item  int
	ns    string
}

func (it *itemSpan) object() *unstructured.Unstructured {
	sp := it.items.spans[it.item]
	f := it.items.file
	node, err := parseItem(f.data, sp, it.items.column)
	if err == nil {
		var v any
		v, _, err = yamlnode.ConvertAt(node, 2, f.lim.node(), nil)
		if m, ok := v.(map[string]any); ok && err == nil {
			return withNamespace(m, it.ns)
		}
	}
	// As in keptFile.decode: the bytes parsed alone when read are parsed alone again.
	panic(fmt.Sprintf("cluster: item %d of the List at line %d of %s no longer decodes: %v", it.item, sp.line, f.name, err))
}

func (it *itemSpan) transient() *unstructured.Unstructured { return it.object() }

func (it *itemSpan) setNamespace(ns string) { it.ns = ns }

func (it *itemSpan) clone() lazyObject { c := *it; return &c }
