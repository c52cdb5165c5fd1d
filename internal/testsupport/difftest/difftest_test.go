package difftest

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestEnvInt(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  int
	}{{"", 7}, {"12", 12}, {"0", 7}, {"-3", 7}, {"x", 7}} {
		t.Setenv("DIFFTEST_N", tc.value)
		if got := EnvInt("DIFFTEST_N", 7); got != tc.want {
			t.Errorf("EnvInt(%q) = %d, want %d", tc.value, got, tc.want)
		}
	}
}

type closer struct{ closed *atomic.Int64 }

func (c closer) Close() error { c.closed.Add(1); return nil }

// TestSeeds: results come back in seed order, every worker is closed, and the first
// error (by seed) is returned with its seed.
func TestSeeds(t *testing.T) {
	var started, closed atomic.Int64
	start := func() (closer, error) { started.Add(1); return closer{&closed}, nil }
	got, err := Seeds(10, 50, start, func(_ closer, seed int) (string, error) { return fmt.Sprint(seed), nil })
	if err != nil {
		t.Fatal(err)
	}
	for k, s := range got {
		if s != fmt.Sprint(10+k) {
			t.Fatalf("result %d is %q, want %d", k, s, 10+k)
		}
	}
	if started.Load() == 0 || closed.Load() != started.Load() {
		t.Errorf("started %d workers, closed %d", started.Load(), closed.Load())
	}
	boom := errors.New("boom")
	_, err = Seeds(0, 20, start, func(_ closer, seed int) (int, error) {
		if seed == 7 || seed == 15 {
			return 0, boom
		}
		return seed, nil
	})
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "seed 7:") {
		t.Errorf("error %v, want seed 7: boom", err)
	}
}

func obj(name string, rules ...any) *unstructured.Unstructured {
	o := map[string]any{"kind": "Thing", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"rules": rules, "named": map[string]any{"b": "x", "a": "y", "c": "z"}}}
	return Unstructured(o)
}

// TestShrink: the objects and list items fails does not need go, map keys too, and
// the input is left as it was.
func TestShrink(t *testing.T) {
	in := []*unstructured.Unstructured{obj("keep", "r1", "bad", "r3"), obj("drop", "bad"), obj("also", "r1")}
	before := deepCopy(in)
	fails := func(objs []*unstructured.Unstructured) bool {
		for _, o := range objs {
			rules, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "rules")
			named, _, _ := unstructured.NestedStringMap(o.Object, "spec", "named")
			if o.GetName() == "keep" && slices.Contains(rules, "bad") && named["b"] == "x" {
				return true
			}
		}
		return false
	}
	out, err := Shrink(in, Fields{Lists: [][]string{{"spec", "rules"}}, Maps: [][]string{{"spec", "named"}}}, fails)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].GetName() != "keep" {
		t.Fatalf("kept %d objects, want keep alone: %v", len(out), out)
	}
	want := map[string]any{"rules": []any{"bad"}, "named": map[string]any{"b": "x"}}
	if !reflect.DeepEqual(out[0].Object["spec"], want) {
		t.Errorf("spec %v, want %v", out[0].Object["spec"], want)
	}
	if !reflect.DeepEqual(in, before) {
		t.Errorf("Shrink changed its input")
	}
	if _, err := Shrink(in, Fields{}, func([]*unstructured.Unstructured) bool { return false }); !errors.Is(err, ErrNotReproduced) {
		t.Errorf("a scenario that does not fail: %v, want ErrNotReproduced", err)
	}
}

func TestManifestsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "manifests.yaml")
	objs := []*unstructured.Unstructured{obj("a", "r1"), obj("b")}
	if err := WriteManifests(path, "Shrunk from seed-1.\nIt disagreed: x\nand more", objs); err != nil {
		t.Fatal(err)
	}
	got, err := ReadManifests(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, objs) {
		t.Errorf("read back %v, want %v", got, objs)
	}
}

func TestFirstLineDiff(t *testing.T) {
	for _, c := range []struct {
		a, b string
		n    int
		x, y string
	}{
		{"a\nb", "a\nb", 0, "", ""},
		{"a\nb", "a\nc", 2, "b", "c"},
		{"a", "a\nmore", 2, "", "more"},
		{"x\ny", "", 1, "x", ""},
	} {
		n, x, y := FirstLineDiff(c.a, c.b)
		if n != c.n || x != c.x || y != c.y {
			t.Errorf("FirstLineDiff(%q, %q) = %d, %q, %q; want %d, %q, %q", c.a, c.b, n, x, y, c.n, c.x, c.y)
		}
	}
}
