package explain

import (
	"bytes"
	"errors"
	"io"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/agpol/agpol/internal/parallel"
	"github.com/agpol/agpol/internal/yamlnode"
)

// A request file is usually one document whose requests list holds every request.
// yaml/v3 builds a document's whole node tree before handing it over (about 4 KiB per
// request, twenty times the parsed request), and it has no event interface to read a
// list item by item. So a file of that shape is parsed in pieces: the lines before
// "requests:", then its items requestChunk at a time, each piece parsed with the same
// parser in the same place ("requests:" then the items' own lines), so only the node
// trees of a few pieces are live at once (the pieces are parsed on every core, a few
// ahead of the one being read).
//
// This is used only when parsing the whole document would give the same requests: the
// file is one document without directives or document markers, with LF line breaks
// and no tab in any indentation, "requests:" is its last top-level key, and its list
// is a block sequence whose item lines ("- ") are at one column that no other line of
// the list reaches. An anchor used in a later piece, a quoted or flow value running
// over an item's "- " line, any error at all: parsePieces gives up, and the file is
// parsed whole (parseDocuments), which reports the error as it always has.

// requestChunk is how many requests are parsed at once from one list.
const requestChunk = 64

// requestList locates the parts of a request file of the shape above.
type requestList struct {
	requestsAt int // offset of the "requests:" line
	// items are the offsets and 1-based lines of the items' "- " lines.
	items []listItem
}

type listItem struct{ offset, line int }

// splitRequestList returns the parts of data, or false when it does not have the shape.
func splitRequestList(data []byte) (requestList, bool) {
	var l requestList
	if bytes.ContainsAny(data, "\r\ufeff\u0085\u2028\u2029") {
		return l, false // line breaks other than LF, or a byte order mark
	}
	l.requestsAt = -1
	col := -1 // the column of the items' "-"
	line := 0
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += off
		}
		text := data[off:end]
		line++
		next := end + 1
		if bytes.HasPrefix(text, []byte("---")) || bytes.HasPrefix(text, []byte("...")) || bytes.HasPrefix(text, []byte("%")) {
			return l, false // a document marker or directive: several documents, or a stream's directives
		}
		indent := len(text) - len(bytes.TrimLeft(text, " "))
		if indent < len(text) && text[indent] == '\t' {
			return l, false
		}
		blank := indent == len(text) || text[indent] == '#'
		switch {
		case l.requestsAt < 0:
			if isRequestsKey(text) {
				l.requestsAt = off
			}
		case blank:
		case col < 0 && isItem(text, indent):
			col = indent
			l.items = append(l.items, listItem{off, line})
		case col >= 0 && indent == col && isItem(text, indent):
			l.items = append(l.items, listItem{off, line})
		case col < 0 || indent <= col:
			return l, false // another key after requests, or a line that is not in an item
		}
		off = next
	}
	return l, len(l.items) > 0
}

// isRequestsKey reports whether a line is the key "requests:" alone at the first
// column, with at most a comment after it.
func isRequestsKey(text []byte) bool {
	rest, ok := bytes.CutPrefix(text, []byte("requests:"))
	if !ok {
		return false
	}
	if len(rest) == 0 {
		return true
	}
	if rest[0] != ' ' {
		return false // "requests:x" is a key of its own
	}
	rest = bytes.TrimLeft(rest, " ")
	return len(rest) == 0 || rest[0] == '#'
}

// isItem reports whether a line indented by indent starts a block sequence item.
func isItem(text []byte, indent int) bool {
	return text[indent] == '-' && (len(text) == indent+1 || text[indent+1] == ' ')
}

// parsePieces parses a request file of the shape splitRequestList finds, piece by piece.
// It returns false when the file is not of that shape or parsing a piece fails.
func parsePieces(name string, data []byte, defaultNS string) (*RequestFile, bool) {
	// The YAML parser refuses a file that is not UTF-8, or that holds a character YAML does
	// not allow, wherever it is, comments included; the pieces leave some lines to no
	// parser, so the whole file decides.
	if !yamlReadable(data) {
		return nil, false
	}
	l, ok := splitRequestList(data)
	if !ok {
		return nil, false
	}
	p := newParser(name, defaultNS)
	// One resolver for the whole document: its pieces share the document's bounds,
	// counted as resolving the document at once counts them.
	res := yamlnode.NewResolver(yamlnode.DefaultLimits)
	h, ok := p.pieceHeader(data[:l.requestsAt], res)
	if !ok {
		return nil, false
	}
	res.Nodes += 2 // the requests key and its list
	out := &RequestFile{Requests: make([]*Request, 0, len(l.items))}
	names := map[string]int{}
	// The pieces are parsed on every core, a few ahead of the one being resolved and
	// read, which happens in the file's order (the resolver's bound counts in it).
	pieces := (len(l.items) + requestChunk - 1) / requestChunk
	err := parallel.Ordered(pieces, func(_, k int) *yaml.Node {
		i := k * requestChunk
		j := min(i+requestChunk, len(l.items))
		end := len(data)
		if j < len(l.items) {
			end = l.items[j].offset
		}
		return parsePiece(data[l.items[i].offset:end], l.items[i].line, j-i)
	}, func(list *yaml.Node) error {
		if list == nil {
			return errPiece
		}
		items, ok := resolvePiece(list, res)
		if !ok || p.requests(items, out, names) != nil {
			return errPiece
		}
		return nil
	})
	if err != nil {
		return nil, false
	}
	if h.trustDomainNode != nil {
		out.TrustDomain = h.trustDomain
	}
	return out, true
}

// pieceHeader parses the lines before "requests:" (a mapping at the first column, or
// nothing but comments).
func (p *parser) pieceHeader(text []byte, res *yamlnode.Resolver) (fileHeader, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var doc yaml.Node
	err := dec.Decode(&doc)
	if errors.Is(err, io.EOF) || err == nil && (len(doc.Content) == 0 || isNull(doc.Content[0])) {
		res.Nodes++ // the document's mapping, which has only the requests key
		return fileHeader{}, true
	}
	if err != nil || doc.Content[0].Kind != yaml.MappingNode || doc.Content[0].Column != 1 {
		return fileHeader{}, false
	}
	if err := dec.Decode(&yaml.Node{}); !errors.Is(err, io.EOF) {
		return fileHeader{}, false
	}
	root, err := res.Resolve(doc.Content[0], 0)
	if err != nil {
		return fileHeader{}, false
	}
	h, err := p.header(root)
	return h, err == nil && h.requests == nil
}

// errPiece stops parsePieces at a piece it cannot read as the whole document reads it.
var errPiece = errors.New("request file: not read in pieces")

// parsePiece parses n items of the list, whose lines are text from line first on, as
// they are parsed in the whole document: it returns the list node of the items, or nil
// when the piece does not parse as n items of the list.
func parsePiece(text []byte, first, n int) *yaml.Node {
	src := make([]byte, 0, len("requests:\n")+len(text))
	src = append(append(src, "requests:\n"...), text...)
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(src)).Decode(&doc); err != nil || len(doc.Content) != 1 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode || len(root.Content) != 2 || root.Content[0].Value != "requests" {
		return nil
	}
	list := root.Content[1]
	if list.Kind != yaml.SequenceNode || len(list.Content) != n {
		return nil
	}
	shiftLines(list, first-2)
	return list
}

// resolvePiece resolves the items of a piece's list (at the items' depth in the
// document).
func resolvePiece(list *yaml.Node, res *yamlnode.Resolver) ([]*yaml.Node, bool) {
	items := make([]*yaml.Node, len(list.Content))
	for i, it := range list.Content {
		r, err := res.Resolve(it, 2)
		if err != nil {
			return nil, false
		}
		items[i] = r
	}
	return items, true
}

// shiftLines adds by to the line of n and of every node under it.
func shiftLines(n *yaml.Node, by int) {
	n.Line += by
	for _, c := range n.Content {
		shiftLines(c, by)
	}
}

// yamlReadable reports whether data is UTF-8 of characters the YAML parser reads: YAML
// 1.2's c-printable (tab, line breaks, printable ASCII, NEL and the printable planes), as
// yaml/v3's reader checks (readerc.go, yaml_parser_update_buffer).
func yamlReadable(data []byte) bool {
	for len(data) > 0 {
		if b := data[0]; b < utf8.RuneSelf { // ASCII, most of a file
			if b < 0x20 && b != 0x09 && b != 0x0A && b != 0x0D || b == 0x7F {
				return false
			}
			data = data[1:]
			continue
		}
		r, n := utf8.DecodeRune(data)
		if r == utf8.RuneError && n <= 1 {
			return false
		}
		switch {
		case r == 0x09 || r == 0x0A || r == 0x0D || r == 0x85:
		case r >= 0x20 && r <= 0x7E:
		case r >= 0xA0 && r <= 0xD7FF:
		case r >= 0xE000 && r <= 0xFFFD:
		case r >= 0x10000 && r <= 0x10FFFF:
		default:
			return false
		}
		data = data[n:]
	}
	return true
}
