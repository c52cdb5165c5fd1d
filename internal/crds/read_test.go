package crds

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// testObject is an object read from a test file, as the API server would receive it
// (namespace defaulted), without agpol's loader (which admits objects with this package).
type testObject struct{ u *unstructured.Unstructured }

func (o testObject) Object() *unstructured.Unstructured { return o.u }

// readObjects reads the objects of files and directories (not recursively).
func readObjects(t *testing.T, paths ...string) []testObject {
	t.Helper()
	var out []testObject
	for _, p := range paths {
		files := []string{p}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			files, _ = filepath.Glob(filepath.Join(p, "*.yaml"))
		}
		for _, f := range files {
			r, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := decodeAll(r)
			r.Close()
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out = append(out, objs...)
		}
	}
	return out
}

// decodeAll reads every YAML document of r; numbers keep their JSON types (int64).
func decodeAll(r io.Reader) ([]testObject, error) {
	rd := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var out []testObject
	for {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if string(js) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, err
		}
		if v, err := Lookup(u.GroupVersionKind()); u.GetNamespace() == "" && (err != nil || v.Namespaced()) {
			u.SetNamespace("default")
		}
		out = append(out, testObject{u})
	}
}
