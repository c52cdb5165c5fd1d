package explain

import (
	"go.yaml.in/yaml/v3"
)

// Bounds of a request file's YAML after aliases are expanded: the same as the
// manifest loader's (cluster.DefaultLimits), so an alias bomb or deep nesting is
// refused in a request file as it is in a manifest.
const (
	maxRequestNodes = 2000000
	maxRequestDepth = 200
)

// resolver expands aliases and applies merge keys ("<<: *h") in a YAML tree, so the
// strict field parser sees plain mappings, sequences and scalars. A subtree without
// aliases or merge keys is returned as is; one with them is copied, never changed in
// place (an anchored value may be used in several places).
type resolver struct {
	p         *parser
	nodes     int
	expanding map[*yaml.Node]bool
	// alias is the outermost alias being expanded: an error inside it is reported
	// at the line that uses the alias.
	alias *yaml.Node
}

func (r *resolver) fail(n *yaml.Node, format string, args ...any) error {
	if r.alias != nil {
		n = r.alias
	}
	return r.p.errf(n, format, args...)
}

func (r *resolver) resolve(n *yaml.Node, depth int) (*yaml.Node, error) {
	r.nodes++
	if r.nodes > maxRequestNodes {
		return nil, r.fail(n, "document expands to more than %d nodes (YAML alias bomb?)", maxRequestNodes)
	}
	if depth > maxRequestDepth {
		return nil, r.fail(n, "nesting deeper than %d levels", maxRequestDepth)
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, r.fail(n, "unknown alias %q", n.Value)
		}
		if r.expanding[n.Alias] {
			return nil, r.fail(n, "alias *%s refers to a value that contains it", n.Value)
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
		hasMerge := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if isMergeKey(n.Content[i]) {
				hasMerge = true
				break
			}
		}
		if !hasMerge {
			return r.children(n, depth)
		}
		return r.merged(n, depth)
	}
	return n, nil
}

// children resolves the children of a sequence or mapping, copying n only if one changed.
func (r *resolver) children(n *yaml.Node, depth int) (*yaml.Node, error) {
	var content []*yaml.Node
	for i, c := range n.Content {
		rc, err := r.resolve(c, depth+1)
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

// merged is mapping n with its merge keys applied, as YAML 1.1 merge keys work: an
// explicit key wins over a merged one, and an earlier merged mapping over a later one.
func (r *resolver) merged(n *yaml.Node, depth int) (*yaml.Node, error) {
	cp := *n
	cp.Content = nil
	explicit := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; !isMergeKey(k) && k.Kind == yaml.ScalarNode {
			explicit[k.Value] = true
		}
	}
	merged := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !isMergeKey(k) {
			rv, err := r.resolve(v, depth+1)
			if err != nil {
				return nil, err
			}
			cp.Content = append(cp.Content, k, rv)
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
			for j := 0; j+1 < len(m.Content); j += 2 {
				mk := m.Content[j]
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

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Tag == "!!merge"
}

// resolveDocument expands the aliases and merge keys of one document's root.
func (p *parser) resolveDocument(root *yaml.Node) (*yaml.Node, error) {
	r := &resolver{p: p, expanding: map[*yaml.Node]bool{}}
	n, err := r.resolve(root, 0)
	if err != nil {
		return nil, err
	}
	return n, nil
}
