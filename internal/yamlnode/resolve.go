// Package yamlnode reads yaml/v3 node trees within bounds: it expands aliases and
// applies merge keys ("<<: *h") while counting what aliases add and the nesting, so an
// alias bomb or deep nesting is refused (a plain document is bounded by its size only), and converts a tree to the plain values unstructured
// objects hold. The manifest loader and the request-file parser both read YAML
// through it, with the same bounds.
package yamlnode

import (
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// Limits bound one document after its aliases are expanded. What aliases add is
// bounded twice: by MaxAliasNodes, and by the share of the document's nodes that come
// from aliases, which must stay within what yaml/v3's own decoder allows
// (allowedAliasRatio, go.yaml.in/yaml/v3 decode.go:468; the same rule is in yaml.v2,
// which sigs.k8s.io/yaml and so kubectl decode with): 99% up to 400,000 nodes, falling
// to 10% at 4,000,000. A document without aliases is bounded by its size alone.
type Limits struct {
	MaxAliasNodes int // nodes visited inside aliases, each use counting its whole value again
	MaxDepth      int // nesting depth
}

// DefaultLimits are generous for real manifests and request files, and refuse bombs.
var DefaultLimits = Limits{MaxAliasNodes: 2000000, MaxDepth: 200}

// The range over which the allowed alias ratio falls, as in yaml/v3.
const (
	aliasRatioLow  = 400000
	aliasRatioHigh = 4000000
)

// allowedAliasRatio is the share of a document's nodes that may come from aliases
// once it has decoded nodes nodes (yaml/v3's rule).
func allowedAliasRatio(nodes int) float64 {
	switch {
	case nodes <= aliasRatioLow:
		return 0.99
	case nodes >= aliasRatioHigh:
		return 0.10
	}
	return 0.99 - 0.89*float64(nodes-aliasRatioLow)/float64(aliasRatioHigh-aliasRatioLow)
}

// Error is a problem at a line of the document. Inside an alias's value it is
// reported at the line that uses the (outermost) alias.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Resolver expands the aliases and applies the merge keys of a tree, so readers see
// plain mappings, sequences and scalars. A subtree without aliases or merge keys is
// returned as is; one with them is copied, never changed in place (an anchored value
// may be used in several places). An explicit key wins over a merged one, and an
// earlier merged mapping over a later one, as YAML 1.1 merge keys work.
type Resolver struct {
	Limits Limits
	// Nodes counts the nodes visited, over every call: the parts of one document
	// resolved one after the other share the document's bound.
	Nodes int
	// AliasNodes counts the nodes of Nodes visited inside an alias.
	AliasNodes int
	expanding  map[*yaml.Node]bool
	// alias is the outermost alias being expanded.
	alias *yaml.Node
}

// NewResolver returns a resolver for one document.
func NewResolver(lim Limits) *Resolver {
	return &Resolver{Limits: lim}
}

// Resolve resolves n, found at the given depth of its document (0 for the root).
// A document node resolves to its content (nil when empty).
func (r *Resolver) Resolve(n *yaml.Node, depth int) (*yaml.Node, error) {
	if n.Kind == yaml.DocumentNode {
		r.Nodes++
		if len(n.Content) == 0 {
			return nil, nil
		}
		return r.Resolve(n.Content[0], depth)
	}
	return r.resolve(n, depth)
}

func (r *Resolver) fail(n *yaml.Node, format string, args ...any) error {
	if r.alias != nil {
		n = r.alias
	}
	return &Error{Line: n.Line, Msg: fmt.Sprintf(format, args...)}
}

func (r *Resolver) resolve(n *yaml.Node, depth int) (*yaml.Node, error) {
	r.Nodes++
	if r.alias != nil {
		r.AliasNodes++
		if r.AliasNodes > r.Limits.MaxAliasNodes {
			return nil, r.fail(n, "aliases expand to more than %d nodes (YAML alias bomb?)", r.Limits.MaxAliasNodes)
		}
		// yaml/v3's check, made at each node as it makes it.
		if r.AliasNodes > 100 && r.Nodes > 1000 && float64(r.AliasNodes)/float64(r.Nodes) > allowedAliasRatio(r.Nodes) {
			return nil, r.fail(n, "aliases expand to %d of the document's first %d nodes, more than the %.0f%% YAML decoders allow (YAML alias bomb?)",
				r.AliasNodes, r.Nodes, 100*allowedAliasRatio(r.Nodes))
		}
	}
	if depth > r.Limits.MaxDepth {
		return nil, r.fail(n, "nesting deeper than %d levels", r.Limits.MaxDepth)
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, r.fail(n, "unknown alias %q", n.Value)
		}
		if r.expanding[n.Alias] {
			return nil, r.fail(n, "alias *%s refers to a value that contains it", n.Value)
		}
		if r.expanding == nil {
			r.expanding = map[*yaml.Node]bool{}
		}
		if r.alias == nil {
			r.alias = n
			defer func() { r.alias = nil }()
		}
		r.expanding[n.Alias] = true
		defer delete(r.expanding, n.Alias)
		return r.resolve(n.Alias, depth+1)
	case yaml.SequenceNode:
		return r.children(n, depth)
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if IsMergeKey(n.Content[i]) {
				return r.merged(n, depth)
			}
		}
		return r.children(n, depth)
	}
	return n, nil
}

// children resolves the children of a sequence or mapping, copying n only if one
// changed. The keys of a mapping are at its depth, its values one deeper.
func (r *Resolver) children(n *yaml.Node, depth int) (*yaml.Node, error) {
	var content []*yaml.Node
	for i, c := range n.Content {
		d := depth + 1
		if n.Kind == yaml.MappingNode && i%2 == 0 {
			d = depth
		}
		rc, err := r.resolve(c, d)
		if err != nil {
			return nil, err
		}
		if rc != c && content == nil {
			content = append(make([]*yaml.Node, 0, len(n.Content)), n.Content[:i]...)
		}
		if content != nil {
			content = append(content, rc)
		}
	}
	if content == nil {
		return n, nil
	}
	cp := *n
	cp.Content = content
	return &cp, nil
}

// merged is mapping n, which has merge keys, with them applied.
func (r *Resolver) merged(n *yaml.Node, depth int) (*yaml.Node, error) {
	cp := *n
	cp.Content = nil
	explicit := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; !IsMergeKey(k) && k.Kind == yaml.ScalarNode {
			explicit[k.Value] = true
		}
	}
	merged := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		rk, err := r.resolve(k, depth)
		if err != nil {
			return nil, err
		}
		if !IsMergeKey(k) {
			rv, err := r.resolve(v, depth+1)
			if err != nil {
				return nil, err
			}
			cp.Content = append(cp.Content, rk, rv)
			continue
		}
		srcs := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			srcs = v.Content
		}
		for _, s := range srcs {
			m, err := r.resolve(s, depth+1)
			if err != nil {
				return nil, err
			}
			if m.Kind != yaml.MappingNode {
				return nil, r.fail(s, "merge key value is not a mapping")
			}
			// The merged mapping's keys are checked here: those an explicit key or an
			// earlier merge overrides are dropped from the result.
			seen := make(map[string]bool, len(m.Content)/2)
			for j := 0; j+1 < len(m.Content); j += 2 {
				mk := m.Content[j]
				if mk.Kind != yaml.ScalarNode {
					return nil, r.fail(mk, "mapping key is not a scalar")
				}
				if seen[mk.Value] {
					return nil, r.fail(mk, "duplicate key %q", mk.Value)
				}
				seen[mk.Value] = true
				if explicit[mk.Value] || merged[mk.Value] {
					continue
				}
				merged[mk.Value] = true
				cp.Content = append(cp.Content, mk, m.Content[j+1])
			}
		}
	}
	return &cp, nil
}

// IsMergeKey reports whether k is a merge key ("<<").
func IsMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Tag == "!!merge"
}
