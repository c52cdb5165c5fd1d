package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/snapshot"
)

// TestLoadNotesRejectedObjects: an object the API server would refuse (a list over its
// CRD's maxItems) is warned about in every command but lint, which reports it itself;
// it is not counted among the dropped fields.
func TestLoadNotesRejectedObjects(t *testing.T) {
	src := snapshot.Source{File: "route.yaml", Line: 1}
	s := &snapshot.Snapshot{Dropped: []snapshot.DroppedField{
		{Source: src, Kind: "HTTPRoute", Namespace: "ns", Name: "r", Path: "spec.rules", Rejected: "spec.rules has 17 items, the CRD allows at most 16"},
		{Source: src, Kind: "HTTPRoute", Namespace: "ns", Name: "r", Path: "spec.hostnames", Rejected: "spec.hostnames has 17 items, the CRD allows at most 16"},
	}}
	var b bytes.Buffer
	LoadNotes(&b, s, false)
	want := "warning: 1 object(s) of the manifests would be refused by the API server, so no cluster holds them as written; answers on them are about objects that cannot exist (first: route.yaml:1 HTTPRoute ns/r: spec.rules has 17 items, the CRD allows at most 16); agpol lint lists them (AGP101)\n"
	if b.String() != want {
		t.Errorf("notes:\n got %q\nwant %q", b.String(), want)
	}
	if strings.Contains(b.String(), "not stored") {
		t.Error("a refused object's list is reported as a dropped field")
	}
	b.Reset()
	LoadNotes(&b, s, true)
	if b.Len() != 0 {
		t.Errorf("lint's notes %q, want none (AGP101 reports the object)", b.String())
	}
}

// TestLoadNotesUnadmitted: when the load left objects unadmitted, a note says how many
// were not checked, after the warnings on the objects it did admit.
func TestLoadNotesUnadmitted(t *testing.T) {
	src := snapshot.Source{File: "p.yaml", Line: 1}
	s := &snapshot.Snapshot{Unadmitted: 3, Dropped: []snapshot.DroppedField{
		{Source: src, Kind: "XAccessPolicy", Namespace: "ns", Name: "p", Path: "spec.bogus"},
	}}
	var b bytes.Buffer
	LoadNotes(&b, s, false)
	want := "warning: 1 field(s) of the manifests are not stored by the API server and were left out, as a cluster would (first: p.yaml:1 XAccessPolicy ns/p spec.bogus); agpol lint lists them (AGP102)\n" +
		"note: 3 object(s) of the manifests were not checked against their CRDs (fields the API server would drop, lists it would refuse): they are printed as written and nothing is decided on them; agpol lint checks them (AGP101, AGP102)\n"
	if b.String() != want {
		t.Errorf("notes:\n got %q\nwant %q", b.String(), want)
	}
	b.Reset()
	LoadNotes(&b, &snapshot.Snapshot{}, false)
	if b.Len() != 0 {
		t.Errorf("notes %q, want none", b.String())
	}
}
