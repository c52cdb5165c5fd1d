package describe_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/describe"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/testsupport/difftest"
)

// TestNeedsSameAsFullAdmission describes every Gateway, HTTPRoute, XBackend and
// XAccessPolicy of every testdata scenario, and every list of them, as describe does
// (only the objects describe.Needs names admitted, the views built on them alone) and
// on the whole input with every object admitted: the text and the JSON must be the
// same, byte for byte, under every semantics preset (the reference one with -short).
func TestNeedsSameAsFullAdmission(t *testing.T) {
	presets := effective.PresetNames()
	if testing.Short() {
		presets = presets[:1]
	}
	c := compareScenarios(t, presets, "")
	if c.diff != "" {
		t.Fatal(c.diff)
	}
	if c.views == 0 || c.admittedLess == 0 {
		t.Fatalf("%d views compared, %d loads with objects left unadmitted: the scenarios were not read", c.views, c.admittedLess)
	}
	t.Logf("%d views compared, %d loads left objects unadmitted", c.views, c.admittedLess)
}

// TestNeedsForgottenKindFails leaves each kind out of what Needs names, in turn: the
// comparison of TestNeedsSameAsFullAdmission must then find a view that differs (the
// scenarios exercise every kind the views read).
func TestNeedsForgottenKindFails(t *testing.T) {
	for _, kind := range []string{"Gateway", "HTTPRoute", "ListenerSet", "XBackend", "XAccessPolicy", "AuthPolicy", "GatewayClass", "ReferenceGrant"} {
		t.Run(kind, func(t *testing.T) {
			if c := compareScenarios(t, effective.PresetNames()[:1], kind); c.diff == "" {
				t.Errorf("Needs without %s objects: the %d views compared are the same", kind, c.views)
			}
		})
	}
}

// compared is what compareScenarios found: the first view that differs ("" when none),
// how many views it compared, and how many loads left objects unadmitted.
type compared struct {
	diff                string
	views, admittedLess int
}

// compareScenarios compares the views of every scenario under presets, built as describe
// builds them and on the whole input, up to the first that differs. forget, when set, is
// a kind left out of what Needs names.
func compareScenarios(t *testing.T, presets []string, forget string) compared {
	t.Helper()
	var c compared
	for _, files := range scenarios(t) {
		dir := strings.Join(files, ",")
		full, err := load(files, nil)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, kind := range []string{describe.KindGateway, describe.KindHTTPRoute, describe.KindXBackend, describe.KindXAccessPolicy} {
			// The list of every object of the kind, and a name not found (its hint).
			asks := [][]string{nil, {"default", "no-such-object"}}
			for _, n := range describe.Names(full.Snapshot, kind, "") {
				asks = append(asks, []string{n[0], n[1]})
			}
			for _, name := range asks {
				var need func(snapshot.Ref) bool
				sel, err := load(files, func(s *snapshot.Snapshot) func(snapshot.Ref) bool {
					need = describe.Needs(s, kind, name, "")
					if need != nil && forget != "" {
						needs := need
						need = func(r snapshot.Ref) bool { return r.Kind != forget && needs(r) }
					}
					return need
				})
				if err != nil {
					t.Fatalf("%s: %v", dir, err)
				}
				if sel.Snapshot.Unadmitted > 0 {
					c.admittedLess++
				}
				for _, p := range presets {
					sem, err := effective.Preset(p)
					if err != nil {
						t.Fatal(err)
					}
					want, got := describeAll(full, nil, sem, kind, name), describeAll(sel, need, sem, kind, name)
					c.views++
					if got != want {
						c.diff = fmt.Sprintf("%s: describe %s %v (%s) differs when only what it reads is admitted:\n%s", dir, kind, name, p, firstDiff(want, got))
						return c
					}
				}
			}
		}
	}
	return c
}

// scenarios are the inputs of the repository's testdata (of the root, of cmd/agpol and
// of every package): in each directory, the manifests that load, together when they load
// together, else each alone (a directory also holds expectations, requests and bad input).
func scenarios(t *testing.T) [][]string {
	t.Helper()
	roots, err := filepath.Glob("../../internal/*/testdata")
	if err != nil {
		t.Fatal(err)
	}
	roots = append([]string{"../../testdata", "../../cmd/agpol/testdata"}, roots...)
	var out [][]string
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			entries, err := os.ReadDir(p)
			if err != nil {
				return err
			}
			var files []string
			for _, e := range entries {
				f := filepath.Join(p, e.Name())
				if ext := filepath.Ext(e.Name()); e.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
					continue
				}
				if _, err := load([]string{f}, nil); err == nil {
					files = append(files, f)
				}
			}
			if _, err := load(files, nil); err == nil && len(files) > 1 {
				out = append(out, files)
				return nil
			}
			for _, f := range files {
				out = append(out, []string{f})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// load reads files, admitting what needs names (every object when nil).
func load(files []string, needs func(*snapshot.Snapshot) func(snapshot.Ref) bool) (*model.Model, error) {
	res, err := cluster.Load(context.Background(), cluster.LoadOptions{Files: files, DefaultNamespace: "default", Needs: needs})
	if err != nil {
		return nil, err
	}
	return model.New(res.Snapshot), nil
}

// describeAll is describe's text and JSON of kind name (nil: every object of the kind),
// built on the objects need names (describe.ListReading), or its error.
func describeAll(m *model.Model, need func(snapshot.Ref) bool, sem effective.Semantics, kind string, name []string) string {
	views, err := describe.ListReading(m, need, sem, "", kind, name, "")
	if err != nil {
		return "error: " + err.Error()
	}
	var b bytes.Buffer
	for _, f := range []render.Format{render.FormatText, render.FormatJSON} {
		if err := render.Describe(render.DescribeOutput{Out: &b, ErrOut: io.Discard, Format: f, Color: render.ColorNever, Named: name != nil}, views); err != nil {
			return "render error: " + err.Error()
		}
	}
	return b.String()
}

// firstDiff shows the first line where got differs from want.
func firstDiff(want, got string) string {
	n, wl, gl := difftest.FirstLineDiff(want, got)
	if n == 0 {
		return "(same lines)"
	}
	return "line " + strconv.Itoa(n) + ":\n  full admission: " + wl + "\n  only what it reads: " + gl
}
