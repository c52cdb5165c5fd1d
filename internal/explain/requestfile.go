package explain

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agpol/agpol/internal/yamlnode"
)

// The optional header of a request file. With it, a request file can live in a
// directory of manifests read with -f: loaders skip the unknown kind.
const (
	RequestFileAPIVersion = "agpol.dev/v1alpha1"
	RequestFileKind       = "SimulationRequests"
)

// RequestFile is a parsed request file (the public format of agpol simulate --requests).
type RequestFile struct {
	TrustDomain string
	Requests    []*Request
}

// FileError is a problem in a request file at a line.
type FileError struct {
	File string
	Line int
	Msg  string
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

type parser struct {
	file      string
	defaultNS string
	// strs interns the values requests repeat (gateways, callers, methods, paths,
	// hosts, headers, tools): a file's requests share one copy of each, which keeps a
	// file of thousands of requests small and lets deciding them read values already
	// in cache instead of one scattered string per request and field.
	strs map[string]string
}

// parsedRequest is a request with the parts most requests have, allocated together:
// the requests of a file are one slice of these, so that deciding them in file order
// reads memory in order.
type parsedRequest struct {
	req     Request
	mcp     MCP
	gateway NamespacedName
}

// intern returns the file's copy of s.
func (p *parser) intern(s string) string {
	if v, ok := p.strs[s]; ok {
		return v
	}
	p.strs[s] = s
	return s
}

// value is str for a value requests repeat: interned.
func (p *parser) value(n *yaml.Node) (string, error) {
	s, err := p.str(n)
	return p.intern(s), err
}

func (p *parser) errf(n *yaml.Node, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &FileError{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// ParseRequestFile parses and validates a request file strictly: unknown fields and bad
// values are errors naming file:line. Names without a namespace use defaultNS.
//
// Every YAML document of the file is read (documents separated by ---), and their
// requests are decided in order; empty documents are skipped. Aliases and merge keys
// are expanded within the bounds manifests are read with.
//
// A file that is one list of requests is parsed a few requests at a time (parsePieces);
// any other, and any file with an error, one document at a time.
func ParseRequestFile(name string, data []byte, defaultNS string) (*RequestFile, error) {
	if rf, ok := parsePieces(name, data, defaultNS); ok {
		return rf, nil
	}
	return parseDocuments(name, data, defaultNS)
}

func newParser(name, defaultNS string) *parser {
	return &parser{file: name, defaultNS: defaultNS, strs: map[string]string{}}
}

// parseDocuments is ParseRequestFile, reading each document whole.
func parseDocuments(name string, data []byte, defaultNS string) (*RequestFile, error) {
	p := newParser(name, defaultNS)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	out := &RequestFile{}
	names := map[string]int{}
	tdLine := 0
	docs := 0
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, &FileError{File: name, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
		}
		if len(doc.Content) == 0 || isNull(doc.Content[0]) {
			continue // an empty document, as after a trailing ---
		}
		docs++
		root, err := p.resolveDocument(doc.Content[0])
		if err != nil {
			return nil, err
		}
		td, tdNode, err := p.document(root, out, names)
		if err != nil {
			return nil, err
		}
		if tdNode != nil {
			if tdLine > 0 && td != out.TrustDomain {
				return nil, p.errf(tdNode, "trustDomain %q differs from %q (line %d): one request file has one trust domain", td, out.TrustDomain, tdLine)
			}
			out.TrustDomain, tdLine = td, tdNode.Line
		}
	}
	if docs == 0 {
		return nil, &FileError{File: name, Msg: "empty request file"}
	}
	return out, nil
}

// resolveDocument expands the aliases and merge keys of one document's root, within
// the bounds manifests are read with.
func (p *parser) resolveDocument(root *yaml.Node) (*yaml.Node, error) {
	n, err := yamlnode.NewResolver(yamlnode.DefaultLimits).Resolve(root, 0)
	var e *yamlnode.Error
	if errors.As(err, &e) {
		return nil, &FileError{File: p.file, Line: e.Line, Msg: e.Msg}
	}
	return n, err
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// document parses one document of a request file, appending its requests to out.
// It returns the document's trust domain and the node that gave it (nil if none).
func (p *parser) document(root *yaml.Node, out *RequestFile, names map[string]int) (string, *yaml.Node, error) {
	h, err := p.header(root)
	if err != nil {
		return "", nil, err
	}
	if h.requests == nil {
		return "", nil, p.errf(root, "missing requests")
	}
	if h.requests.Kind != yaml.SequenceNode {
		return "", nil, p.errf(h.requests, "requests must be a list")
	}
	if out.Requests == nil {
		out.Requests = make([]*Request, 0, len(h.requests.Content))
	}
	if err := p.requests(h.requests.Content, out, names); err != nil {
		return "", nil, err
	}
	return h.trustDomain, h.trustDomainNode, nil
}

// fileHeader is what a document of a request file says besides its requests.
type fileHeader struct {
	trustDomain     string
	trustDomainNode *yaml.Node // nil when the document gives no trust domain
	requests        *yaml.Node // nil when the document has no requests field
}

// header checks the fields of a document's root mapping.
func (p *parser) header(root *yaml.Node) (fileHeader, error) {
	var h fileHeader
	if root.Kind != yaml.MappingNode {
		return h, p.errf(root, "a request file is a mapping with trustDomain and requests")
	}
	err := p.fields(root, map[string]func(*yaml.Node) error{
		"apiVersion": func(v *yaml.Node) error {
			if s, err := p.str(v); err != nil || s != RequestFileAPIVersion {
				return p.errf(v, "apiVersion must be %s", RequestFileAPIVersion)
			}
			return nil
		},
		"kind": func(v *yaml.Node) error {
			if s, err := p.str(v); err != nil || s != RequestFileKind {
				return p.errf(v, "kind must be %s", RequestFileKind)
			}
			return nil
		},
		"trustDomain": func(v *yaml.Node) (err error) { h.trustDomain, err = p.str(v); h.trustDomainNode = v; return },
		"requests":    func(v *yaml.Node) error { h.requests = v; return nil },
	})
	return h, err
}

// requests parses the items of a requests list, appending them to out.
func (p *parser) requests(items []*yaml.Node, out *RequestFile, names map[string]int) error {
	slab := make([]parsedRequest, len(items))
	for i, n := range items {
		r, err := p.request(n, &slab[i])
		if err != nil {
			return err
		}
		if r.Name == "" {
			r.Name = fmt.Sprintf("request-%d", len(out.Requests)+1)
		}
		// The parser has capitalised the method and lower-cased the header names: only
		// the defaults are left to fill, and Normalize need not check that again.
		r.HTTP.defaults()
		r.normal = true
		if prev, ok := names[r.Name]; ok {
			return p.errf(n, "duplicate request name %q (first at line %d)", r.Name, prev)
		}
		names[r.Name] = n.Line
		out.Requests = append(out.Requests, r)
	}
	return nil
}

func (p *parser) fields(n *yaml.Node, handlers map[string]func(*yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return p.errf(n, "expected a mapping")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		h, ok := handlers[k.Value]
		if !ok {
			var known []string
			for name := range handlers {
				known = append(known, name)
			}
			sort.Strings(known)
			return p.errf(k, "unknown field %q (known: %s)", k.Value, strings.Join(known, ", "))
		}
		if seen[k.Value] {
			return p.errf(k, "duplicate field %q", k.Value)
		}
		seen[k.Value] = true
		if err := h(v); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) str(n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return "", p.errf(n, "expected a string")
	}
	s, err := yamlnode.Text(n)
	if err != nil {
		return "", p.errf(n, "%v", err)
	}
	return s, nil
}

func (p *parser) nn(n *yaml.Node) (*NamespacedName, error) {
	x := new(NamespacedName)
	return x, p.nnInto(n, x)
}

// nnInto is nn into x.
func (p *parser) nnInto(n *yaml.Node, x *NamespacedName) error {
	s, err := p.value(n)
	if err != nil {
		return err
	}
	if *x, err = ParseNamespacedName(s, p.defaultNS); err != nil {
		return p.errf(n, "%v", err)
	}
	x.Namespace = p.intern(x.Namespace) // the default namespace, or a part of s
	return nil
}

func (p *parser) answer(n *yaml.Node) (Answer, error) {
	s, err := p.str(n)
	if err != nil {
		return "", err
	}
	switch Answer(s) {
	case AnswerAllow, AnswerDeny:
		return Answer(s), nil
	}
	return "", p.errf(n, "invalid authorizer answer %q: use allow or deny", s)
}

// request parses n into pr and returns its request.
func (p *parser) request(n *yaml.Node, pr *parsedRequest) (*Request, error) {
	r := &pr.req
	*r = Request{Line: n.Line, From: Caller{Kind: CallerAnonymous}}
	err := p.fields(n, map[string]func(*yaml.Node) error{
		"name": func(v *yaml.Node) (err error) { r.Name, err = p.str(v); return },
		"from": func(v *yaml.Node) (err error) { r.From, err = p.from(v); return },
		"gateway": func(v *yaml.Node) error {
			r.Gateway = &pr.gateway
			return p.nnInto(v, r.Gateway)
		},
		"listener": func(v *yaml.Node) (err error) { r.Listener, err = p.value(v); return },
		"route":    func(v *yaml.Node) (err error) { r.Route, err = p.nn(v); return },
		"backend":  func(v *yaml.Node) (err error) { r.Backend, err = p.nn(v); return },
		"service":  func(v *yaml.Node) (err error) { r.Service, err = p.nn(v); return },
		"http":     func(v *yaml.Node) error { return p.http(v, &r.HTTP) },
		"mcp": func(v *yaml.Node) error {
			r.MCP = &pr.mcp
			return p.mcp(v, r.MCP)
		},
		"extauth": func(v *yaml.Node) error {
			if v.Kind == yaml.ScalarNode {
				a, err := p.answer(v)
				r.ExtAuth = ExtAuth{Gateway: a, Backend: a}
				return err
			}
			return p.fields(v, map[string]func(*yaml.Node) error{
				"gateway": func(v *yaml.Node) (err error) { r.ExtAuth.Gateway, err = p.answer(v); return },
				"backend": func(v *yaml.Node) (err error) { r.ExtAuth.Backend, err = p.answer(v); return },
			})
		},
		"expect": func(v *yaml.Node) error {
			s, err := p.str(v)
			if err != nil {
				return err
			}
			switch s {
			case Allow, Deny, Indeterminate:
				r.Expect = s
				return nil
			}
			return p.errf(v, "invalid expect %q: use allow, deny or indeterminate", s)
		},
		"expectDecidedBy": func(v *yaml.Node) (err error) { r.ExpectDecidedBy, err = p.str(v); return },
		"identity":        func(v *yaml.Node) (err error) { r.creds().Identity, err = p.identity(v); return },
		"metadata":        func(v *yaml.Node) (err error) { r.creds().Metadata, err = p.metadata(v); return },
		"decisions":       func(v *yaml.Node) (err error) { r.creds().Decisions, err = p.decisions(v); return },
		"expectLevel": func(v *yaml.Node) error {
			s, err := p.str(v)
			if err != nil {
				return err
			}
			switch s {
			case "gateway", "backend", "none":
				r.ExpectLevel = s
				return nil
			}
			return p.errf(v, "invalid expectLevel %q: use gateway, backend or none", s)
		},
	})
	if err != nil {
		return nil, err
	}
	if r.Backend != nil && r.Service != nil {
		return nil, p.errf(n, "request %q: give backend or service, not both", r.Name)
	}
	return r, nil
}

func (p *parser) from(n *yaml.Node) (Caller, error) {
	var id Caller
	count := 0
	err := p.fields(n, map[string]func(*yaml.Node) error{
		"serviceAccount": func(v *yaml.Node) error {
			count++
			s, err := p.str(v)
			if err != nil {
				return err
			}
			id, err = ParseCaller("sa:" + s)
			if err != nil {
				if ns, name, ok := strings.Cut(s, "/"); ok && ns != "" && name != "" && !strings.Contains(name, "/") {
					return p.errf(v, "invalid serviceAccount %q: %v", s, ValidServiceAccount(ns, name))
				}
				return p.errf(v, "invalid serviceAccount %q: use NAMESPACE/NAME", s)
			}
			id.Namespace, id.Name = p.intern(id.Namespace), p.intern(id.Name)
			return nil
		},
		"spiffe": func(v *yaml.Node) error {
			count++
			s, err := p.value(v)
			if err != nil {
				return err
			}
			if err := ValidSPIFFEID(s); err != nil {
				return p.errf(v, "%v", err)
			}
			id = Caller{Kind: CallerSPIFFE, SPIFFE: s}
			return nil
		},
		"certificate": func(v *yaml.Node) error {
			count++
			s, err := p.str(v)
			if err != nil {
				return err
			}
			if err := ValidSubject(s); err != nil {
				return p.errf(v, "%v", err)
			}
			id = Caller{Kind: CallerCertificate, Subject: s}
			return nil
		},
		"anonymous": func(v *yaml.Node) error {
			count++
			var b bool
			if v.Kind != yaml.ScalarNode || v.Decode(&b) != nil || !b {
				return p.errf(v, "anonymous must be true")
			}
			id = Caller{Kind: CallerAnonymous}
			return nil
		},
	})
	if err != nil {
		return id, err
	}
	if count != 1 {
		return id, p.errf(n, "from needs exactly one of serviceAccount, spiffe, certificate, anonymous")
	}
	return id, nil
}

func (p *parser) http(n *yaml.Node, h *HTTP) error {
	return p.fields(n, map[string]func(*yaml.Node) error{
		"method": func(v *yaml.Node) error {
			s, err := p.str(v)
			if err != nil {
				return err
			}
			if m, ok := HTTPMethod(s); ok {
				h.Method = p.intern(m)
				return nil
			}
			return p.errf(v, "invalid HTTP method %q", s)
		},
		"path": func(v *yaml.Node) error {
			s, err := p.value(v)
			if err == nil && !strings.HasPrefix(s, "/") {
				return p.errf(v, "path must start with /")
			}
			h.Path = s
			return err
		},
		"host": func(v *yaml.Node) (err error) { h.Host, err = p.value(v); return },
		"port": func(v *yaml.Node) error {
			i, err := strconv.Atoi(v.Value)
			if v.Kind != yaml.ScalarNode || err != nil || i < 1 || i > 65535 {
				return p.errf(v, "invalid port %q: 1-65535", v.Value)
			}
			h.Port = i
			return nil
		},
		"headers": func(v *yaml.Node) error {
			if v.Kind != yaml.MappingNode {
				return p.errf(v, "headers must be a mapping of name: value")
			}
			h.Headers = map[string]string{}
			for i := 0; i+1 < len(v.Content); i += 2 {
				k, val := v.Content[i], v.Content[i+1]
				if val.Kind != yaml.ScalarNode {
					return p.errf(val, "header %s: value must be a string", k.Value)
				}
				if err := ValidHeaderName(k.Value); err != nil {
					return p.errf(k, "%v", err)
				}
				name := p.intern(strings.ToLower(k.Value))
				if old, ok := h.Headers[name]; ok {
					h.Headers[name] = old + "," + val.Value
				} else {
					h.Headers[name] = p.intern(val.Value)
				}
			}
			return nil
		},
		"time": func(v *yaml.Node) error {
			s, err := p.str(v)
			if err != nil {
				return err
			}
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return p.errf(v, "invalid time %q: use RFC 3339, e.g. 2026-05-01T10:00:00Z", s)
			}
			h.Time = t
			return nil
		},
	})
}

func (p *parser) mcp(n *yaml.Node, m *MCP) error {
	err := p.fields(n, map[string]func(*yaml.Node) error{
		"method": func(v *yaml.Node) (err error) { m.Method, err = p.value(v); return },
		"tool":   func(v *yaml.Node) (err error) { m.Tool, err = p.value(v); return },
		"uri":    func(v *yaml.Node) (err error) { m.URI, err = p.value(v); return },
	})
	if err != nil {
		return err
	}
	if m.Method == "" {
		m.Method = "tools/call"
	}
	return nil
}
