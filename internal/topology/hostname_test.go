package topology

import (
	"fmt"
	"reflect"
	"testing"
)

func TestHostMatches(t *testing.T) {
	tests := []struct {
		pattern, host string
		want          bool
	}{
		{"", "anything.example.com", true},
		{"*", "anything", true},
		{"", "", true},
		{"api.example.com", "api.example.com", true},
		{"api.example.com", "API.Example.COM", true},
		{"api.example.com", "api.example.com:8443", true},
		{"api.example.com", "www.example.com", false},
		{"api.example.com", "", false},
		{"*.example.com", "a.example.com", true},
		{"*.example.com", "a.b.example.com", true}, // one or more labels
		{"*.example.com", "example.com", false},
		{"*.example.com", ".example.com", false},
		{"*.example.com", "aexample.com", false},
		{"*.Example.com", "a.example.COM", true},
		{"*.example.com", "a.example.com.evil.org", false},
	}
	for _, tt := range tests {
		if got := HostMatches(tt.pattern, tt.host); got != tt.want {
			t.Errorf("HostMatches(%q, %q) = %v, want %v", tt.pattern, tt.host, got, tt.want)
		}
	}
}

func TestHostnameSubsetAndIntersection(t *testing.T) {
	tests := []struct {
		listener string
		route    []string
		want     []string
	}{
		{"", nil, []string{"*"}},
		{"", []string{"a.example.com", "*.b.org"}, []string{"a.example.com", "*.b.org"}},
		{"a.example.com", nil, []string{"a.example.com"}},
		{"a.example.com", []string{"a.example.com"}, []string{"a.example.com"}},
		{"a.example.com", []string{"b.example.com"}, nil},
		// route wildcard, exact listener: the listener's name (more specific) is served
		{"a.example.com", []string{"*.example.com"}, []string{"a.example.com"}},
		{"x.a.example.com", []string{"*.example.com"}, []string{"x.a.example.com"}},
		// the reference also admits the parent domain (routes.go isHostnameSubset rule 3)
		{"example.com", []string{"*.example.com"}, []string{"example.com"}},
		// wildcard listener: exact route names below it; deeper wildcards; not the parent
		{"*.example.com", []string{"a.example.com", "a.b.example.com", "example.com", "other.org"}, []string{"a.example.com", "a.b.example.com"}},
		{"*.example.com", []string{"*.example.com"}, []string{"*.example.com"}},
		{"*.example.com", []string{"*.a.example.com"}, []string{"*.a.example.com"}},
		{"*.a.example.com", []string{"*.example.com"}, nil},
		{"*.example.com", []string{"*.com"}, nil},
		// duplicates collapse
		{"a.example.com", []string{"*.example.com", "a.example.com"}, []string{"a.example.com"}},
	}
	for _, tt := range tests {
		if got := intersectHostnames(tt.listener, tt.route); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("intersectHostnames(%q, %q) = %q, want %q", tt.listener, tt.route, got, tt.want)
		}
	}
}

func TestStripPortAndHostPort(t *testing.T) {
	tests := []struct {
		in, host string
		port     int
	}{
		{"a.example.com", "a.example.com", 0},
		{"a.example.com:8080", "a.example.com", 8080},
		{"a.example.com:", "a.example.com", 0}, // empty port (RFC 3986 allows it)
		{"a.example.com:http", "a.example.com:http", 0},
		{"[::1]", "[::1]", 0},
		{"[::1]:443", "[::1]", 443},
		{"a:99999999", "a", 0},
	}
	for _, tt := range tests {
		if got := StripPort(tt.in); got != tt.host {
			t.Errorf("StripPort(%q) = %q, want %q", tt.in, got, tt.host)
		}
		if got := hostPort(tt.in); got != tt.port {
			t.Errorf("hostPort(%q) = %d, want %d", tt.in, got, tt.port)
		}
	}
}

// The per-port virtual host table picks exact, then the longest wildcard, then "*".
func TestPortTableLookup(t *testing.T) {
	pt := &portTable{exact: map[string]*vhost{}, wildcard: map[string]*vhost{}}
	for _, d := range []string{"api.example.com", "*.example.com", "*.deep.example.com"} {
		pt.vhost(d)
	}
	tests := []struct{ host, want string }{
		{"api.example.com", "api.example.com"},
		{"web.example.com", "*.example.com"},
		{"a.b.example.com", "*.example.com"},
		{"x.deep.example.com", "*.deep.example.com"},
		{"deep.example.com", "*.example.com"},
		{"example.com", ""},
		{"other.org", ""},
	}
	for _, scan := range []bool{false, true} { // the exact domains in the map, then scanned by hash
		if scan {
			pt.index()
			if !pt.scan || len(pt.hosts) != len(pt.exact) {
				t.Fatalf("index: scan %v, %d hashes for %d domains", pt.scan, len(pt.hosts), len(pt.exact))
			}
		}
		for _, tt := range tests {
			got := ""
			if vh := pt.lookup(tt.host); vh != nil {
				got = vh.domain
			}
			if got != tt.want {
				t.Errorf("scan %v: lookup(%q) = %q, want %q", scan, tt.host, got, tt.want)
			}
		}
	}
	pt.vhost("*")
	if vh := pt.lookup("other.org"); vh == nil || vh.domain != "*" {
		t.Errorf("lookup(other.org) with a catch-all host = %v", vh)
	}
	// A table too large to scan looks its exact domains up in the map.
	for i := 0; i <= maxHostScan; i++ {
		pt.vhost(fmt.Sprintf("h%d.example.org", i))
	}
	pt.index()
	if pt.scan {
		t.Fatalf("a table of %d exact domains is scanned", len(pt.exact))
	}
	if vh := pt.lookup("api.example.com"); vh == nil || vh.domain != "api.example.com" {
		t.Errorf("map lookup(api.example.com) = %v", vh)
	}
}
