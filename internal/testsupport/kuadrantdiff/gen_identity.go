package kuadrantdiff

import (
	"encoding/base64"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Identities: the Secrets, authentication and authorization rules and request
// identities of every kind the oracle stands in for (hack/kuadrant-oracle/identity.go).

// Issuers of the jwt rules; the oracle serves their OIDC discovery and JWKS on loopback.
var genIssuers = []string{"https://idp.example.com/realms/a", "https://idp.example.com/realms/b"}

// OracleCAPlaceholder is a CA Secret's tls.crt as generated: the oracle replaces it with
// its test CA's certificate, which signs the client certificates it presents.
const OracleCAPlaceholder = "agpol-kuadrantdiff-test-ca"

// genKeys are the API key Secrets a scenario may hold: name, labels, api_key.
var genKeys = []struct {
	name   string
	labels map[string]any
	key    string
}{
	{"key-alice", map[string]any{"app": "toys", "tier": "gold"}, "alice-key"},
	{"key-bob", map[string]any{"app": "toys", "tier": "silver"}, "bob-key"},
	{"key-eve", map[string]any{"app": "other"}, "eve-key"},
}

// secrets adds API key Secrets (in Kuadrant's namespace or an app namespace) and a CA
// Secret for x509 rules.
func (g *Generator) secrets(kuadrantNS string, add func(obj)) {
	for _, k := range genKeys {
		if !g.p(75) {
			continue
		}
		ns := kuadrantNS
		if g.p(40) {
			ns = pick(g, genNamespaces)
		}
		md := obj{"name": k.name, "namespace": ns, "labels": k.labels}
		if g.p(30) {
			md["annotations"] = obj{"owner": k.name[len("key-"):]}
		}
		add(obj{"apiVersion": "v1", "kind": "Secret", "metadata": md, "type": "Opaque",
			"data": obj{"api_key": base64.StdEncoding.EncodeToString([]byte(k.key))}})
	}
	if g.p(70) {
		ns := kuadrantNS
		if g.p(40) {
			ns = pick(g, genNamespaces)
		}
		add(obj{"apiVersion": "v1", "kind": "Secret", "metadata": obj{"name": "trusted-ca", "namespace": ns, "labels": obj{"app": "ca"}},
			"type": "Opaque", "data": obj{"tls.crt": base64.StdEncoding.EncodeToString([]byte(OracleCAPlaceholder))}})
	}
}

// identityAuthentication is an authentication rule of a kind that reads an identity.
func (g *Generator) identityAuthentication() obj {
	var a obj
	switch g.n(4) {
	case 0:
		sel := obj{"app": "toys"}
		if g.p(20) {
			sel = obj{"app": "other"}
		}
		a = obj{"apiKey": obj{"selector": obj{"matchLabels": sel}, "allNamespaces": g.p(50)}}
		switch g.n(3) {
		case 0:
			a["credentials"] = obj{"authorizationHeader": obj{"prefix": "APIKEY"}}
		case 1:
			a["credentials"] = obj{"customHeader": obj{"name": "x-api-key"}}
		}
	case 1:
		a = obj{"jwt": obj{"issuerUrl": pick(g, genIssuers)}}
	case 2:
		k := obj{}
		if g.p(60) {
			k["audiences"] = []any{pick(g, []string{"toys", "a.example.com"})}
		}
		a = obj{"kubernetesTokenReview": k}
	default:
		a = obj{"x509": obj{"selector": obj{"matchLabels": obj{"app": "ca"}}, "allNamespaces": g.p(50)}}
	}
	if g.p(20) {
		field := "defaults"
		if g.p(50) {
			field = "overrides"
		}
		if g.p(50) {
			a[field] = obj{"tier": obj{"value": "bronze"}}
		} else {
			a[field] = obj{"who": obj{"selector": "request.method"}}
		}
	}
	return a
}

// identityChecks are checks on auth.identity by the kind of identity they read ("" for
// any kind: identity defaults/overrides, anonymous).
var identityChecks = map[string][]struct{ selector, op, value string }{
	"apiKey":                {{"auth.identity.metadata.labels.tier", "eq", "gold"}, {"auth.identity.metadata.annotations.owner", "eq", "alice"}},
	"jwt":                   {{"auth.identity.sub", "eq", "alice"}, {"auth.identity.groups", "incl", "admin"}},
	"kubernetesTokenReview": {{"auth.identity.user.username", "eq", "system:serviceaccount:ns1:alice"}, {"auth.identity.user.groups", "incl", "admin"}},
	"x509":                  {{"auth.identity.CommonName", "eq", "alice"}, {"auth.identity.Organization", "incl", "acme"}},
	"":                      {{"auth.identity.tier", "eq", "bronze"}, {"auth.identity.anonymous", "eq", "true"}},
}

// identityAuthorization checks auth.identity, most often as the policy's own
// authentication rules (kinds) produce it: patternMatching or a CEL predicate.
func (g *Generator) identityAuthorization() obj {
	kind := pick(g, []string{"apiKey", "jwt", "kubernetesTokenReview", "x509", ""})
	if len(g.kinds) > 0 && g.p(75) {
		kind = pick(g, g.kinds)
	}
	c := pick(g, identityChecks[kind])
	op := c.op
	if op == "eq" && g.p(20) {
		op = "neq"
	}
	if g.p(40) {
		cel := fmt.Sprintf("%s == '%s'", c.selector, c.value)
		switch {
		case op == "neq":
			cel = fmt.Sprintf("%s != '%s'", c.selector, c.value)
		case op == "incl":
			cel = fmt.Sprintf("'%s' in %s", c.value, c.selector)
		}
		return obj{"patternMatching": obj{"patterns": []any{obj{"predicate": cel}}}}
	}
	return obj{"patternMatching": obj{"patterns": []any{obj{"selector": c.selector, "operator": op, "value": c.value}}}}
}

// extras adds to a policy's proper what decides a request carrying an identity beyond
// its rules' kinds: named patterns (spec.patterns, used by patternRef), the responses
// to a denial (response.unauthenticated / unauthorized), and authorization by inline
// OPA Rego and by all/any of patterns.
func (g *Generator) extras(proper, rules obj) {
	if g.p(20) {
		proper["patterns"] = obj{"gold": obj{"allOf": []any{obj{"selector": "auth.identity.metadata.labels.tier", "operator": "eq", "value": "gold"}}}}
		if authz, ok := rules["authorization"].(obj); ok && g.p(70) {
			authz[pick(g, genAuthzNames)] = obj{"patternMatching": obj{"patterns": []any{obj{"patternRef": "gold"}}}}
		}
	}
	if g.p(20) {
		resp := obj{}
		if g.p(70) {
			resp["unauthenticated"] = obj{"code": int64(pick(g, []int{302, 404})), "message": obj{"value": "login first"}}
		}
		if g.p(70) {
			resp["unauthorized"] = obj{"code": int64(pick(g, []int{404, 418}))}
		}
		if len(resp) > 0 {
			rules["response"] = resp
		}
	}
	if authz, ok := rules["authorization"].(obj); ok && g.p(20) {
		switch g.n(3) {
		case 0:
			authz[pick(g, genAuthzNames)] = obj{"opa": obj{"rego": pick(g, []string{
				`allow { input.auth.identity.sub == "alice" }`,
				`allow { input.context.request.http.method == "GET" }`,
				`allow { input.auth.identity.metadata.labels.tier == "gold" }`,
			})}}
		case 1:
			authz[pick(g, genAuthzNames)] = obj{"patternMatching": obj{"patterns": []any{obj{"any": []any{
				obj{"selector": "auth.identity.sub", "operator": "eq", "value": "bob"},
				obj{"predicate": "request.method == 'GET'"},
			}}}}}
		default:
			// A rule that runs only for some identities.
			a := g.identityAuthorization()
			a["when"] = []any{obj{"predicate": pick(g, []string{"auth.identity.sub == 'alice'", "has(auth.identity.metadata)"})}}
			authz[pick(g, genAuthzNames)] = a
		}
	}
}

// authKinds are the identity kinds the scenario's authentication rules read, as
// generator cases of identity.
func authKinds(sc *Scenario) []int {
	var kinds []int
	seen := map[int]bool{}
	var walk func(v any)
	walk = func(v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for k, e := range m {
			if i, ok := map[string]int{"apiKey": 2, "jwt": 3, "kubernetesTokenReview": 4, "x509": 5}[k]; ok && !seen[i] {
				seen[i] = true
				kinds = append(kinds, i)
			}
			walk(e)
		}
	}
	for _, o := range sc.Objects {
		if o.GetKind() == "AuthPolicy" {
			walk(o.Object["spec"])
		}
	}
	sort.Ints(kinds)
	return kinds
}

// identity is what a request carries: nil (no credentials) or one identity of each
// kind, most often of a kind the scenario's rules read (kinds); an API key is most
// often one of the scenario's key Secrets (keys, "ns/name").
func (g *Generator) identity(kuadrantNS string, kinds []int, keys []string) map[string]any {
	kind := g.n(6)
	if len(kinds) > 0 && g.p(60) {
		kind = pick(g, kinds)
	}
	switch kind {
	case 0, 1:
		return nil
	case 2:
		secret := pick(g, []string{kuadrantNS, "ns1", "ns2"}) + "/" + pick(g, genKeys).name
		if len(keys) > 0 && g.p(85) {
			secret = pick(g, keys) // a key Secret of the scenario, wherever it is
		}
		return map[string]any{"apiKey": map[string]any{"secret": secret}}
	case 3:
		claims := map[string]any{"sub": pick(g, []string{"alice", "bob"}), "iss": pick(g, append(genIssuers, "https://other.example.com"))}
		if g.p(50) {
			claims["groups"] = []any{pick(g, []string{"admin", "dev"})}
		}
		switch g.n(5) {
		case 0:
			// no exp: Authorino rejects the token
		case 1:
			claims["exp"] = int64(946684800) // 2000-01-01: expired
		default:
			claims["exp"] = int64(4102444800) // 2100-01-01
		}
		return map[string]any{"jwt": map[string]any{"claims": claims}}
	case 4:
		k := map[string]any{"username": pick(g, []string{"system:serviceaccount:ns1:alice", "bob"})}
		if g.p(50) {
			k["groups"] = []any{pick(g, []string{"admin", "system:authenticated", "admin", "system:masters"})}
		}
		if g.p(50) {
			k["audiences"] = []any{pick(g, []string{"toys", "a.example.com", "other"})}
		}
		return map[string]any{"kubernetes": k}
	default:
		s := map[string]any{"commonName": pick(g, []string{"alice", "bob"})}
		if g.p(50) {
			s["organization"] = []any{pick(g, []string{"acme", "other"})}
		}
		return map[string]any{"x509": map[string]any{"subject": s}}
	}
}

// keySecrets are the scenario's Secrets with an api_key ("ns/name").
func keySecrets(sc *Scenario) []string {
	var out []string
	for _, o := range sc.Objects {
		if o.GetKind() == "Secret" {
			if _, ok, _ := unstructured.NestedString(o.Object, "data", "api_key"); ok {
				out = append(out, o.GetNamespace()+"/"+o.GetName())
			}
		}
	}
	return out
}

// sarUsers are, by identity kind, the selectors of a SubjectAccessReview's user and
// groups on auth.identity ("" for any kind: a fixed user).
var sarUsers = map[string]struct{ user, groups string }{
	"apiKey":                {"auth.identity.metadata.annotations.owner", ""},
	"jwt":                   {"auth.identity.sub", "auth.identity.groups"},
	"kubernetesTokenReview": {"auth.identity.user.username", "auth.identity.user.groups"},
	"x509":                  {"auth.identity.CommonName", "auth.identity.Organization"},
	"":                      {"", ""},
}

// subjectAccessReview is a kubernetesSubjectAccessReview rule: the user (and groups)
// of the identity the policy's rules produce, asking for a resource or for the
// request's path and method (no resourceAttributes).
func (g *Generator) subjectAccessReview() obj {
	kind := pick(g, []string{"apiKey", "jwt", "kubernetesTokenReview", "x509", ""})
	if len(g.kinds) > 0 && g.p(75) {
		kind = pick(g, g.kinds)
	}
	u := sarUsers[kind]
	sar := obj{"user": obj{"value": pick(g, []string{"alice", "bob"})}}
	if u.user != "" {
		sar["user"] = obj{"selector": u.user}
	}
	if u.groups != "" && g.p(50) {
		sar["authorizationGroups"] = obj{"selector": u.groups}
	}
	if g.p(60) {
		ra := obj{"namespace": obj{"value": pick(g, genNamespaces)}, "resource": obj{"value": pick(g, []string{"toys", "gadgets"})},
			"verb": obj{"value": pick(g, []string{"get", "create"})}}
		if g.p(30) {
			ra["group"] = obj{"value": "toys.example.com"}
		}
		if g.p(30) {
			ra["name"] = obj{"value": pick(g, []string{"blue", "red"})}
		}
		if g.p(20) {
			ra["verb"] = obj{"selector": "request.method"} // upper case: matches only a verb "*"
		}
		sar["resourceAttributes"] = ra
	}
	return obj{"kubernetesSubjectAccessReview": sar}
}

// rbacObjects adds, to most scenarios, Roles, ClusterRoles and bindings that
// SubjectAccessReviews are answered from: resource and non-resource rules, resource
// names, wildcards, and subjects of every kind (users, groups, ServiceAccounts with and
// without a namespace).
func (g *Generator) rbacObjects(add func(obj)) {
	if !g.p(75) {
		return
	}
	rule := func() obj {
		if g.p(30) {
			return obj{"nonResourceURLs": []any{pick(g, []string{"/a*", "/a", "/b/*", "*"})}, "verbs": []any{pick(g, []string{"get", "post", "*"})}}
		}
		r := obj{"apiGroups": []any{pick(g, []string{"", "toys.example.com", "*"})}, "resources": []any{pick(g, []string{"toys", "gadgets", "*"})},
			"verbs": []any{pick(g, []string{"get", "create", "*"})}}
		if g.p(25) {
			r["resourceNames"] = []any{pick(g, []string{"blue", "*"})}
		}
		return r
	}
	rules := func() []any {
		out := []any{rule()}
		if g.p(40) {
			out = append(out, rule())
		}
		return out
	}
	roleNS := pick(g, genNamespaces)
	add(obj{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": obj{"name": "toys", "namespace": roleNS}, "rules": rules()})
	add(obj{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": obj{"name": "toys"}, "rules": rules()})
	subject := func(cluster bool) obj {
		switch g.n(4) {
		case 0:
			return obj{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": pick(g, []string{"alice", "bob", "system:serviceaccount:ns1:alice"})}
		case 1:
			return obj{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": pick(g, []string{"admin", "acme", "system:authenticated"})}
		default:
			s := obj{"kind": "ServiceAccount", "name": "alice", "namespace": pick(g, genNamespaces)}
			if !cluster && g.p(50) {
				delete(s, "namespace") // the binding's namespace
			}
			return s
		}
	}
	for i := 0; i < 1+g.n(3); i++ {
		subjects := []any{subject(false)}
		if g.p(30) {
			subjects = append(subjects, subject(false))
		}
		if g.p(40) {
			add(obj{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": obj{"name": fmt.Sprintf("b%d", i+1)},
				"roleRef": obj{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "toys"}, "subjects": []any{subject(true)}})
			continue
		}
		ref := obj{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "toys"}
		ns := pick(g, genNamespaces)
		if g.p(50) {
			ref["kind"], ns = "Role", roleNS
		}
		add(obj{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": obj{"name": fmt.Sprintf("b%d", i+1), "namespace": ns},
			"roleRef": ref, "subjects": subjects})
	}
}
