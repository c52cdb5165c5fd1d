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

// fileReader parses one file.
type fileReader struct {
	lim Limits
	// docs counts the documents parsed, including the one an error stopped at.
	docs    int
	out     []RawObject
	file    *keptFile
	strings map[string]string // see fileReader.intern
	shared  *internTable      // see fileReader.intern
	inspect *inspection       // FileOptions.Inspect; nil when not set
	err     error
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
	dec := yaml.NewDecoder(bytes.NewReader(data))
	lines := lineIndex{data: data, line: 1}
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
		// Where the document starts: the first at the start of the data; a later one at
		// its "---", which the scanner only takes for a marker in the first column.
		d := docStart{}
		switch {
		case doc == 0:
			d.ok = true
		case n.Column == 1 && f.lazy:
			d.offset, d.line, d.ok = lines.offset(n.Line), int32(n.Line), true
		}
		if err := r.document(f, doc, d, &n); err != nil {
			return err
		}
	}
}

func (r *fileReader) document(f *keptFile, doc int, start docStart, n *yaml.Node) error {
	name := f.name
	root := n
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			f.addDoc(doc, docStart{})
			return nil // empty document ("---" alone, comments only)
		}
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		f.addDoc(doc, docStart{})
		return nil
	}
	if r.strings == nil {
		r.strings = map[string]string{}
	}
	v, nodes, err := yamlnode.Convert(root, r.lim.node(), r.intern)
	if err != nil {
		return &InputError{File: name, Line: errorLineOf(err), Err: err}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return &InputError{File: name, Line: root.Line, Err: errors.New("document is not a mapping (expected a Kubernetes object)")}
	}
	start.rootLine, start.rootColumn, start.nodes = int32(root.Line), int32(root.Column), int32(nodes)
	if !f.lazy {
		start.ok = false
	}
	f.addDoc(doc, start)
	var ref *docRef
	if start.ok {
		ref = &docRef{file: f, doc: doc}
	}
	src := snapshot.Source{File: name, Line: root.Line, Column: root.Column, Doc: doc, Item: -1, Stored: f.stored}
	u := &unstructured.Unstructured{Object: obj}
	if err := checkHeader(u); err != nil {
		return &InputError{File: name, Line: root.Line, Err: err}
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
	r.out = append(r.out, readObject(u, src, lazy, r.inspect))
	return nil
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
	typed := !(u.GetAPIVersion() == "v1" && u.GetKind() == "List")
	for i, it := range items {
		m, ok := it.(map[string]any)
		isrc := src
		isrc.Item = i
		if depth > 0 {
			isrc.Item = nestedItem
		}
		var node *yaml.Node
		if i < len(itemNodes) {
			node = itemNodes[i]
			for node.Kind == yaml.AliasNode && node.Alias != nil {
				node = node.Alias
			}
			isrc.Line, isrc.Column = node.Line, node.Column
		}
		if !ok {
			return &InputError{File: name, Line: isrc.Line, Err: fmt.Errorf("items[%d] is not an object", i)}
		}
		lazy := list != nil && depth == 0
		if typed {
			if _, has := m["kind"]; !has {
				m["kind"] = strings.TrimSuffix(u.GetKind(), "List")
				lazy = false
			}
			if _, has := m["apiVersion"]; !has {
				m["apiVersion"] = u.GetAPIVersion()
				lazy = false
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
			if err := r.list(name, iu, node, isrc, nil, depth+1); err != nil {
				return err
			}
			continue
		}
		var lz lazyObject
		if lazy {
			lz = &itemRef{list: list, item: i}
		}
		r.out = append(r.out, readObject(iu, isrc, lz, r.inspect))
	}
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
