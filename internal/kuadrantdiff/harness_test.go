package kuadrantdiff

import "testing"

func TestPathTail(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"gateway ns1/gw › listener l1 › route ns1/r#read", "ns1/gw|ns1/gw#l1|ns1/r|ns1/r#read"},
		{"gateway ns1/gw › listener l1 › route ns2/r[1]", "ns1/gw|ns1/gw#l1|ns2/r|ns2/r#rule-2"},
		{"gateway ns1/gw › listener l1 › route ns1/r › rule rule-1", "ns1/gw|ns1/gw#l1|ns1/r|ns1/r#rule-1"},
	} {
		if got := pathTail(c.in); got != c.want {
			t.Errorf("pathTail(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
