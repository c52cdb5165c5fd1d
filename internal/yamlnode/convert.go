package yamlnode

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// Convert returns the value of a document (its document node or its root) as
// unstructured objects hold it: map[string]any, []any, int64, float64, bool, string
// or nil. Besides what a Resolver refuses, it refuses duplicate keys, keys that are
// not scalars and scalars that do not parse as their tag says. intern, when not nil,
// is applied to every key and string. It also returns the number of nodes resolved.
//
// Scalars are read as kubectl reads them: sigs.k8s.io/yaml decodes with yaml.v2
// (YAML 1.1) and converts the result to JSON, so a !!binary value is its decoded
// text, the plain words y, yes, on, n, no, off (in their three cases) are booleans,
// and a boolean key is the text "true" or "false" (docs/limits.md, "Decoding").
func Convert(root *yaml.Node, lim Limits, intern func(string) string) (any, int, error) {
	v, r, err := ConvertAt(root, 0, lim, intern)
	return v, r.Nodes, err
}

// ConvertAt is Convert for a node found at the given depth of its document (0 for the
// root), such as an item of a list parsed apart from the rest of its document. It
// returns the resolver, whose counts say how many nodes were read and how many of
// them aliases added.
func ConvertAt(n *yaml.Node, depth int, lim Limits, intern func(string) string) (any, *Resolver, error) {
	r := NewResolver(lim)
	n, err := r.Resolve(n, depth)
	if err != nil || n == nil {
		return nil, r, err
	}
	if intern == nil {
		intern = func(s string) string { return s }
	}
	v, err := value(n, intern)
	return v, r, err
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
			key, err := keyText(k)
			if err != nil {
				return nil, err
			}
			if _, dup := out[key]; dup {
				return nil, fail(k, "duplicate key %q", key)
			}
			cv, err := value(v, intern)
			if err != nil {
				return nil, err
			}
			out[intern(key)] = cv
		}
		return out, nil
	case yaml.ScalarNode:
		return scalar(n, intern)
	}
	return nil, fail(n, "unexpected YAML node")
}

// yaml11Bools are the booleans of YAML 1.1 (yaml.v2's resolve.go) that YAML 1.2,
// which yaml/v3 reads, takes for strings.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false,
}

// nullWords are the plain scalars that are null.
var nullWords = map[string]bool{"": true, "~": true, "null": true, "Null": true, "NULL": true}

// keyText is the text of a mapping key as sigs.k8s.io/yaml makes it: a key read as a
// boolean becomes "true" or "false", a !!binary key its decoded text, any other its
// text (a number keeps its spelling, where sigs.k8s.io/yaml writes 0x10 as "16").
func keyText(k *yaml.Node) (string, error) {
	if b, ok := plainYAML11Bool(k); ok {
		return strconv.FormatBool(b), nil
	}
	if k.ShortTag() == "!!binary" {
		return binaryText(k)
	}
	return k.Value, nil
}

// plainYAML11Bool reports whether n is an untagged plain scalar yaml.v2 reads as a
// boolean and yaml/v3 does not, and which.
func plainYAML11Bool(n *yaml.Node) (bool, bool) {
	if n.Style != 0 || n.ShortTag() != "!!str" {
		return false, false
	}
	b, ok := yaml11Bools[n.Value]
	return b, ok
}

// Text is the text of scalar n where a string is expected: a !!binary value decoded,
// as Convert reads it, any other its text.
func Text(n *yaml.Node) (string, error) {
	if n.ShortTag() == "!!binary" {
		return binaryText(n)
	}
	return n.Value, nil
}

// binaryText is the text of a !!binary scalar, as yaml.v2 decodes it (base64, line
// breaks ignored). Bytes that are not UTF-8 are refused: JSON, which kubectl converts
// the value to, would replace them.
func binaryText(n *yaml.Node) (string, error) {
	data, err := base64.StdEncoding.DecodeString(n.Value)
	if err != nil {
		return "", fail(n, "!!binary value contains invalid base64 data")
	}
	if !utf8.Valid(data) {
		return "", fail(n, "!!binary value is not UTF-8 text (kubectl would replace its bytes with U+FFFD)")
	}
	return string(data), nil
}

func scalar(n *yaml.Node, intern func(string) string) (any, error) {
	if b, ok := plainYAML11Bool(n); ok {
		return b, nil
	}
	switch n.ShortTag() {
	case "!!binary":
		s, err := binaryText(n)
		return intern(s), err
	case "!!null":
		if !nullWords[n.Value] {
			return nil, fail(n, "cannot decode %q as a !!null", n.Value)
		}
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
	return intern(n.Value), nil // !!str, !!timestamp and unknown tags: the text, as yaml.v2 keeps it
}
