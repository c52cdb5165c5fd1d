package cluster

import (
	"slices"
	"testing"
)

// TestListsOverMaxItems: a route with more hostnames and rules than the HTTPRoute CRD's
// maxItems (16 each) is one the API server refuses; loading records both lists, with
// the counts, so that every command warns. A route within the bounds records nothing.
func TestListsOverMaxItems(t *testing.T) {
	s, err := LoadFiles(FileOptions{Filenames: []string{"testdata/maxitems.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range s.RejectedFields() {
		got = append(got, d.Kind+" "+d.Namespace+"/"+d.Name+" "+d.Rejected)
	}
	want := []string{
		"HTTPRoute ns/too-long spec.hostnames has 17 items, the CRD allows at most 16",
		"HTTPRoute ns/too-long spec.rules has 17 items, the CRD allows at most 16",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rejected fields:\n got %q\nwant %q", got, want)
	}
	if d := s.DroppedFields(); len(d) != 0 {
		t.Errorf("dropped fields %v, want none: a list over maxItems is not dropped", d)
	}
	if len(s.HTTPRoutes) != 2 {
		t.Errorf("%d routes, want both analysed as written", len(s.HTTPRoutes))
	}
}
