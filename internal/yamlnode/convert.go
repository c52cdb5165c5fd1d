package yamlnode

import (
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// Convert returns the value of a document (its document node or its root) as
// unstructured objects hold it: map[string]any, []any, int64, float64, bool, string
// or nil. Besides what a Resolver refuses, it refuses duplicate keys, keys that are
// not scalars and scalars that do not parse as their tag says. intern, when not nil,
// is applied to every key and string. It also returns the number of nodes resolved.
func Convert(root *yaml.Node, lim Limits, intern func(string) string) (any, int, error) {
	r := NewResolver(lim)
	n, err := r.Resolve(root, 0)
	if err != nil || n == nil {
		return nil, r.Nodes, err
	}
	if intern == nil {
		intern = func(s string) string { return s }
	}
	v, err := value(n, intern)
	return v, r.Nodes, err
}

func fail(n *yaml.Node, format string, args ...any) error {
	return &Error{Line: n.Line, Msg: fmt.Sprintf(format, args...)}
}

// value converts a resolved tree (no aliases, no merge keys).
func value(n *yaml.Node, intern func(string) string) (any, error) {
	switch n.Kind {
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := value(e, intern)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nil, fail(k, "mapping key is not a scalar")
			}
			if _, dup := out[k.Value]; dup {
				return nil, fail(k, "duplicate key %q", k.Value)
			}
			cv, err := value(v, intern)
			if err != nil {
				return nil, err
			}
			out[intern(k.Value)] = cv
		}
		return out, nil
	case yaml.ScalarNode:
		return scalar(n, intern)
	}
	return nil, fail(n, "unexpected YAML node")
}

func scalar(n *yaml.Node, intern func(string) string) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fail(n, "%v", err)
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fail(n, "invalid integer %q", n.Value)
		}
		return f, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fail(n, "%v", err)
		}
		return f, nil
	}
	return intern(n.Value), nil // !!str, !!timestamp, !!binary and unknown tags: the text
}
