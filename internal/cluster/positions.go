// FilePositions: field paths of objects read from files to their line and column.
//
// goccy/go-yaml's paths ($.spec.rules[2]) do not replace step: they find the value,
// where a finding points at the key (12 of TestFieldPosition's 13 cases differ), and
// not the deepest field that exists when the path goes further.

package cluster

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"

	"github.com/agpol/agpol/internal/snapshot"
)

// FilePositions resolves field paths to positions by parsing the object's document again
// on demand, so loading pays nothing for positions that are never asked for.
type FilePositions struct {
	mu    sync.Mutex
	files map[string]*keptFile
	// recent holds the node trees of the documents asked for last: findings are
	// resolved object by object, so the same document is asked for several times in a
	// row, and keeping every document's tree would cost many times the input's size.
	recent [8]posDoc
	next   int
	// whole holds every document of a file parsed as a stream: for documents that
	// cannot be parsed alone, and for files this reader did not read.
	whole map[string][]*yaml.Node
}

// posDoc is the node tree of one document, or of one item of a List read item by item
// (item >= 0); its lines are shift less than in the file.
type posDoc struct {
	file  *keptFile
	doc   int
	item  int
	root  *yaml.Node
	shift int
}

func newFilePositions() *FilePositions {
	return &FilePositions{files: map[string]*keptFile{}, whole: map[string][]*yaml.Node{}}
}

// keepAs keeps f as file name: its own name, or that of another file with the same
// bytes (SharedFiles).
func (p *FilePositions) keepAs(name string, f *keptFile) { p.files[name] = f }

// Position implements snapshot.PositionResolver. A nil *FilePositions knows no position.
func (p *FilePositions) Position(src snapshot.Source, fieldPath string) (int, int, bool) {
	if p == nil {
		return 0, 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if src.Item == nestedItem {
		return 0, 0, false
	}
	var (
		n     *yaml.Node
		shift int
	)
	if f := p.files[src.File]; f != nil && src.Item >= 0 && f.lists[src.Doc] != nil {
		if n, shift = p.item(f, src.Doc, src.Item); n == nil {
			return 0, 0, false
		}
	} else if n, shift = p.document(src); n == nil {
		return 0, 0, false
	} else if src.Item >= 0 {
		items := listItemNodes(n)
		if src.Item >= len(items) {
			return 0, 0, false
		}
		n = items[src.Item]
	}
	best := n
	for _, seg := range splitPath(fieldPath) {
		at, next := step(n, seg)
		if next == nil {
			break // the deepest field that exists is the best answer
		}
		best, n = at, next
	}
	return best.Line + shift, best.Column, true
}

// item returns the node of item i of the List of document doc of f, read item by
// item, parsed alone, and how many lines its positions are short of the file's. Called
// with p.mu held, which it releases while it parses.
func (p *FilePositions) item(f *keptFile, doc, i int) (*yaml.Node, int) {
	items := f.lists[doc]
	if i >= len(items.spans) {
		return nil, 0
	}
	for _, r := range p.recent {
		if r.file == f && r.doc == doc && r.item == i && r.root != nil {
			return r.root, r.shift
		}
	}
	sp := items.spans[i]
	// The parse reads only the file's bytes, which never change: other positions are
	// resolved meanwhile (simulate asks from every core).
	p.mu.Unlock()
	n, err := parseItem(f.data, sp, items.column)
	p.mu.Lock()
	if err != nil {
		return nil, 0
	}
	p.recent[p.next] = posDoc{file: f, doc: doc, item: i, root: n, shift: sp.line - 1}
	p.next = (p.next + 1) % len(p.recent)
	return n, sp.line - 1
}

// document returns the root node of the source's document and how many lines its
// positions are short of the file's. Called with p.mu held, which it releases while it
// parses a document alone.
func (p *FilePositions) document(src snapshot.Source) (*yaml.Node, int) {
	f := p.files[src.File]
	if f != nil && src.Doc >= 0 && src.Doc < len(f.docs) && f.docs[src.Doc].ok {
		for _, r := range p.recent {
			if r.file == f && r.doc == src.Doc && r.item < 0 && r.root != nil {
				return r.root, r.shift
			}
		}
		d := f.docs[src.Doc]
		p.mu.Unlock() // as in item: the parse reads only the file's bytes
		root, ok := f.parseAlone(d)
		p.mu.Lock()
		if ok {
			p.recent[p.next] = posDoc{file: f, doc: src.Doc, item: -1, root: root, shift: d.shift()}
			p.next = (p.next + 1) % len(p.recent)
			return root, d.shift()
		}
	}
	docs, ok := p.whole[src.File]
	if !ok {
		var data []byte
		if f != nil {
			data = f.data
		} else {
			var err error
			if data, err = os.ReadFile(src.File); err != nil {
				p.whole[src.File] = nil
				return nil, 0
			}
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var n yaml.Node
			if err := dec.Decode(&n); err != nil {
				break
			}
			docs = append(docs, &n)
		}
		p.whole[src.File] = docs
	}
	if src.Doc < 0 || src.Doc >= len(docs) {
		return nil, 0
	}
	n := docs[src.Doc]
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	return n, 0
}

// splitPath splits "spec.rules[2].name" into ["spec", "rules", "[2]", "name"].
func splitPath(p string) []string {
	var out []string
	for _, part := range strings.Split(p, ".") {
		for part != "" {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				out = append(out, part)
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.IndexByte(part[i:], ']')
			if j < 0 {
				out = append(out, part[i:])
				break
			}
			out = append(out, part[i:i+j+1])
			part = part[i+j+1:]
		}
	}
	return out
}

// step follows one path segment from n. It returns the node to report for the
// segment (the key of a mapping field, whatever its value; the item itself for a
// list index, whose line is that of its "- ") and the node to continue from.
func step(n *yaml.Node, seg string) (at, next *yaml.Node) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if strings.HasPrefix(seg, "[") {
		idx, err := strconv.Atoi(strings.Trim(seg, "[]"))
		if err != nil || n.Kind != yaml.SequenceNode || idx < 0 || idx >= len(n.Content) {
			return nil, nil
		}
		return n.Content[idx], n.Content[idx]
	}
	if n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == seg {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}
