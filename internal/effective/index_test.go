package effective

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/topology"
)

// indexByTarget: snapshot order, one entry per policy and target, namespaces apart.
func TestIndexByTarget(t *testing.T) {
	other := strings.Replace(pol("o", day(1), "Allow", []string{"Gateway/gw"}, ""), "namespace: a", "namespace: b", 1)
	s := load(t,
		pol("p2", day(2), "Allow", []string{"Gateway/gw", "XBackend/xb"}, ""),
		pol("p1", day(1), "Allow", []string{"Gateway/gw", "Gateway/gw"}, ""),
		pol("p3", day(3), "Allow", []string{"XBackend/xb"}, ""),
		other,
	)
	idx := indexByTarget(s)
	names := func(r topology.Ref) string {
		var out []string
		for _, p := range idx[r] {
			out = append(out, p.Namespace+"/"+p.Name)
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		ref  topology.Ref
		want string
	}{
		{topology.GatewayRef("a", "gw"), "a/p2,a/p1"},
		{topology.XBackendRef("a", "xb"), "a/p2,a/p3"},
		{topology.GatewayRef("b", "gw"), "b/o"},
		{topology.GatewayRef("a", "xb"), ""},
		{topology.XBackendRef("b", "xb"), ""},
	} {
		if got := names(tc.ref); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.ref, got, tc.want)
		}
	}
}
