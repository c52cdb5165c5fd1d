package topology

import (
	"strings"
	"testing"
)

// FuzzHostMatches checks the Gateway API hostname rules on arbitrary names: matching is
// case-insensitive and ignores a port, "" and "*" match everything, a wildcard matches
// only hosts with at least one more label in front of its suffix, an exact pattern only
// its own name; listener/route intersections only ever yield names they were given.
func FuzzHostMatches(f *testing.F) {
	for _, s := range [][2]string{
		{"*.example.com", "a.example.com"}, {"*.example.com", "example.com"}, {"*.example.com", "a.b.example.com:443"},
		{"a.example.com", "A.EXAMPLE.COM"}, {"", "x"}, {"*", ""}, {"*.", "."}, {"*.a", ".a"}, {"a", "[::1]:80"},
		{"[::1]", "[::1]"}, {"*.example.com", "*.example.com"}, {"x", "x:"}, {"x", "x:99999999999999999999"},
		{"\u0130.example.com", "i\u0307.example.com"}, {"*.K", "a.\u212a"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, host string) {
		got := HostMatches(pattern, host)
		if got != HostMatches(pattern, host) {
			t.Fatal("not deterministic")
		}
		if pattern == "" || pattern == "*" {
			if !got {
				t.Fatalf("%q does not match %q", pattern, host)
			}
		}
		name := strings.ToLower(StripPort(host))
		p := strings.ToLower(pattern)
		switch {
		case p == "" || p == "*":
		case strings.HasPrefix(p, "*."):
			suffix := p[1:]
			if got != (len(name) > len(suffix) && strings.HasSuffix(name, suffix)) {
				t.Fatalf("wildcard %q vs %q: %v", pattern, host, got)
			}
			if got && name == suffix[1:] {
				t.Fatalf("wildcard %q matches its bare suffix %q", pattern, host)
			}
		default:
			if got != (p == name) {
				t.Fatalf("exact %q vs %q: %v", pattern, host, got)
			}
		}
		// A port never changes the answer.
		if HostMatches(pattern, StripPort(host)+":8443") != HostMatches(pattern, StripPort(host)) && !strings.HasSuffix(StripPort(host), "]") && !strings.Contains(StripPort(host), ":") {
			t.Fatalf("%q vs %q: the port changes the answer", pattern, host)
		}
		_ = hostPort(host)
		if n := hostPort(host); n < 0 || n > 65535 {
			t.Fatalf("hostPort(%q) = %d", host, n)
		}
		// Intersections yield the listener's hostname or route hostnames, nothing else.
		lp, rh := strings.ToLower(pattern), strings.ToLower(StripPort(host))
		for _, h := range intersectHostnames(lp, []string{rh, lp}) {
			if h != lp && h != rh && h != "*" {
				t.Fatalf("intersect(%q, %q) invented %q", lp, rh, h)
			}
		}
		if hostnameSubset(rh, lp) && !isWildcard(lp) && !isWildcard(rh) && rh != lp {
			t.Fatalf("exact %q is a subset of a different exact %q", rh, lp)
		}
		_ = hostnameSpecificity(pattern)
	})
}
