package kuadrantdiff

import (
	"testing"

	"github.com/agpol/agpol/internal/effective/authpolicy"
)

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

func TestCompareAuthConfig(t *testing.T) {
	up, err := authConfigRules([]byte(`{"hosts":["x"],"patterns":{"gold":[{"selector":"a","operator":"eq","value":"b"}]},
		"authentication":{"k":{"apiKey":{"selector":{"matchLabels":{"app":"toys"}},"allNamespaces":false},"credentials":{},"priority":0,"metrics":false}},
		"response":{"unauthenticated":{"code":302},"success":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	rules := func(auth string) map[string]authpolicy.Rule {
		return map[string]authpolicy.Rule{
			"patterns#gold":             {Spec: []byte(`{"allOf":[{"operator":"eq","selector":"a","value":"b"}]}`)},
			"authentication#k":          {Spec: []byte(auth)},
			"response.unauthenticated#": {Spec: []byte(`{"code":302}`)},
			"conditions#":               {Spec: []byte(`{"predicates":["true"]}`)},
		}
	}
	for _, c := range []struct {
		auth  string
		diffs int
	}{
		{`{"apiKey":{"selector":{"matchLabels":{"app":"toys"}}}}`, 0},
		{`{"apiKey":{"selector":{"matchLabels":{"app":"toys"}},"allNamespaces":true}}`, 1},
	} {
		mine, err := impliedRules(rules(c.auth))
		if err != nil {
			t.Fatal(err)
		}
		if d := compareAuthConfig(up, mine); len(d) != c.diffs {
			t.Errorf("%s: %d differences %v, want %d", c.auth, len(d), d, c.diffs)
		}
	}
}
