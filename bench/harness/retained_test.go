package main

import "testing"

func TestClassifyFuncs(t *testing.T) {
	const a = "github.com/agpol/agpol/internal/"
	for _, tc := range []struct {
		fns  []string
		want string
	}{
		{[]string{"github.com/google/cel-go/interpreter.(*defaultDispatcher).Add", a + "effective.(*Engine).compile", "runtime.main"}, "cel"},
		{[]string{"reflect.unsafe_New", "k8s.io/apimachinery/pkg/runtime.fromUnstructured", a + "snapshot.fromRaw", a + "snapshot.Decode", a + "cluster.readObject"}, "typed"},
		{[]string{a + "snapshot.Decode", a + "cluster.readObject"}, "typed"},
		{[]string{a + "cluster.readLimited", a + "cluster.readFile", a + "cluster.ReadFiles"}, "files"},
		{[]string{a + "snapshot.NewLazyRaw", a + "cluster.readObject"}, "objects"},
		{[]string{a + "cluster.(*keptFile).addDoc", a + "cluster.readObject"}, "objects"},
		{[]string{"runtime.makeslice", a + "topology.(*vhost).packEntries", a + "topology.BuildGraph"}, "graph"},
		{[]string{a + "effective.fieldSource", a + "effective.Admit"}, "engine"},
		{[]string{"strings.(*Builder).grow", a + "parallel.For.func1"}, "other"},
		{[]string{"runtime.makemap_small", "k8s.io/apimachinery/pkg/api/meta.init", "runtime.doInit1", "runtime.main"}, "init"},
		{[]string{"fmt.Sprintf", "main.retained", "main.main", "runtime.main"}, "other"},
	} {
		if got := classifyFuncs(tc.fns); got != tc.want {
			t.Errorf("classifyFuncs(%q) = %s, want %s", tc.fns, got, tc.want)
		}
	}
}
