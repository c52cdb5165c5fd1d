// SharedFiles: a file with the same bytes at the same place in two loads is read once.

package cluster

import (
	"crypto/sha256"
	"strconv"
	"sync"

	"github.com/agpol/agpol/internal/snapshot"
)

// SharedFiles lets loads of two inputs (diff's before and after) share the files they
// have in common: a file at the same path under the same argument (the argument itself
// for a file, the path below it for a directory) with the same bytes (SHA-256) is parsed,
// admitted and typed once, by the first load that reads it. A later load takes its
// objects from there, typed as they were read, with its own file name in their sources
// and positions: messages name the file of their own side. The typed objects' fields
// are shared (each load has its own copy of an object's top-level struct, whose Origin
// is its own), so no stage may modify an object of a snapshot.
//
// A load shares files only with loads of the same DefaultNamespace, and only without
// FileOptions.Inspect (whose result would be another load's). The zero value is not
// usable: use NewSharedFiles. It is safe for one load at a time.
type SharedFiles struct {
	mu    sync.Mutex
	files map[string]*sharedFile
}

// sharedFile is a file as a load read it.
type sharedFile struct {
	sum       [sha256.Size]byte
	namespace string
	file      *keptFile
	objs      []RawObject
	docs      int
}

// NewSharedFiles returns an empty SharedFiles.
func NewSharedFiles() *SharedFiles { return &SharedFiles{files: map[string]*sharedFile{}} }

// sharedKey names file rel (its path below argument arg, "" for the argument itself)
// of a load's arguments; "" for stdin, which is never shared.
func sharedKey(arg int, rel string) string { return strconv.Itoa(arg) + "\x00" + rel }

// lookup returns the file read under key with these bytes, nil when none was.
func (s *SharedFiles) lookup(key string, sum [sha256.Size]byte, namespace string) *sharedFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.files[key]; f != nil && f.sum == sum && f.namespace == namespace {
		return f
	}
	return nil
}

// record keeps a file a load parsed, unless one is already kept under key.
func (s *SharedFiles) record(key string, f *sharedFile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.files[key]; !ok {
		s.files[key] = f
	}
}

// readAs returns the objects of f as read from the file name: what parsing name would
// have returned.
func (f *sharedFile) readAs(name string) []RawObject {
	out := make([]RawObject, len(f.objs))
	for i, o := range f.objs {
		src := o.Source
		src.File = name
		out[i] = o.sharedAs(src)
	}
	return out
}

// sharedAs returns the object read again from another file with the same bytes, at
// src: typed as it was read (a copy of its top-level struct), not yet built into a
// snapshot. An object held as read is copied.
func (o RawObject) sharedAs(src snapshot.Source) RawObject {
	st := o.r
	if st.lazy == nil {
		return NewRawObject(st.raw.Object().DeepCopy(), src)
	}
	c := &rawState{lazy: st.lazy.clone(), typed: st.typed.Copy(), fresh: true, id: st.id,
		apiVersion: st.apiVersion, kind: st.kind, annotations: st.annotations, dropped: st.dropped}
	c.raw = snapshot.NewLazyRaw(snapshot.Lazy{Decode: c.lazy.object, Fresh: c.lazy.transient, Header: c.header, Annotations: c.annots})
	return RawObject{Source: src, r: c}
}
