package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/snapshot"
)

// TestListenerSetLive: a ListenerSet read from a real API server attaches its listener to
// its Gateway, and explain routes a request for its hostname through it to the route
// attached to the ListenerSet, as it does from the same manifests given as files.
func TestListenerSetLive(t *testing.T) {
	kubeconfig := startLintCluster(t)
	dyn := dynamicClient(t, kubeconfig)
	objs, _, err := cluster.ReadFiles(cluster.FileOptions{Filenames: []string{"testdata/listenerset-live.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		gvk := o.Object().GroupVersionKind()
		k, ok := snapshot.LookupKind(gvk.Group, gvk.Kind)
		if !ok {
			t.Fatalf("unknown kind %s", gvk.Kind)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(gvk.GroupVersion().WithResource(k.Resource))
		if k.Namespaced {
			ri = dyn.Resource(gvk.GroupVersion().WithResource(k.Resource)).Namespace(o.Object().GetNamespace())
		}
		u := o.Object().DeepCopy()
		u.SetCreationTimestamp(metav1.Time{})
		if _, err := ri.Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s %s: %v", gvk.Kind, u.GetName(), err)
		}
	}
	ask := []string{"explain", "-o", "json", "--from", "anonymous", "--mcp-method", "none", "--method", "GET",
		"--gateway", "lsdemo/gw", "--host", "a.example.com", "--path", "/"}
	for _, src := range [][]string{{"--kubeconfig", kubeconfig}, {"-f", "testdata/listenerset-live.yaml"}} {
		out, errOut, code := runDecide(t, "", append(ask, src...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", src, code, errOut)
		}
		var got struct {
			Results []struct {
				Path struct{ Listener, Route, Backend string } `json:"path"`
			} `json:"results"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Results) != 1 {
			t.Fatalf("%v: %v\n%s", src, err, out)
		}
		if p := got.Results[0].Path; p.Listener != "lsdemo/extra/a" || p.Route != "lsdemo/on-set" || p.Backend != "Service lsdemo/svc" {
			t.Errorf("%v: path %+v, want listener lsdemo/extra/a, route lsdemo/on-set, Service lsdemo/svc", src, p)
		}
	}
	// get listenersets -o json prints the same computed status (no controller runs), and
	// get gateways the same LISTENERS, from the API server and from the files.
	var statuses, gateways []string
	for _, src := range [][]string{{"--kubeconfig", kubeconfig}, {"-f", "testdata/listenerset-live.yaml"}} {
		out, errOut, code := runDecide(t, "", append([]string{"get", "lset", "extra", "-n", "lsdemo", "-o", "json"}, src...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", src, code, errOut)
		}
		var obj struct {
			Status json.RawMessage `json:"status"`
		}
		if err := json.Unmarshal([]byte(out), &obj); err != nil {
			t.Fatalf("%v: %v\n%s", src, err, out)
		}
		// The API server sets metadata.generation (observedGeneration follows it); files have none.
		statuses = append(statuses, regexp.MustCompile(`\s*"observedGeneration": \d+,`).ReplaceAllString(string(obj.Status), ""))
		out, errOut, code = runDecide(t, "", append([]string{"get", "gateways", "-n", "lsdemo", "--no-headers"}, src...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", src, code, errOut)
		}
		gateways = append(gateways, strings.Join(strings.Fields(out)[:4], " "))
	}
	if !strings.Contains(statuses[1], "computed by agpol") || statuses[0] != statuses[1] {
		t.Errorf("status live:\n%s\nfiles:\n%s", statuses[0], statuses[1])
	}
	if want := "lsdemo gw istio main:HTTP/80,lsdemo/extra/a:HTTP/80"; gateways[0] != want || gateways[1] != want {
		t.Errorf("get gateways: live %q, files %q, want %q", gateways[0], gateways[1], want)
	}
}
