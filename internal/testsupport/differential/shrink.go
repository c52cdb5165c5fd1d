package differential

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agpol/agpol/internal/testsupport/difftest"
)

// Shrink reduces a scenario on which the harness disagrees to a minimal one that
// still disagrees: it drops objects, then policy rules, targetRefs, listeners,
// parentRefs and hostnames, one at a time, while a disagreement of the same request
// (or of admission, for request -1) remains. It returns the shrunk scenario with the
// one request kept (none for an admission disagreement).
func Shrink(up *Upstream, sc *Scenario, d Disagreement) (*Scenario, error) {
	requests := []Request{}
	if d.Request >= 0 {
		requests = []Request{d.Req}
	}
	scenario := func(objs []*unstructured.Unstructured) *Scenario {
		return &Scenario{Name: sc.Name, StoredToAgpol: sc.StoredToAgpol, Semantics: sc.Semantics, Objects: objs, Requests: requests}
	}
	fails := func(objs []*unstructured.Unstructured) bool {
		rep, err := Run(up, scenario(objs))
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
	fields := difftest.Fields{Lists: [][]string{{"spec", "rules"}, {"spec", "targetRefs"}, {"spec", "listeners"}, {"spec", "parentRefs"}, {"spec", "hostnames"}}}
	objs, err := difftest.Shrink(sc.Objects, fields, fails)
	if err != nil {
		return nil, err
	}
	return scenario(objs), nil
}

// WriteCase writes a shrunk scenario to dir as manifests.yaml (and request.json when
// it keeps a request), with a header comment.
func WriteCase(dir string, sc *Scenario, d Disagreement) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var objs []*unstructured.Unstructured
	for _, o := range sc.Objects {
		o = o.DeepCopy()
		unstructured.RemoveNestedField(o.Object, "status")
		objs = append(objs, o)
	}
	header := fmt.Sprintf("Shrunk by the differential harness from %s.\nIt disagreed: %s", sc.Name, d.What)
	if err := difftest.WriteManifests(filepath.Join(dir, "manifests.yaml"), header, objs); err != nil {
		return err
	}
	if len(sc.Requests) == 1 {
		b, _ := json.MarshalIndent(sc.Requests[0], "", "  ")
		return os.WriteFile(filepath.Join(dir, "request.json"), append(b, '\n'), 0o644)
	}
	return nil
}
