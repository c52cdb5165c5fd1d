package kuadrantdiff

import (
	"sort"
	"strings"
)

// Metadata: http metadata rules, authorization on auth.metadata.*, and what requests
// say each rule would fetch; the oracle serves it at the rule's URL
// (hack/kuadrant-oracle/metadata.go).

// metadataURL is the URL of metadata rule NAME: the oracle's metadata server answers
// for its host with the request's metadata NAME.
const metadataURL = "http://metadata.example.com/"

var genMetaNames = []string{"m1", "m2"}

// metadataRules are one or two http metadata rules, some with a `when`.
func (g *Generator) metadataRules() obj {
	out := obj{}
	for i := 0; i < 1+g.n(2); i++ {
		name := pick(g, genMetaNames)
		// method and contentType as the AuthPolicy CRD defaults them on admission (the
		// oracle reads objects as written; agpol applies the CRD's defaults).
		m := obj{"http": obj{"url": metadataURL + name, "method": "GET", "contentType": "application/x-www-form-urlencoded"}}
		if g.p(20) {
			m["when"] = []any{obj{"predicate": g.predicate()}}
		}
		out[name] = m
		g.meta = append(g.meta, name)
	}
	return out
}

// metadataAuthorization checks auth.metadata.NAME of one of the policy's metadata
// rules: a pattern, a CEL predicate, or a list membership.
func (g *Generator) metadataAuthorization() obj {
	name := pick(g, g.meta)
	if g.p(20) {
		name = pick(g, genMetaNames) // perhaps a rule the policy does not have
	}
	var pat obj
	switch g.n(3) {
	case 0:
		pat = obj{"selector": "auth.metadata." + name + ".tier", "operator": pick(g, []string{"eq", "neq"}), "value": "gold"}
	case 1:
		pat = obj{"predicate": "auth.metadata." + name + ".tier == 'gold'"}
	default:
		pat = obj{"selector": "auth.metadata." + name + ".roles", "operator": "incl", "value": "admin"}
	}
	a := obj{"patternMatching": obj{"patterns": []any{pat}}}
	if g.p(15) {
		a["when"] = []any{obj{"predicate": g.predicate()}}
	}
	return a
}

// metadataNames are the names of the scenario's metadata rules (from their URLs).
func metadataNames(sc *Scenario) []string {
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == "url" && strings.HasPrefix(s, metadataURL) {
					seen[strings.TrimPrefix(s, metadataURL)] = true
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, o := range sc.Objects {
		if o.GetKind() == "AuthPolicy" {
			walk(o.Object["spec"])
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// requestMetadata is what a request says the scenario's metadata rules would fetch:
// most often every rule's object (a tier, sometimes missing, and roles).
func (g *Generator) requestMetadata(names []string) map[string]any {
	if len(names) == 0 || !g.p(80) {
		return nil
	}
	out := map[string]any{}
	for _, n := range names {
		if !g.p(85) {
			continue
		}
		m := map[string]any{"roles": []any{pick(g, []string{"admin", "dev"})}}
		if g.p(80) {
			m["tier"] = pick(g, []string{"gold", "silver"})
		}
		out[n] = m
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
