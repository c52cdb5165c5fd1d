package differential

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Shrink reduces a scenario on which the harness disagrees to a minimal one that
// still disagrees: it drops objects, then policy rules, targetRefs and route rules
// and backendRefs, one at a time, while a disagreement of the same request (or of
// admission, for request -1) remains. It returns the shrunk scenario with the one
// request kept (none for an admission disagreement).
func Shrink(up *Upstream, sc *Scenario, d Disagreement) (*Scenario, error) {
	cur := &Scenario{Name: sc.Name, StoredToAgpol: sc.StoredToAgpol, Semantics: sc.Semantics}
	for _, o := range sc.Objects {
		cur.Objects = append(cur.Objects, o.DeepCopy())
	}
	if d.Request >= 0 {
		cur.Requests = []Request{d.Req}
	}
	fails := func(c *Scenario) bool {
		c.Requests = cur.Requests
		if c.Requests == nil {
			c.Requests = []Request{}
		}
		rep, err := Run(up, c)
		if err != nil {
			return false
		}
		for _, x := range rep.Disagreements {
			if (d.Request < 0) == (x.Request < 0) {
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
		// Whole objects.
		for i := 0; i < len(cur.Objects); i++ {
			try := cur.clone()
			try.Objects = append(try.Objects[:i], try.Objects[i+1:]...)
			if fails(try) {
				cur, changed = try, true
				i--
			}
		}
		// List items inside objects.
		for oi := range cur.Objects {
			for _, path := range [][]string{{"spec", "rules"}, {"spec", "targetRefs"}, {"spec", "listeners"}, {"spec", "parentRefs"}, {"spec", "hostnames"}} {
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
		}
	}
	return cur, nil
}

func (s *Scenario) clone() *Scenario {
	c := *s
	c.Objects = nil
	for _, o := range s.Objects {
		c.Objects = append(c.Objects, o.DeepCopy())
	}
	return &c
}

// WriteCase writes a shrunk scenario to dir as manifests.yaml (and request.json when
// it keeps a request), with a header comment.
func WriteCase(dir string, sc *Scenario, d Disagreement) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Shrunk by the differential harness from %s.\n# It disagreed: %s\n", sc.Name, d.What)
	for _, o := range sc.Objects {
		o = o.DeepCopy()
		unstructured.RemoveNestedField(o.Object, "status")
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
	if len(sc.Requests) == 1 {
		b, _ := json.MarshalIndent(sc.Requests[0], "", "  ")
		return os.WriteFile(filepath.Join(dir, "request.json"), append(b, '\n'), 0o644)
	}
	return nil
}
