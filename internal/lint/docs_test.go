package lint

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "regenerate docs/checks.md and the golden files")

const checksDoc = "../../docs/checks.md"

// TestChecksDocIsCurrent fails when docs/checks.md no longer matches the registry.
// Regenerate it with: go test ./internal/lint -update
func TestChecksDocIsCurrent(t *testing.T) {
	want := ChecksMarkdown()
	if *update {
		if err := os.WriteFile(checksDoc, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(checksDoc)
	if err != nil {
		t.Fatalf("%v (generate it with: go test ./internal/lint -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/checks.md is stale: regenerate it with: go test ./internal/lint -update")
	}
	for _, c := range Checks() {
		if !bytes.Contains(want, []byte("### "+c.Code+"\n")) {
			t.Errorf("%s has no section", c.Code)
		}
		if !bytes.Contains(want, []byte("data planes [`"+c.DataPlanes+"`](#data-planes)")) {
			t.Errorf("%s: its section lacks its data planes tag", c.Code)
		}
	}
	// What a data planes tag means is said once, in the table the tags link to.
	for tag, text := range dataPlaneText {
		if n := bytes.Count(want, []byte(reflow(text))); n != 1 {
			t.Errorf("the meaning of data planes %q is written %d times, want once", tag, n)
		}
	}
}

func TestExplainText(t *testing.T) {
	c, ok := LookupCheck("agp401")
	if !ok {
		t.Fatal("AGP401 not found by lower-case code")
	}
	text := ExplainText(c)
	for _, want := range []string{"AGP401: rule source matches any caller", "severity: error   category: allow-all", "Fix:\n  Set type", SuppressAnnotation} {
		if !strings.Contains(text, want) {
			t.Errorf("explanation lacks %q:\n%s", want, text)
		}
	}
}
