package invisible

import "testing"

func TestShow(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain café", "plain café"},
		{"admin\u202E\u2066// ok\u2069\u2066", "admin<U+202E><U+2066>// ok<U+2069><U+2066>"},
		{"get\u200Buser", "get<U+200B>user"},
		{"\uFEFFx\u200E\u200F\u061C\u2060\u200C\u200D", "<U+FEFF>x<U+200E><U+200F><U+061C><U+2060><U+200C><U+200D>"},
		{"\u202A\u202B\u202C\u202D\u2067\u2068", "<U+202A><U+202B><U+202C><U+202D><U+2067><U+2068>"},
	} {
		if got := Show(c.in); got != c.want {
			t.Errorf("Show(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Describe(0x202E); got != "U+202E RIGHT-TO-LEFT OVERRIDE (a bidirectional control)" {
		t.Errorf("Describe = %q", got)
	}
}
