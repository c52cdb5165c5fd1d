package kuadrantdiff

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agpol/agpol/internal/testsupport/difftest"
)

// Shrink reduces a scenario on which the harness disagrees to a smaller one that still
// disagrees in the same way: it drops objects, then list items (policy rules,
// listeners, parentRefs, route rules, hostnames) and an AuthPolicy's named rules, one
// at a time. A request disagreement keeps its one request.
func Shrink(o *Oracle, sc *Scenario, d Disagreement) (*Scenario, error) {
	cur := sc.clone()
	cur.Requests = nil
	if d.Request >= 0 {
		cur.Requests = []Request{d.Req}
	}
	fails := func(objs []*unstructured.Unstructured) bool {
		try := cur.clone()
		try.Objects = objs
		rep, err := Run(o, try)
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
	fields := difftest.Fields{Lists: [][]string{{"spec", "listeners"}, {"spec", "parentRefs"}, {"spec", "rules"}, {"spec", "hostnames"}, {"spec", "when"}}}
	for _, base := range [][]string{{"spec"}, {"spec", "defaults"}, {"spec", "overrides"}} {
		for _, group := range []string{"authentication", "authorization"} {
			fields.Maps = append(fields.Maps, append(append([]string{}, base...), "rules", group))
		}
	}
	objs, err := difftest.Shrink(cur.Objects, fields, fails)
	if err != nil {
		return nil, err
	}
	cur.Objects = objs
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
	header := fmt.Sprintf("Shrunk by the Kuadrant differential harness from %s.\nIt disagreed [%s]: %s", sc.Name, d.Kind, d.What)
	if err := difftest.WriteManifests(filepath.Join(dir, "manifests.yaml"), header, sc.Objects); err != nil {
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
	objs, err := difftest.ReadManifests(filepath.Join(dir, "manifests.yaml"))
	if err != nil {
		return nil, err
	}
	sc := &Scenario{Name: filepath.Base(dir), Objects: objs}
	if rb, err := os.ReadFile(filepath.Join(dir, "requests.json")); err == nil {
		if err := json.Unmarshal(rb, &sc.Requests); err != nil {
			return nil, fmt.Errorf("%s requests.json: %w", dir, err)
		}
	}
	return sc, nil
}
