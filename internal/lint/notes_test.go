package lint

import "testing"

func TestNotesOf(t *testing.T) {
	empty := NewContext(nil)
	if n := NotesOf(empty, &Report{}); !n.NothingRead || n.NotRevalidated != 0 {
		t.Errorf("nothing read: %+v", n)
	}
	undecodable := NewContext(nil)
	undecodable.Undecodable = []Undecodable{{}}
	if n := NotesOf(undecodable, &Report{NotRevalidated: 2}); n.NothingRead || n.NotRevalidated != 2 {
		t.Errorf("one undecodable object, two not revalidated: %+v", n)
	}
}
