// Parsing one file: its YAML documents into objects, flattening Lists.

package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/yamlnode"
)

// fileReader parses one file, or one part of it (a unit of splitFile).
type fileReader struct {
	lim Limits
	// docs counts the documents parsed, including the one an error stopped at.
	docs int
	// starts describes each document parsed (keptFile.docs of the part read).
	starts  []docStart
	out     []RawObject
	file    *keptFile
	strings map[string]string // see fileReader.intern
	shared  *internTable      // see fileReader.intern
	inspect *inspection       // FileOptions.Inspect; nil when not set
	admit   AdmitKinds        // FileOptions.Admit
	// unitBytes is the size splitFile aims at for the parts it parses in parallel; 0
	// parses every file as one stream.
	unitBytes int
	// shift is how many lines the part being parsed starts after the file's first.
	shift int
	// refs are the documents of this reader's objects, numbered from its first
	// document, which splitFile renumbers from the file's first.
	refs []*docRef
	err  error
}

// parse parses the file's data; the total size was checked by ReadFiles.
func (r *fileReader) parse(name string, data []byte) error {
	data, err := utf16AsKubectl(name, data)
	if err != nil {
		return err
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return &InputError{File: name, Err: errors.New("binary file (contains NUL bytes), not YAML or JSON")}
	}
	if !utf8.Valid(data) {
		line := 1 + bytes.Count(data[:firstInvalidUTF8(data)], []byte("\n"))
		return &InputError{File: name, Line: line, Err: errors.New("invalid UTF-8")}
	}
	f := &keptFile{name: name, data: data, lim: r.lim, lazy: documentsSplittable(data), stored: bytes.HasPrefix(data, []byte(SnapshotHeader))}
	r.file = f
	if f.lazy && r.unitBytes > 0 && r.splitFile(f) {
		return nil
	}
	err = r.stream(f, span{end: len(data), line: 1})
	f.docs = r.starts
	return err
}

// stream parses the documents of part sp of f one after the other, as a YAML stream.
func (r *fileReader) stream(f *keptFile, sp span) error {
	name, data := f.name, f.data[sp.off:sp.end]
	r.shift = sp.line - 1
	dec := yaml.NewDecoder(bytes.NewReader(data))
	lines := lineIndex{data: f.data, line: sp.line, off: sp.off}
	for doc := 0; ; doc++ {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return yamlError(name, data, doc, err)
		}
		r.docs++
		if r.docs > r.lim.MaxDocuments {
			return &InputError{File: name, Err: fmt.Errorf("more than %d documents", r.lim.MaxDocuments)}
		}
		// Where the document starts: the first at the start of the part; a later one at
		// its "---", which the scanner only takes for a marker in the first column.
		d := docStart{}
		switch {
		case doc == 0:
			d.ok = true
			if sp.off > 0 {
				d.offset, d.line = sp.off, int32(sp.line)
			}
		case n.Column == 1 && f.lazy:
			d.offset, d.line, d.ok = lines.offset(n.Line+r.shift), int32(n.Line+r.shift), true
		}
		if err := r.document(f, doc, d, &n); err != nil {
			return err
		}
	}
}

// addDoc records where document doc of the part read starts.
func (r *fileReader) addDoc(doc int, d docStart) {
	for len(r.starts) < doc {
		r.starts = append(r.starts, docStart{})
	}
	r.starts = append(r.starts[:doc], d)
}

func (r *fileReader) document(f *keptFile, doc int, start docStart, n *yaml.Node) error {
	name := f.name
	root := n
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			r.addDoc(doc, docStart{})
			return nil // empty document ("---" alone, comments only)
		}
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		r.addDoc(doc, docStart{})
		return nil
	}
	if r.strings == nil {
		r.strings = map[string]string{}
	}
	v, nodes, err := yamlnode.Convert(root, r.lim.node(), r.intern)
	if err != nil {
		return &InputError{File: name, Line: r.lineOf(errorLineOf(err)), Err: err}
	}
	rootLine := root.Line + r.shift
	obj, ok := v.(map[string]any)
	if !ok {
		return &InputError{File: name, Line: rootLine, Err: errors.New("document is not a mapping (expected a Kubernetes object)")}
	}
	start.rootLine, start.rootColumn, start.nodes = int32(rootLine), int32(root.Column), int32(nodes)
	if !f.lazy {
		start.ok = false
	}
	r.addDoc(doc, start)
	var ref *docRef
	if start.ok {
		ref = &docRef{file: f, doc: doc}
		r.refs = append(r.refs, ref)
	}
	src := snapshot.Source{File: name, Line: rootLine, Column: root.Column, Doc: doc, Item: -1, Stored: f.stored}
	u := &unstructured.Unstructured{Object: obj}
	if err := checkHeader(u); err != nil {
		return &InputError{File: name, Line: rootLine, Err: err}
	}
	if isList(u) {
		var list *listRef
		if ref != nil {
			list = &listRef{doc: ref}
		}
		return r.list(name, u, root, src, list, 0)
	}
	var lazy lazyObject
	if ref != nil {
		lazy = ref
	}
	again := func() map[string]any {
		v, _, _ := yamlnode.Convert(root, r.lim.node(), r.intern)
		m, _ := v.(map[string]any)
		return m
	}
	r.out = append(r.out, readObject(u, src, lazy, again, r.inspect, r.admit))
	return nil
}

// lineOf is the file's line of a line of the part being parsed (0 stays 0).
func (r *fileReader) lineOf(line int) int {
	if line == 0 {
		return 0
	}
	return line + r.shift
}

// isList reports whether u is a list to flatten, as kubectl's FlattenListVisitor
// does: a v1 List, or a typed list (XAccessPolicyList, HTTPRouteList: the body of a
// raw API GET), a kind ending in List whose items field is a list.
func isList(u *unstructured.Unstructured) bool {
	if !strings.HasSuffix(u.GetKind(), "List") {
		return false
	}
	if u.GetAPIVersion() == "v1" && u.GetKind() == "List" {
		return true
	}
	items, found := u.Object["items"]
	if !found {
		return false
	}
	_, ok := items.([]any)
	return ok || items == nil
}

// nestedItem is the Source.Item of an item of a List inside a List: its line is its
// own, but its fields are not located (Position knows one level of items).
const nestedItem = -2

// maxListNesting bounds Lists inside Lists.
const maxListNesting = 10

// list reads the items of List u (root is its node) into r.out, flattening Lists inside
// it. The items of a typed list that have no kind or apiVersion get the list's (the API
// server leaves them out of a list's items). list, when set, decodes the items again
// from the file; items that were changed here or are nested are held as read instead.
func (r *fileReader) list(name string, u *unstructured.Unstructured, root *yaml.Node, src snapshot.Source, list *listRef, depth int) error {
	if depth > maxListNesting {
		return &InputError{File: name, Line: src.Line, Err: fmt.Errorf("kind: List nested deeper than %d levels", maxListNesting)}
	}
	items, _ := u.Object["items"].([]any)
	itemNodes := listItemNodes(root)
	for i, it := range items {
		var node *yaml.Node
		if i < len(itemNodes) {
			node = itemNodes[i]
		}
		var lz func() lazyObject
		if list != nil && depth == 0 {
			lz = func() lazyObject { return &itemRef{list: list, item: i} }
		}
		if err := r.listItem(name, u, i, it, node, src, lz, depth); err != nil {
			return err
		}
	}
	return nil
}

// listItem reads item i of List u (it, whose node is node) into r.out. lazy, when set,
// makes what decodes the item again from the file.
func (r *fileReader) listItem(name string, u *unstructured.Unstructured, i int, it any, node *yaml.Node, src snapshot.Source, lazy func() lazyObject, depth int) error {
	typed := !(u.GetAPIVersion() == "v1" && u.GetKind() == "List")
	m, ok := it.(map[string]any)
	isrc := src
	isrc.Item = i
	if depth > 0 {
		isrc.Item = nestedItem
	}
	if node != nil {
		for node.Kind == yaml.AliasNode && node.Alias != nil {
			node = node.Alias
		}
		isrc.Line, isrc.Column = node.Line+r.shift, node.Column
	}
	if !ok {
		return &InputError{File: name, Line: isrc.Line, Err: fmt.Errorf("items[%d] is not an object", i)}
	}
	if typed {
		if _, has := m["kind"]; !has {
			m["kind"] = strings.TrimSuffix(u.GetKind(), "List")
			lazy = nil
		}
		if _, has := m["apiVersion"]; !has {
			m["apiVersion"] = u.GetAPIVersion()
			lazy = nil
		}
	}
	iu := &unstructured.Unstructured{Object: m}
	if err := checkHeader(iu); err != nil {
		return &InputError{File: name, Line: isrc.Line, Err: fmt.Errorf("items[%d]: %w", i, err)}
	}
	if isList(iu) {
		if node == nil {
			node = &yaml.Node{}
		}
		return r.list(name, iu, node, isrc, nil, depth+1)
	}
	var lz lazyObject
	if lazy != nil {
		lz = lazy()
	}
	again := func() map[string]any {
		if node == nil {
			return nil
		}
		v, _, _ := yamlnode.ConvertAt(node, 2, r.lim.node(), r.intern)
		m, _ := v.(map[string]any)
		return m
	}
	r.out = append(r.out, readObject(iu, isrc, lz, again, r.inspect, r.admit))
	return nil
}

func checkHeader(u *unstructured.Unstructured) error {
	if _, ok := u.Object["kind"].(string); !ok {
		return errors.New("object has no kind")
	}
	if _, ok := u.Object["apiVersion"].(string); !ok {
		return fmt.Errorf("%s has no apiVersion", u.Object["kind"])
	}
	if md, ok := u.Object["metadata"]; ok {
		if _, isMap := md.(map[string]any); !isMap {
			return errors.New("metadata is not a mapping")
		}
	}
	return nil
}

func listItemNodes(root *yaml.Node) []*yaml.Node {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "items" && root.Content[i+1].Kind == yaml.SequenceNode {
			return root.Content[i+1].Content
		}
	}
	return nil
}

// utf16AsKubectl returns a file that starts with a UTF-16 byte-order mark (little or
// big endian) decoded to UTF-8, as kubectl reads it: cli-runtime's FileVisitor reads
// files through unicode.BOMOverride(unicode.UTF8.NewDecoder()) (k8s.io/cli-runtime
// pkg/resource/visitor.go:560), which also turns an unpaired surrogate into U+FFFD.
// Other files are returned as they are (a UTF-8 mark is skipped by the YAML reader).
// Lines keep their numbers; the UTF-8 text is at most 1.5 times the file's size.
func utf16AsKubectl(name string, data []byte) ([]byte, error) {
	if !bytes.HasPrefix(data, []byte{0xFF, 0xFE}) && !bytes.HasPrefix(data, []byte{0xFE, 0xFF}) {
		return data, nil
	}
	out, _, err := transform.Bytes(unicode.BOMOverride(unicode.UTF8.NewDecoder()), data)
	if err != nil {
		return nil, &InputError{File: name, Err: fmt.Errorf("decoding UTF-16: %w", err)}
	}
	return out, nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}
