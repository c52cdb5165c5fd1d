package main

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/agpol/agpol/internal/crds"
)

// TestGetYAMLPipeOffline: `agpol get … -A -f testdata/examples -o yaml | kubectl apply
// --dry-run=client -f -` without a cluster. kubectl's own reader (cli-runtime's
// resource builder, as kubectl apply reads -f -) takes the stream item by item; each
// object passes the schema of its CRD (agpol's embedded CRDs, checked as the API server
// checks a create: no error, no field it would drop); and agpol reads the stream back
// (-f -) as the objects it came from. TestGetYAMLAppliesLive sends it to an API server.
func TestGetYAMLPipeOffline(t *testing.T) {
	t.Chdir("../..")
	for _, types := range []string{"xap", "gateways,httproutes,xbackends,xaccesspolicies,authpolicies"} {
		t.Run(types, func(t *testing.T) {
			out, errOut, code := runDecide(t, "", "get", types, "-A", "-f", "testdata/examples", "-o", "yaml")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			infos, err := resource.NewLocalBuilder().Unstructured().Stream(strings.NewReader(out), "STDIN").Flatten().Do().Infos()
			if err != nil {
				t.Fatalf("kubectl's reader: %v\n%s", err, out)
			}
			names, _, _ := runDecide(t, "", "get", types, "-A", "-f", "testdata/examples", "-o", "name")
			if want := len(strings.Fields(names)); len(infos) != want || want == 0 {
				t.Fatalf("kubectl reads %d objects, get -o name lists %d:\n%s", len(infos), want, names)
			}
			for _, info := range infos {
				u, ok := info.Object.(*unstructured.Unstructured)
				if !ok {
					t.Fatalf("%s: %T", info.Name, info.Object)
				}
				v, err := crds.Lookup(u.GroupVersionKind())
				if err != nil {
					t.Errorf("%s %s: %v", u.GetKind(), u.GetName(), err)
					continue
				}
				res := v.Validate(context.Background(), u)
				if len(res.Errors) > 0 || len(res.Unknown) > 0 {
					t.Errorf("%s %s/%s: errors %v, fields the server drops %v", u.GetKind(), u.GetNamespace(), u.GetName(), res.Errors, res.Unknown)
				}
			}
			// Read back from the pipe, the objects are those of the files. The computed
			// columns of the table (routes attached, ENFORCED) need the rest of the
			// topology: the Namespaces whose labels the Gateway's allowedRoutes select,
			// and for the policies alone their targets.
			formats := []string{"name"}
			if strings.Contains(types, ",") {
				formats = append(formats, "table")
			}
			for _, format := range formats {
				want, _, _ := runDecide(t, "", "get", types, "-A", "-f", "testdata/examples", "-o", format)
				got, errOut, code := runDecide(t, out, "get", types, "-A", "-f", "-", "-f", "testdata/examples/00-namespaces.yaml", "-o", format)
				if code != exitOK || got != want {
					t.Errorf("get -f - -o %s of the piped List: exit %d %s\n got:\n%s\nwant:\n%s", format, code, errOut, got, want)
				}
			}
		})
	}
}
