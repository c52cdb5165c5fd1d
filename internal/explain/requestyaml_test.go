package explain

import (
	"strings"
	"testing"
)

// TestRequestFileYAMLFeatures: several documents, anchors, aliases and merge keys in
// a request file, read as a manifest loader reads them.
func TestRequestFileYAMLFeatures(t *testing.T) {
	for _, c := range []struct {
		name, file string
		want       []string // name method path tool, one per request
		td         string
	}{
		{"two documents", `requests:
- {name: a, from: {serviceAccount: x/y}, gateway: gw, http: {method: GET}}
---
trustDomain: td.example
requests:
- {name: b, from: {serviceAccount: x/y}, gateway: gw, mcp: {tool: t}}
---
`, []string{"a GET /mcp ", "b POST /mcp t"}, "td.example"},
		{"anchors and aliases", `requests:
- name: a
  from: {serviceAccount: x/y}
  gateway: gw
  http: &h {method: PUT, path: /p}
- name: b
  from: {serviceAccount: x/y}
  gateway: gw
  http: *h
`, []string{"a PUT /p ", "b PUT /p "}, ""},
		{"merge keys, explicit wins", mergeFile, []string{"a PUT /p ", "b PUT /q ", "c POST /mcp t"}, ""},
		{"an aliased request", "requests:\n- &r {name: a, from: {serviceAccount: x/y}, gateway: gw}\n- {<<: *r, name: b}\n",
			[]string{"a POST /mcp ", "b POST /mcp "}, ""},
		{"a !!binary value is its decoded text, as in manifests", "requests:\n- {name: !!binary YQ==, from: {serviceAccount: x/y}, gateway: gw, mcp: {tool: !!binary dA==}}\n",
			[]string{"a POST /mcp t"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rf, err := ParseRequestFile("r.yaml", []byte(c.file), "default")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rf.Requests {
				tool := ""
				if r.MCP != nil {
					tool = r.MCP.Tool
				}
				got = append(got, r.Name+" "+r.HTTP.Method+" "+r.HTTP.Path+" "+tool)
				if r.From.String() != "sa:x/y" || r.Gateway.String() != "default/gw" {
					t.Errorf("%s: from %s gateway %s", r.Name, r.From, r.Gateway)
				}
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("requests %q, want %q", got, c.want)
			}
			if rf.TrustDomain != c.td {
				t.Errorf("trust domain %q, want %q", rf.TrustDomain, c.td)
			}
		})
	}
}

// mergeFile keeps its anchors in the first request, as a request file must (it has
// no free-form fields).
const mergeFile = `requests:
- &base
  name: a
  from: {serviceAccount: x/y}
  gateway: gw
  http: &h {method: PUT, path: /p}
- <<: *base
  name: b
  http: {<<: *h, path: /q}
- <<: [*base]
  name: c
  http: {method: POST}
  mcp: {tool: t}
`

// TestRequestFileYAMLErrors: what the YAML features refuse, with file:line.
func TestRequestFileYAMLErrors(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g"} {
		bomb += n + ": &" + n + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n"
		prev = n
	}
	deep := "requests: " + strings.Repeat("[", 300) + strings.Repeat("]", 300) + "\n"
	for _, c := range []struct{ name, file, want string }{
		{"alias bomb", bomb + "requests: []\n", "r.yaml:4: aliases expand to 4159 of the document's first 4201 nodes, more than the 99% YAML decoders allow (YAML alias bomb?)"},
		{"deep nesting", deep, "nesting deeper than 200 levels"},
		{"merge of a scalar", "requests:\n- {<<: x, name: a}\n", "r.yaml:2: merge key value is not a mapping"},
		{"second document bad", "requests: []\n---\nrequests:\n- {name: a, bogus: 1}\n", `r.yaml:4: unknown field "bogus"`},
		{"duplicate across documents", "requests: [{name: a}]\n---\nrequests: [{name: a}]\n", `r.yaml:3: duplicate request name "a" (first at line 1)`},
		{"trust domains differ", "trustDomain: a\nrequests: []\n---\ntrustDomain: b\nrequests: []\n", `r.yaml:4: trustDomain "b" differs from "a" (line 1)`},
		{"only empty documents", "---\n---\n", "r.yaml: empty request file"},
		{"second document not a mapping", "requests: []\n---\n- a\n", "r.yaml:3: a request file is a mapping"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseRequestFile("r.yaml", []byte(c.file), "default")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// TestRequestFileIdentitiesAndHeaders: callers and header names are checked as the
// real system checks them (the SPIFFE library, the API server's name validation, HTTP
// tokens), each error at its file:line.
func TestRequestFileIdentitiesAndHeaders(t *testing.T) {
	for _, c := range []struct{ from, want string }{
		{"{spiffe: 'spiffe://td/a/../b'}", `r.yaml:2: invalid SPIFFE ID "spiffe://td/a/../b": path cannot contain dot segments`},
		{"{spiffe: 'spiffe://td/a?x=1'}", `r.yaml:2: invalid SPIFFE ID "spiffe://td/a?x=1": path segment characters are limited`},
		{"{spiffe: 'spiffe://td/a#f'}", `r.yaml:2: invalid SPIFFE ID "spiffe://td/a#f"`},
		{"{spiffe: 'spiffe://td/a b'}", `r.yaml:2: invalid SPIFFE ID "spiffe://td/a b"`},
		{"{spiffe: 'spiffe://TD.example/a'}", `r.yaml:2: invalid SPIFFE ID "spiffe://TD.example/a": trust domain characters are limited`},
		{"{spiffe: 'spiffe://td/a/'}", `r.yaml:2: invalid SPIFFE ID "spiffe://td/a/"`},
		{"{serviceAccount: Agents/billing}", `r.yaml:2: invalid serviceAccount "Agents/billing": namespace "Agents": a lowercase RFC 1123 label`},
		{"{serviceAccount: agents/bil_ling}", `r.yaml:2: invalid serviceAccount "agents/bil_ling": name "bil_ling": a lowercase RFC 1123 subdomain`},
	} {
		file := "requests:\n- {name: a, from: " + c.from + ", gateway: gw}\n"
		if _, err := ParseRequestFile("r.yaml", []byte(file), "default"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.from, err, c.want)
		}
	}
	for _, ok := range []string{"{spiffe: 'spiffe://td.example/ns/a/sa/b'}", "{serviceAccount: agents/my.agent}"} {
		file := "requests:\n- {name: a, from: " + ok + ", gateway: gw}\n"
		if _, err := ParseRequestFile("r.yaml", []byte(file), "default"); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	file := "requests:\n- name: a\n  gateway: gw\n  http:\n    headers: {'x tenant': a}\n"
	if _, err := ParseRequestFile("r.yaml", []byte(file), "default"); err == nil || !strings.Contains(err.Error(), `r.yaml:5: invalid header name "x tenant": not an HTTP token`) {
		t.Errorf("header: err = %v", err)
	}
}
