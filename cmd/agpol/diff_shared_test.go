package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// diff reads a file both inputs hold with the same bytes once (cluster.SharedFiles);
// what it says about the objects of that file still names the file of each side.
func TestDiffSharedFileNamesItsSide(t *testing.T) {
	t.Chdir("../..")
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before"), filepath.Join(dir, "after")
	copyDir := func(from, to string) {
		t.Helper()
		entries, err := os.ReadDir(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(to, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(from, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	copyDir("testdata/examples", before)
	copyDir("testdata/examples", after)
	// The after side changes the Gateway; 40-access-policies.yaml, whose legacy policy
	// has a field the API server drops (line 173), is the same on both sides.
	gw, err := os.ReadFile("testdata/whatif/after/10-gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(after, "10-gateway.yaml"), gw, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runDecide(t, "", "diff", "--before", before, "--after", after)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, side := range []string{before, after} {
		if want := filepath.Join(side, "40-access-policies.yaml") + ":173 XAccessPolicy tools/calc-legacy"; !strings.Contains(errOut, want) {
			t.Errorf("stderr does not name %s:\n%s", want, errOut)
		}
	}
}
