package crds

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"sort"
	"sync"
)

var fingerprint = sync.OnceValue(func() string {
	h := sha256.New()
	files, _ := fs.Glob(data, "data/*.yaml")
	sort.Strings(files)
	for _, f := range files {
		raw, _ := data.ReadFile(f)
		h.Write([]byte(f))
		h.Write([]byte{0})
		h.Write(raw)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
})

// Fingerprint identifies the set of embedded CRDs: the SHA-256 of their file names and
// contents. Results that depend on the CRDs (validation) are cached under it.
func Fingerprint() string { return fingerprint() }
