package kuadrantdiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Shrink reduces a scenario on which the harness disagrees to a smaller one that still
// disagrees in the same way: it drops objects, then list items (policy rules,
// listeners, parentRefs, route rules, hostnames), one at a time. A request
// disagreement keeps its one request.
func Shrink(o *Oracle, sc *Scenario, d Disagreement) (*Scenario, error) {
	cur := sc.clone()
	cur.Requests = nil
	if d.Request >= 0 {
		cur.Requests = []Request{d.Req}
	}
	fails := func(c *Scenario) bool {
		rep, err := Run(o, c)
		if err != nil {
			return false
		}
		for _, x := range rep.Disagreements {
			if x.Kind == d.Kind && headOf(x.What) == headOf(d.What) {
				return true
			}
		}
		return false
	}
	if !fails(cur) {
		return nil, fmt.Errorf("the disagreement does not reproduce on its own")
	}
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(cur.Objects); i++ {
			try := cur.clone()
			try.Objects = append(try.Objects[:i], try.Objects[i+1:]...)
			if fails(try) {
				cur, changed = try, true
				i--
			}
		}
		for oi := range cur.Objects {
			for _, path := range [][]string{{"spec", "listeners"}, {"spec", "parentRefs"}, {"spec", "rules"}, {"spec", "hostnames"}, {"spec", "when"}} {
				for i := 0; ; i++ {
					items, ok, _ := unstructured.NestedSlice(cur.Objects[oi].Object, path...)
					if !ok || i >= len(items) {
						break
					}
					try := cur.clone()
					rest := append(append([]any{}, items[:i]...), items[i+1:]...)
					_ = unstructured.SetNestedSlice(try.Objects[oi].Object, rest, path...)
					if fails(try) {
						cur, changed = try, true
						i--
					}
				}
			}
			// Named rules of an AuthPolicy (maps, not lists).
			for _, base := range [][]string{{"spec"}, {"spec", "defaults"}, {"spec", "overrides"}} {
				for _, group := range []string{"authentication", "authorization"} {
					path := append(append([]string{}, base...), "rules", group)
					m, ok, _ := unstructured.NestedMap(cur.Objects[oi].Object, path...)
					if !ok {
						continue
					}
					for k := range m {
						try := cur.clone()
						unstructured.RemoveNestedField(try.Objects[oi].Object, append(path, k)...)
						if fails(try) {
							cur, changed = try, true
						}
					}
				}
			}
		}
	}
	return cur, nil
}

// headOf is a disagreement's text before its first ':' (the path, policy or verdict
// it is about), so that shrinking keeps the same disagreement, not any of its kind.
func headOf(what string) string {
	h, _, _ := strings.Cut(what, ":")
	return h
}

func (s *Scenario) clone() *Scenario {
	c := *s
	c.Objects = nil
	for _, o := range s.Objects {
		c.Objects = append(c.Objects, o.DeepCopy())
	}
	c.Requests = append([]Request(nil), s.Requests...)
	return &c
}

// WriteCase writes a shrunk scenario to dir as manifests.yaml (and requests.json when
// it keeps requests), with a header comment.
func WriteCase(dir string, sc *Scenario, d Disagreement) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Shrunk by the Kuadrant differential harness from %s.\n# It disagreed [%s]: %s\n", sc.Name, d.Kind, d.What)
	for _, o := range sc.Objects {
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return err
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifests.yaml"), buf.Bytes(), 0o644); err != nil {
		return err
	}
	if len(sc.Requests) > 0 {
		b, _ := json.MarshalIndent(sc.Requests, "", "  ")
		return os.WriteFile(filepath.Join(dir, "requests.json"), append(b, '\n'), 0o644)
	}
	return nil
}

// ReadCase reads a case written by WriteCase.
func ReadCase(dir string) (*Scenario, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifests.yaml"))
	if err != nil {
		return nil, err
	}
	sc := &Scenario{Name: filepath.Base(dir)}
	for i, doc := range bytes.Split(b, []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 || bytes.HasPrefix(bytes.TrimSpace(doc), []byte("#")) && !bytes.Contains(doc, []byte("\n")) {
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return nil, fmt.Errorf("%s document %d: %w", dir, i, err)
		}
		if len(m) == 0 {
			continue
		}
		sc.Objects = append(sc.Objects, &unstructured.Unstructured{Object: m})
	}
	if rb, err := os.ReadFile(filepath.Join(dir, "requests.json")); err == nil {
		if err := json.Unmarshal(rb, &sc.Requests); err != nil {
			return nil, fmt.Errorf("%s requests.json: %w", dir, err)
		}
	}
	return sc, nil
}
