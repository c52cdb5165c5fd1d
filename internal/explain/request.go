package explain

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
	"golang.org/x/net/http/httpguts"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/agpol/agpol/internal/effective"
)

// Caller kinds.
const (
	CallerServiceAccount = "serviceAccount"
	CallerSPIFFE         = "spiffe"
	CallerAnonymous      = "anonymous"
	// CallerCertificate holds a client certificate a CA signed that carries no SPIFFE
	// ID: it passes the TLS handshake of a listener that CA validates, yet has no
	// principal a rule can name (docs/routing.md, "The TLS handshake").
	CallerCertificate = "certificate"
)

// Caller is who makes a request: a ServiceAccount, a SPIFFE ID, a certificate without
// a SPIFFE ID, or anonymous.
type Caller struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	SPIFFE    string `json:"spiffe,omitempty"`
	// Subject is the certificate's subject (CallerCertificate), as written: "CN=agent,O=acme".
	Subject string `json:"subject,omitempty"`
}

// CallerForms is the help text of every form ParseCaller takes.
const CallerForms = "sa:NAMESPACE/NAME, spiffe://..., cert:SUBJECT (a CA-signed certificate without a SPIFFE ID, e.g. cert:CN=agent,O=acme), or anonymous"

// ParseCaller parses "sa:NS/NAME", "spiffe://...", "cert:SUBJECT", or "anonymous".
func ParseCaller(s string) (Caller, error) {
	switch {
	case s == "" || s == "anonymous":
		return Caller{Kind: CallerAnonymous}, nil
	case strings.HasPrefix(s, "cert:"):
		subject := strings.TrimPrefix(s, "cert:")
		if err := ValidSubject(subject); err != nil {
			return Caller{}, err
		}
		return Caller{Kind: CallerCertificate, Subject: subject}, nil
	case strings.HasPrefix(s, "spiffe://"):
		if err := ValidSPIFFEID(s); err != nil {
			return Caller{}, err
		}
		return Caller{Kind: CallerSPIFFE, SPIFFE: s}, nil
	case strings.HasPrefix(s, "sa:"):
		ns, name, ok := strings.Cut(strings.TrimPrefix(s, "sa:"), "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			return Caller{}, fmt.Errorf("invalid service account %q: use sa:NAMESPACE/NAME", s)
		}
		if err := ValidServiceAccount(ns, name); err != nil {
			return Caller{}, fmt.Errorf("invalid service account %q: %v", s, err)
		}
		return Caller{Kind: CallerServiceAccount, Namespace: ns, Name: name}, nil
	}
	return Caller{}, fmt.Errorf("invalid caller %q: use %s", s, CallerForms)
}

// ValidSubject checks a certificate subject as cert:SUBJECT gives it: attribute=value
// pairs separated by commas (RFC 4514's form), at least one, without control characters.
func ValidSubject(subject string) error {
	if subject == "" {
		return fmt.Errorf("invalid certificate subject %q: give ATTRIBUTE=VALUE pairs, e.g. CN=agent,O=acme", subject)
	}
	for _, part := range strings.Split(subject, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok || strings.TrimSpace(k) == "" || v == "" {
			return fmt.Errorf("invalid certificate subject %q: %q is not ATTRIBUTE=VALUE (e.g. CN=agent,O=acme)", subject, part)
		}
	}
	for _, r := range subject {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("invalid certificate subject %q: control character", subject)
		}
	}
	return nil
}

// ValidSPIFFEID checks s as the SPIFFE library parses an ID: a lower-case trust
// domain, path segments without "." or "..", no query, fragment, spaces or
// trailing slash.
func ValidSPIFFEID(s string) error {
	if _, err := spiffeid.FromString(s); err != nil {
		return fmt.Errorf("invalid SPIFFE ID %q: %v", s, err)
	}
	return nil
}

// ValidServiceAccount checks a ServiceAccount's namespace and name as the API server
// does: the namespace a DNS-1123 label, the name a DNS-1123 subdomain.
func ValidServiceAccount(namespace, name string) error {
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return fmt.Errorf("namespace %q: %s", namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("name %q: %s", name, strings.Join(errs, "; "))
	}
	return nil
}

// ValidHeaderName checks an HTTP header name: a token (RFC 9110), as the data plane
// requires.
func ValidHeaderName(name string) error {
	if !httpguts.ValidHeaderFieldName(name) {
		return fmt.Errorf("invalid header name %q: not an HTTP token", name)
	}
	return nil
}

// HTTPMethod is s as the method of a request (upper case), and whether it is one of the
// methods a request of agpol may carry: RFC 9110's eight and PATCH. Request files and
// explain's --method take the same.
func HTTPMethod(s string) (string, bool) {
	switch m := strings.ToUpper(s); m {
	case "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH":
		return m, true
	}
	return "", false
}

// Principal is the peer principal the data plane sees as a SPIFFE ID ("" without a
// client certificate, and for a certificate without a SPIFFE ID: no rule source can
// name it, translator accesspolicy.go:593-610).
func (id Caller) Principal(trustDomain string) string {
	switch id.Kind {
	case CallerServiceAccount:
		return effective.SPIFFEID(trustDomain, id.Namespace, id.Name)
	case CallerSPIFFE:
		return id.SPIFFE
	}
	return ""
}

// String is the short form: sa:NS/NAME, the SPIFFE ID, cert:SUBJECT, or anonymous.
func (id Caller) String() string {
	switch id.Kind {
	case CallerServiceAccount:
		return "sa:" + id.Namespace + "/" + id.Name
	case CallerSPIFFE:
		return id.SPIFFE
	case CallerCertificate:
		return "cert:" + id.Subject
	}
	return "anonymous"
}

// NamespacedName is NS/NAME.
type NamespacedName struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// String is "ns/name".
func (n NamespacedName) String() string { return n.Namespace + "/" + n.Name }

// ParseNamespacedName parses "NS/NAME" or "NAME" (in defaultNS).
func ParseNamespacedName(s, defaultNS string) (NamespacedName, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok {
		ns, name = defaultNS, s
	}
	if ns == "" || name == "" || strings.Contains(name, "/") {
		return NamespacedName{}, fmt.Errorf("invalid name %q: use NAMESPACE/NAME", s)
	}
	return NamespacedName{Namespace: ns, Name: name}, nil
}

// HTTP is the HTTP side of a request.
type HTTP struct {
	Method string `json:"method"`
	// Path includes the query string, if any.
	Path string `json:"path"`
	// Host is the :authority as sent (may include a port).
	Host string `json:"host,omitempty"`
	Port int    `json:"port,omitempty"`
	// Headers have lower-case names; repeated headers are comma-joined.
	Headers map[string]string `json:"headers,omitempty"`
	Time    time.Time         `json:"time,omitzero"`
}

// MCP is the JSON-RPC side of a request (nil for a plain HTTP request).
type MCP struct {
	Method string `json:"method"`
	Tool   string `json:"tool,omitempty"`
	URI    string `json:"uri,omitempty"`
}

// Answer is an external authorizer's answer: "allow", "deny", or "" when unknown.
type Answer string

// Authorizer answers.
const (
	AnswerUnknown Answer = ""
	AnswerAllow   Answer = "allow"
	AnswerDeny    Answer = "deny"
)

// ExtAuth holds the authorizer answers per level.
type ExtAuth struct {
	Gateway Answer `json:"gateway,omitempty"`
	Backend Answer `json:"backend,omitempty"`
}

func (e ExtAuth) get(l effective.LevelName) Answer {
	if l == effective.LevelBackend {
		return e.Backend
	}
	return e.Gateway
}

func (e *ExtAuth) set(l effective.LevelName, a Answer) {
	if l == effective.LevelBackend {
		e.Backend = a
	} else {
		e.Gateway = a
	}
}

// Request is one simulated request.
type Request struct {
	Name     string          `json:"name,omitempty"`
	From     Caller          `json:"from"`
	Gateway  *NamespacedName `json:"gateway,omitempty"`
	Listener string          `json:"listener,omitempty"`
	Route    *NamespacedName `json:"route,omitempty"`
	Backend  *NamespacedName `json:"backend,omitempty"`
	Service  *NamespacedName `json:"service,omitempty"`
	HTTP     HTTP            `json:"http"`
	MCP      *MCP            `json:"mcp,omitempty"`
	// normal is set by the request file's parser, which builds a request in the form
	// Normalize gives (method in capitals, path and method defaulted, header names in
	// lower case): Normalize then has nothing to check. Nothing changes a parsed
	// request's HTTP afterwards. (Beside the fields deciding reads: no cache line more.)
	normal  bool
	ExtAuth ExtAuth `json:"extauth,omitempty"`
	// Credentials is what the request carries for Kuadrant's AuthPolicy (identity,
	// metadata, decisions); nil when it gives none.
	Credentials *Credentials `json:"credentials,omitempty"`
	// TimeAssumed is set when HTTP.Time is the current time, not given: a token's exp
	// is then not decided.
	TimeAssumed bool `json:"-"`

	Expect          string `json:"expect,omitempty"`
	ExpectDecidedBy string `json:"expectDecidedBy,omitempty"`
	ExpectLevel     string `json:"expectLevel,omitempty"`
	// Line is the request's line in its request file (0 when built from flags).
	Line int `json:"-"`
	// Strict lists what fails the request's expectation whatever the decision: names
	// the input does not know, under simulate --strict.
	Strict []UnknownName `json:"-"`
}

// Describe is the request in one line: "tools/call refund sa:agents/billing".
func (r *Request) Describe() string {
	var parts []string
	if r.MCP != nil {
		parts = append(parts, r.MCP.Method)
		if r.MCP.Tool != "" {
			parts = append(parts, r.MCP.Tool)
		}
		if r.MCP.URI != "" {
			parts = append(parts, r.MCP.URI)
		}
	} else {
		parts = append(parts, r.HTTP.Method+" "+r.HTTP.Path)
	}
	parts = append(parts, r.From.String())
	return strings.Join(parts, " ")
}

// HeaderList returns the headers as sorted "k: v" strings.
func (h HTTP) HeaderList() []string {
	out := make([]string, 0, len(h.Headers))
	for k, v := range h.Headers {
		out = append(out, k+": "+v)
	}
	sort.Strings(out)
	return out
}

// Normalize fills defaults: method POST, path /mcp, lower-case header names. A request
// of a request file is in that form as parsed, and left as it is.
func (r *Request) Normalize() {
	if r.normal {
		return
	}
	r.HTTP.defaults()
	r.HTTP.Method = strings.ToUpper(r.HTTP.Method)
	if len(r.HTTP.Headers) > 0 && !lowerNames(r.HTTP.Headers) {
		// Names that differ only in case are joined in the order of their spelling, so
		// the joined value is the same every time (map order is random).
		names := make([]string, 0, len(r.HTTP.Headers))
		for k := range r.HTTP.Headers {
			names = append(names, k)
		}
		sort.Strings(names)
		h := make(map[string]string, len(r.HTTP.Headers))
		for _, name := range names {
			k, v := strings.ToLower(name), r.HTTP.Headers[name]
			if old, ok := h[k]; ok {
				v = old + "," + v
			}
			h[k] = v
		}
		r.HTTP.Headers = h
	}
}

// defaults fills the method (POST) and the path (/mcp) a request leaves out.
func (h *HTTP) defaults() {
	if h.Method == "" {
		h.Method = "POST"
	}
	if h.Path == "" {
		h.Path = "/mcp"
	}
}

// lowerNames reports whether every header name is already lower-case, so that
// normalizing again (Explain and Query normalize each time) copies nothing.
func lowerNames(h map[string]string) bool {
	for k := range h {
		if strings.ToLower(k) != k { // no copy when k is lower-case ASCII already
			return false
		}
	}
	return true
}
