package stages

import "testing"

// The streaming floor decodes the same objects as the floor that keeps them.
func TestDecodeStreamCountsEveryObject(t *testing.T) {
	f := Generated(t, "small")
	kept, err := DecodeFloor(f.Files)
	if err != nil {
		t.Fatal(err)
	}
	n, err := DecodeStream(f.Files)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(kept) || n != f.Stats.Total() {
		t.Errorf("DecodeStream: %d objects, DecodeFloor %d, generated %d", n, len(kept), f.Stats.Total())
	}
}
