package explain

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// items returns n requests, one per item, as a request file's list writes them.
func items(from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "- name: r%d\n  from: {serviceAccount: ns/sa%d}\n  gateway: gw\n  mcp: {tool: t%d}\n", i, i%3, i%5)
	}
	return b.String()
}

// TestParsePiecesAsWhole: a request file parsed piece by piece gives what parsing it
// whole gives, and the files whose pieces could parse differently, or that have an
// error, are parsed whole.
func TestParsePiecesAsWhole(t *testing.T) {
	many := items(0, requestChunk) // a piece's worth: what follows starts the next piece
	for _, c := range []struct {
		name, file string
		pieces     bool // parsed piece by piece
	}{
		{"header and a list", "apiVersion: agpol.dev/v1alpha1\nkind: SimulationRequests\ntrustDomain: td\nrequests:\n" + items(0, 3), true},
		{"no header", "requests:\n" + items(0, 3), true},
		{"comments, blank lines, a comment after the key", "# head\ntrustDomain: td # x\n\nrequests: # the list\n# first\n" + items(0, 2) + "\n# between\n" + items(2, 2) + "# end\n", true},
		{"an indented list", "requests:\n  - name: a\n    gateway: gw\n  - name: b\n    gateway: gw\n", true},
		{"several pieces", "trustDomain: td\nrequests:\n" + items(0, 3*requestChunk+5), true},
		{"anchors and merge keys within an item and a piece", "requests:\n- &b {name: a, gateway: gw, http: &h {method: PUT}}\n- {<<: *b, name: b, http: *h}\n", true},
		{"a block scalar holding item-like lines", "requests:\n- name: |\n    - x\n    y\n  gateway: gw\n" + items(1, 1), true},
		{"an item over several lines of a flow mapping", "requests:\n- {name: a,\n   gateway: gw}\n", true},
		{"the examples' request file", mustRead(t, "../../testdata/requests.yaml"), true},

		{"an alias to an earlier piece", "requests:\n- &first {name: a, gateway: gw}\n" + many + "- {<<: *first, name: z}\n", false},
		{"an alias to the header", "x: &g gw\nrequests:\n- {name: a, gateway: *g}\n", false},
		{"a key after the list", "requests:\n" + items(0, 2) + "trustDomain: td\n", false},
		{"a flow list", "requests: [{name: a, gateway: gw}]\n", false},
		{"an empty list", "requests:\n", false},
		{"several documents", "requests:\n" + items(0, 1) + "---\nrequests:\n" + items(1, 1), false},
		{"a document marker", "---\nrequests:\n" + items(0, 1), false},
		{"CRLF line breaks", strings.ReplaceAll("requests:\n"+items(0, 2), "\n", "\r\n"), false},
		{"a directive", "%YAML 1.1\n---\nrequests:\n" + items(0, 1), false},
		{"a tab indents a line", "requests:\n- name: a\n\tgateway: gw\n", false},
		{"a line left of the items", "requests:\n  - name: a\n gateway: gw\n", false},
		{"a quoted value over the next piece's first line", "requests:\n" + strings.TrimSuffix(many, "\n") + "\n  expectDecidedBy: \"x\n- name: y\"\n", false},
		{"a flow list over the next piece's first line (not YAML either way)", "requests:\n" + strings.TrimSuffix(many, "\n") + "\n  http: {headers: [\n- x]}\n", false},
		{"requests twice", "requests: []\nrequests:\n" + items(0, 1), false},
		{"an error in a later piece", "requests:\n" + many + "- {name: z, bogus: 1}\n", false},
		{"a duplicate name across pieces", "requests:\n" + many + "- {name: r0}\n", false},
		{"a header that is not a mapping", "- a\nrequests:\n" + items(0, 1), false},
		{"an item that is not a mapping", "requests:\n- x\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			whole, wholeErr := parseDocuments("r.yaml", []byte(c.file), "default")
			pieces, ok := parsePieces("r.yaml", []byte(c.file), "default")
			if ok != c.pieces {
				t.Fatalf("parsed piece by piece: %v, want %v (whole: %v)", ok, c.pieces, wholeErr)
			}
			if ok {
				if wholeErr != nil {
					t.Fatalf("pieces parse, the whole file does not: %v", wholeErr)
				}
				if !reflect.DeepEqual(pieces, whole) {
					t.Errorf("pieces give %d requests, trust domain %q; the whole file %d, %q",
						len(pieces.Requests), pieces.TrustDomain, len(whole.Requests), whole.TrustDomain)
					for i := range min(len(pieces.Requests), len(whole.Requests)) {
						if !reflect.DeepEqual(pieces.Requests[i], whole.Requests[i]) {
							t.Fatalf("request %d: %+v, whole %+v", i, pieces.Requests[i], whole.Requests[i])
						}
					}
				}
			}
			got, err := ParseRequestFile("r.yaml", []byte(c.file), "default")
			if fmt.Sprint(err) != fmt.Sprint(wholeErr) || (err == nil && !reflect.DeepEqual(got, whole)) {
				t.Errorf("ParseRequestFile: %v, want what parsing whole gives: %v", err, wholeErr)
			}
		})
	}
}

// TestParsePiecesLines: requests parsed piece by piece have their own lines in the file.
func TestParsePiecesLines(t *testing.T) {
	file := "# c\ntrustDomain: td\nrequests:\n" + items(0, 2*requestChunk+1)
	rf, ok := parsePieces("r.yaml", []byte(file), "default")
	if !ok {
		t.Fatal("not parsed piece by piece")
	}
	for i, r := range rf.Requests {
		if want := 4 + 4*i; r.Line != want {
			t.Fatalf("request %s at line %d, want %d", r.Name, r.Line, want)
		}
	}
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// FuzzParsePieces: whenever a request file parses piece by piece, parsing it whole
// succeeds with the same requests.
func FuzzParsePieces(f *testing.F) {
	for _, s := range []string{
		"trustDomain: td\nrequests:\n" + items(0, 3),
		"requests:\n  - name: a\n    gateway: gw\n  - {name: b,\n  gateway: gw}\n",
		"requests:\n- &b {name: a, http: &h {method: PUT}}\n- {<<: *b, name: b, http: *h}\n",
		"requests:\n- name: |\n    - x\n  gateway: gw\n- name: 'q\n  r'\n",
		"# c\nrequests: # l\n- name: a\n# c\n- name: b\n  http: {headers: {a: b}}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pieces, ok := parsePieces("r.yaml", data, "default")
		if !ok {
			return
		}
		whole, err := parseDocuments("r.yaml", data, "default")
		if err != nil {
			t.Fatalf("pieces parse, the whole file does not: %v", err)
		}
		if !reflect.DeepEqual(pieces, whole) {
			t.Fatalf("pieces give %+v, the whole file %+v", pieces, whole)
		}
	})
}
