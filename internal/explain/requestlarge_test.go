package explain

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLargeRequestFile: a valid 16 MB request file of 100,000 requests without an
// alias is read (it was refused as an alias bomb when every node counted toward the
// bound), piece by piece and whole.
func TestLargeRequestFile(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes 16 MB")
	}
	const n = 100000
	var b strings.Builder
	b.WriteString("trustDomain: cluster.local\nrequests:\n")
	for i := 0; i < n; i++ {
		// 23 nodes a request: 2,300,000 in all, over the old bound of 2,000,000.
		fmt.Fprintf(&b, "- name: r%06d\n  from: {serviceAccount: ag/sa-%d}\n  gateway: infra/gw\n"+
			"  http: {host: h.example, method: POST}\n  mcp: {method: tools/call, tool: t%d}\n  expect: allow\n", i, i%7, i%11)
	}
	if b.Len() < 16_000_000 || b.Len() > 16<<20 {
		t.Fatalf("generated %d bytes, want about 16 MB within the 16 MiB cap", b.Len())
	}
	path := filepath.Join(t.TempDir(), "requests.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rf, err := ParseRequestFile(path, data, "default")
	if err != nil {
		t.Fatal(err)
	}
	if len(rf.Requests) != n {
		t.Errorf("%d requests, want %d", len(rf.Requests), n)
	}
	whole, err := parseDocuments(path, data, "default")
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Requests) != n {
		t.Errorf("parsed whole: %d requests, want %d", len(whole.Requests), n)
	}
}
