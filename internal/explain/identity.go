package explain

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agpol/agpol/internal/effective/authpolicy"
)

// Credentials is what a request carries for Kuadrant's AuthPolicy: the identity Authorino
// would have verified, what its metadata rules would fetch, and the answers of external
// authorizers (docs/kuadrant-identities.md).
type Credentials struct {
	Identity  *authpolicy.Identity `json:"identity,omitempty"`
	Metadata  map[string]any       `json:"metadata,omitempty"`
	Decisions map[string]Answer    `json:"decisions,omitempty"`
}

// Persona is a named identity: who-can, can-i and matrix ask their question for each.
type Persona struct {
	Name string `json:"name"`
	Credentials
	Line int `json:"-"`
}

// identity parses a request's identity.
func (p *parser) identity(n *yaml.Node) (*authpolicy.Identity, error) {
	id := &authpolicy.Identity{}
	err := p.fields(n, map[string]func(*yaml.Node) error{
		"rule": func(v *yaml.Node) (err error) { id.Rule, err = p.str(v); return },
		"jwt": func(v *yaml.Node) error {
			id.JWT = &authpolicy.JWTIdentity{}
			return p.fields(v, map[string]func(*yaml.Node) error{
				"claims": func(v *yaml.Node) error {
					if v.Kind != yaml.MappingNode {
						return p.errf(v, "claims must be a mapping")
					}
					m, err := p.jsonValue(v)
					id.JWT.Claims, _ = m.(map[string]any)
					return err
				},
			})
		},
		"apiKey": func(v *yaml.Node) error {
			id.APIKey = &authpolicy.APIKeyIdentity{}
			return p.fields(v, map[string]func(*yaml.Node) error{
				"secret": func(v *yaml.Node) error {
					nn, err := p.nn(v)
					if err == nil {
						id.APIKey.Secret = nn.String()
					}
					return err
				},
			})
		},
		"kubernetes": func(v *yaml.Node) error {
			k := &authpolicy.KubernetesIdentity{}
			id.Kubernetes = k
			return p.fields(v, map[string]func(*yaml.Node) error{
				"username":  func(v *yaml.Node) (err error) { k.Username, err = p.str(v); return },
				"groups":    func(v *yaml.Node) (err error) { k.Groups, err = p.strList(v); return },
				"audiences": func(v *yaml.Node) (err error) { k.Audiences, err = p.strList(v); return },
			})
		},
		"x509": func(v *yaml.Node) error {
			id.X509 = &authpolicy.X509Identity{}
			return p.fields(v, map[string]func(*yaml.Node) error{
				"subject": func(v *yaml.Node) error {
					s := &id.X509.Subject
					return p.fields(v, map[string]func(*yaml.Node) error{
						"commonName":         func(v *yaml.Node) (err error) { s.CommonName, err = p.str(v); return },
						"serialNumber":       func(v *yaml.Node) (err error) { s.SerialNumber, err = p.str(v); return },
						"organization":       func(v *yaml.Node) (err error) { s.Organization, err = p.strList(v); return },
						"organizationalUnit": func(v *yaml.Node) (err error) { s.OrganizationalUnit, err = p.strList(v); return },
						"country":            func(v *yaml.Node) (err error) { s.Country, err = p.strList(v); return },
						"locality":           func(v *yaml.Node) (err error) { s.Locality, err = p.strList(v); return },
						"province":           func(v *yaml.Node) (err error) { s.Province, err = p.strList(v); return },
					})
				},
			})
		},
	})
	if err != nil {
		return nil, err
	}
	if err := id.Validate(); err != nil {
		return nil, p.errf(n, "%v", err)
	}
	return id, nil
}

// strList is a list of strings, or one string.
func (p *parser) strList(n *yaml.Node) ([]string, error) {
	if n.Kind == yaml.ScalarNode {
		s, err := p.str(n)
		return []string{s}, err
	}
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "expected a list of strings")
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		s, err := p.str(c)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// jsonValue decodes a node as Authorino's JSON would hold it.
func (p *parser) jsonValue(n *yaml.Node) (any, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, p.errf(n, "%v", err)
	}
	out, err := authpolicy.JSONValue(v)
	if err != nil {
		return nil, p.errf(n, "not representable as JSON: %v", err)
	}
	return out, nil
}

// metadata parses `metadata: {NAME: value}`.
func (p *parser) metadata(n *yaml.Node) (map[string]any, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, "metadata must be a mapping of rule name: value")
	}
	out := map[string]any{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		v, err := p.jsonValue(n.Content[i+1])
		if err != nil {
			return nil, err
		}
		out[n.Content[i].Value] = v
	}
	return out, nil
}

// decisions parses `decisions: {NAME: allow|deny}`.
func (p *parser) decisions(n *yaml.Node) (map[string]Answer, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, "decisions must be a mapping of rule name: allow|deny")
	}
	out := map[string]Answer{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		a, err := p.answer(n.Content[i+1])
		if err != nil {
			return nil, err
		}
		out[n.Content[i].Value] = a
	}
	return out, nil
}

// credentialFields are the handlers of identity, metadata and decisions into c.
func (p *parser) credentialFields(c *Credentials) map[string]func(*yaml.Node) error {
	return map[string]func(*yaml.Node) error{
		"identity":  func(v *yaml.Node) (err error) { c.Identity, err = p.identity(v); return },
		"metadata":  func(v *yaml.Node) (err error) { c.Metadata, err = p.metadata(v); return },
		"decisions": func(v *yaml.Node) (err error) { c.Decisions, err = p.decisions(v); return },
	}
}

// ParseIdentityFile parses a file holding one request's identity, metadata and
// decisions (explain --identity-file), strictly, with file:line errors.
func ParseIdentityFile(name string, data []byte, defaultNS string) (*Credentials, error) {
	p := newParser(name, defaultNS)
	root, err := p.single(data)
	if err != nil {
		return nil, err
	}
	c := &Credentials{}
	if err := p.fields(root, p.credentialFields(c)); err != nil {
		return nil, err
	}
	if c.Identity == nil {
		return nil, p.errf(root, "missing identity")
	}
	return c, nil
}

// ParsePersonaFile parses a file of personas: `personas: [{name, identity, metadata,
// decisions}]`, strictly, with file:line errors.
func ParsePersonaFile(name string, data []byte, defaultNS string) ([]Persona, error) {
	p := newParser(name, defaultNS)
	root, err := p.single(data)
	if err != nil {
		return nil, err
	}
	var list *yaml.Node
	if err := p.fields(root, map[string]func(*yaml.Node) error{"personas": func(v *yaml.Node) error { list = v; return nil }}); err != nil {
		return nil, err
	}
	if list == nil || list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		return nil, p.errf(root, "personas must be a non-empty list")
	}
	var out []Persona
	seen := map[string]int{}
	for _, n := range list.Content {
		ps := Persona{Line: n.Line}
		h := p.credentialFields(&ps.Credentials)
		h["name"] = func(v *yaml.Node) (err error) { ps.Name, err = p.str(v); return }
		if err := p.fields(n, h); err != nil {
			return nil, err
		}
		if ps.Name == "" {
			return nil, p.errf(n, "a persona needs a name")
		}
		if prev, ok := seen[ps.Name]; ok {
			return nil, p.errf(n, "duplicate persona %q (first at line %d)", ps.Name, prev)
		}
		seen[ps.Name] = n.Line
		out = append(out, ps)
	}
	return out, nil
}

// single reads a file of one YAML document, aliases expanded.
func (p *parser) single(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &FileError{File: p.file, Msg: "empty file"}
		}
		return nil, &FileError{File: p.file, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, &FileError{File: p.file, Msg: "empty file"}
	}
	root, err := p.resolveDocument(doc.Content[0])
	if err != nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, p.errf(root, "expected a mapping")
	}
	return root, nil
}

// authRequest is the request as Kuadrant's AuthPolicy sees it.
func authRequest(r *Request) authpolicy.Request {
	req := authpolicy.Request{Method: r.HTTP.Method, Host: r.HTTP.Host, Path: r.HTTP.Path, Headers: r.HTTP.Headers}
	if r.Credentials == nil {
		return req
	}
	req.Identity, req.Metadata = r.Credentials.Identity, r.Credentials.Metadata
	if !r.TimeAssumed {
		req.Time = r.HTTP.Time
	}
	if len(r.Credentials.Decisions) > 0 {
		req.Decisions = map[string]string{}
		for k, v := range r.Credentials.Decisions {
			req.Decisions[k] = string(v)
		}
	}
	return req
}

// String is "persona NAME".
func (ps Persona) String() string { return fmt.Sprintf("persona %s (%s)", ps.Name, ps.Identity) }

// creds returns the request's Credentials, made on first use.
func (r *Request) creds() *Credentials {
	if r.Credentials == nil {
		r.Credentials = &Credentials{}
	}
	return r.Credentials
}
