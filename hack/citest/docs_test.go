package citest

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// reExample is an example file shown in docs/ci.md: a marker, then the file in a fence.
var reExample = regexp.MustCompile("(?s)<!-- example: (\\S+) -->\n```[a-z]*\n(.*?)```\n")

// TestDocsShowTheExamples checks that docs/ci.md shows every file of docs/ci exactly as
// it is (the files are what the other tests run), and that its tables of the action's
// inputs and outputs are those of action.yml.
func TestDocsShowTheExamples(t *testing.T) {
	doc := readFile(t, filepath.Join(root, "docs/ci.md"))
	shown := map[string]bool{}
	for _, m := range reExample.FindAllStringSubmatch(doc, -1) {
		shown[m[1]] = true
		if file := readFile(t, filepath.Join(root, m[1])); m[2] != file {
			t.Errorf("docs/ci.md shows %s other than it is", m[1])
		}
	}
	entries, err := os.ReadDir(filepath.Join(root, "docs/ci"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if p := "docs/ci/" + e.Name(); !shown[p] {
			t.Errorf("docs/ci.md does not show %s", p)
		}
		delete(shown, "docs/ci/"+e.Name())
	}
	for p := range shown {
		t.Errorf("docs/ci.md shows %s, which is not a file of docs/ci", p)
	}

	a, err := loadAction()
	if err != nil {
		t.Fatal(err)
	}
	// Table rows start with the name in backquotes; the outputs table groups some names.
	rows := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| (`[^|]+) \\|").FindAllStringSubmatch(doc, -1) {
		for _, name := range strings.Split(m[1], ", ") {
			rows[strings.Trim(name, "`")] = true
		}
	}
	want := map[string]bool{}
	for name := range a.Inputs {
		want[name] = true
	}
	for name := range a.Outputs {
		want[name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if !rows[name] {
			t.Errorf("docs/ci.md has no row for %s of action.yml", name)
		}
		delete(rows, name)
	}
	for name := range rows {
		t.Errorf("docs/ci.md has a row for %s, which action.yml lacks", name)
	}
}

// TestReadmeInstall checks that the README's Install section points to the action, the
// hook and docs/ci.md.
func TestReadmeInstall(t *testing.T) {
	readme := readFile(t, filepath.Join(root, "README.md"))
	_, section, ok := strings.Cut(readme, "\n## Install\n")
	if !ok {
		t.Fatal("README.md has no Install section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, want := range []string{"uses: agpol/agpol@", "id: agpol-lint", "docs/ci.md"} {
		if !strings.Contains(section, want) {
			t.Errorf("the Install section lacks %q", want)
		}
	}
}
