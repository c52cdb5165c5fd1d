package main

import (
	"encoding/json"
	"net/http"
	"path"
)

// metadataHost is the host of the generator's metadata URLs
// (http://metadata.example.com/NAME, internal/testsupport/kuadrantdiff/gen_identity.go).
const metadataHost = "metadata.example.com"

// withMetadata makes the metadata server answer with a request's `metadata` (the
// shape of agpol's request files: what each metadata rule NAME would fetch) while
// Authorino checks it; the oracle checks one request at a time.
func (s *stands) withMetadata(m map[string]any, check func()) {
	s.metaMu.Lock()
	defer s.metaMu.Unlock()
	s.metadata.Store(&m)
	defer s.metadata.Store(nil)
	check()
}

// serveMetadata answers GET /NAME with the current request's metadata NAME as JSON,
// which Authorino's http metadata evaluator decodes into auth.metadata.NAME
// (pkg/evaluators/metadata/generic_http.go:60-92); 404 when the request gives none.
func (s *stands) serveMetadata(w http.ResponseWriter, r *http.Request) {
	var v any
	ok := false
	if m := s.metadata.Load(); m != nil {
		v, ok = (*m)[path.Base(r.URL.Path)]
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
