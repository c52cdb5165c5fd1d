package topogen

import (
	"sort"
	"strings"
	"testing"
)

// A scaled size has every kind of object n times as many (the one GatewayClass stays
// one; AuthPolicies, some of which come per group of objects, within 15%), and no two
// objects share a kind, namespace and name.
func TestScaled(t *testing.T) {
	base, err := SizeByName("small")
	if err != nil {
		t.Fatal(err)
	}
	one, err := Generate(Options{Size: base, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{2, 3} {
		sz := base.Scaled(n)
		if err := sz.Validate(); err != nil {
			t.Fatalf("x%d: %v", n, err)
		}
		got, err := Generate(Options{Size: sz, Seed: 1})
		if err != nil {
			t.Fatalf("x%d: %v", n, err)
		}
		for kind, c := range one.Stats.Objects {
			want := c * n
			if kind == "GatewayClass" {
				want = c
			}
			if g := got.Stats.Objects[kind]; kind == "AuthPolicy" {
				if g < want || float64(g) > 1.15*float64(want) {
					t.Errorf("x%d: %d %s, want %d to %d", n, g, kind, want, int(1.15*float64(want)))
				}
			} else if g != want {
				t.Errorf("x%d: %d %s, want %d", n, got.Stats.Objects[kind], kind, want)
			}
		}
		if dups := duplicates(got); len(dups) > 0 {
			t.Errorf("x%d: objects named twice: %v", n, dups)
		}
	}
}

// duplicates lists the kind/namespace/name keys that occur more than once.
func duplicates(t *Topology) []string {
	seen := map[string]int{}
	for _, f := range t.Files {
		var kind, ns, name string
		for _, line := range strings.Split(string(f.Data), "\n") {
			switch {
			case line == "---":
				if kind != "" {
					seen[kind+" "+ns+"/"+name]++
				}
				kind, ns, name = "", "", ""
			case strings.HasPrefix(line, "kind: "):
				kind = strings.TrimPrefix(line, "kind: ")
			case strings.HasPrefix(line, "  namespace: "):
				ns = strings.TrimPrefix(line, "  namespace: ")
			case strings.HasPrefix(line, "  name: ") && name == "":
				name = strings.TrimPrefix(line, "  name: ")
			}
		}
		if kind != "" {
			seen[kind+" "+ns+"/"+name]++
		}
	}
	var out []string
	for k, c := range seen {
		if c > 1 {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
