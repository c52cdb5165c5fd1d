package difftest

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kjson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// Unstructured makes an object of nested Go maps and slices into an unstructured
// object holding plain JSON values (numbers as int64 or float64), as one decoded from
// a file would. It panics when m cannot be written as JSON (a generator's bug).
func Unstructured(m map[string]any) *unstructured.Unstructured {
	b, err := kjson.Marshal(m)
	if err != nil {
		panic(err)
	}
	var out map[string]any
	if err := kjson.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: out}
}

// WriteManifests writes objs to path as YAML documents, after header as comment lines.
func WriteManifests(path, header string, objs []*unstructured.Unstructured) error {
	var buf bytes.Buffer
	for _, line := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		fmt.Fprintf(&buf, "# %s\n", line)
	}
	for _, o := range objs {
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return err
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// ReadManifests reads a file written by WriteManifests (YAML documents separated by
// "---" lines; comment-only and empty documents are passed over).
func ReadManifests(path string) ([]*unstructured.Unstructured, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for i, doc := range bytes.Split(b, []byte("\n---\n")) {
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return nil, fmt.Errorf("%s document %d: %w", path, i+1, err)
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs, nil
}
