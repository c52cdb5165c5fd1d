// converter: yaml/v3 node trees to the values unstructured objects hold, within Limits.

package cluster

import (
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// converter turns a yaml.Node tree into the map/slice/int64/float64/bool/string values
// unstructured objects hold, refusing duplicate keys, alias bombs and deep nesting.
type converter struct {
	lim Limits
	// strings, when set, interns short strings: typed objects keep the values (and the
	// keys of label maps) of every object, and most are the same few words (API
	// versions, kinds, namespaces, enum values) over and over.
	strings map[string]string
	// shared, when set, interns the strings strings has not seen over all the files
	// read, which are parsed in parallel, each with its own strings.
	shared  *internTable
	nodes   int
	errLine int
	// alias is the outermost alias being expanded: an error inside an expansion is
	// reported where the alias is used, not deep inside the anchored value.
	alias *yaml.Node
	// expanding holds the anchored values being expanded, to refuse an alias inside its own anchor.
	expanding map[*yaml.Node]bool
}

func (c *converter) fail(n *yaml.Node, format string, args ...any) error {
	c.errLine = n.Line
	if c.alias != nil {
		c.errLine = c.alias.Line
	}
	return fmt.Errorf(format, args...)
}

func (c *converter) convert(n *yaml.Node, depth int) (any, error) {
	c.nodes++
	if c.nodes > c.lim.MaxNodes {
		return nil, c.fail(n, "document expands to more than %d nodes (YAML alias bomb?)", c.lim.MaxNodes)
	}
	if depth > c.lim.MaxDepth {
		return nil, c.fail(n, "nesting deeper than %d levels", c.lim.MaxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.convert(n.Content[0], depth)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, c.fail(n, "unknown alias %q", n.Value)
		}
		if c.expanding[n.Alias] {
			return nil, c.fail(n, "alias *%s refers to a value that contains it", n.Value)
		}
		if c.expanding == nil {
			c.expanding = map[*yaml.Node]bool{}
		}
		if c.alias == nil {
			c.alias = n
			defer func() { c.alias = nil }()
		}
		c.expanding[n.Alias] = true
		defer delete(c.expanding, n.Alias)
		return c.convert(n.Alias, depth+1)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := c.convert(e, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		explicit := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" {
				if err := c.merge(out, v, depth); err != nil {
					return nil, err
				}
				continue
			}
			if k.Kind != yaml.ScalarNode {
				return nil, c.fail(k, "mapping key is not a scalar")
			}
			if explicit[k.Value] {
				return nil, c.fail(k, "duplicate key %q", k.Value)
			}
			explicit[k.Value] = true
			cv, err := c.convert(v, depth+1)
			if err != nil {
				return nil, err
			}
			out[c.str(k.Value)] = cv // an explicit key wins over a merged one, before or after it
		}
		return out, nil
	case yaml.ScalarNode:
		return c.scalar(n)
	}
	return nil, c.fail(n, "unexpected YAML node")
}

// merge applies a YAML merge key ("<<: *anchor" or a list of anchors); explicit keys win.
func (c *converter) merge(out map[string]any, v *yaml.Node, depth int) error {
	srcs := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		srcs = v.Content
	}
	for _, s := range srcs {
		mv, err := c.convert(s, depth+1)
		if err != nil {
			return err
		}
		m, ok := mv.(map[string]any)
		if !ok {
			return c.fail(s, "merge key value is not a mapping")
		}
		for k, x := range m {
			if _, exists := out[k]; !exists { // explicit keys and earlier merges win
				out[k] = x
			}
		}
	}
	return nil
}

func (c *converter) scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, c.fail(n, "%v", err)
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, c.fail(n, "invalid integer %q", n.Value)
		}
		return f, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, c.fail(n, "%v", err)
		}
		return f, nil
	case "!!str", "!!timestamp", "!!binary":
		return c.str(n.Value), nil
	}
	return c.str(n.Value), nil
}
