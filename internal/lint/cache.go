// The lint cache: schema validation results of unchanged objects, kept on disk.

package lint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agpol/agpol/internal/crds"
)

// Cache holds the per-object results of schema validation (AGP101, AGP102: pruning,
// defaulting, OpenAPI and CEL validation), which depend only on the object and the
// CRDs, in files under a directory, as Go's build cache does. An entry's name is the
// SHA-256 of the object as validated (its canonical JSON and the group, version and
// kind it is validated as), agpol's build and the CRD set: any change to one of them is
// a miss. An entry that cannot be read, or that is not the one its name says, is
// ignored and written again; nothing read from the cache is trusted beyond its own key.
// Checks that relate objects always run. A nil *Cache caches nothing.
type Cache struct {
	dir   string
	build string // agpol's build (vcs revision, or the executable's hash)
	crds  string // crds.Fingerprint
	// MaxBytes bounds the entries' total size; Trim removes the least recently used
	// beyond it.
	MaxBytes int64
	// TrimEvery is how often Trim walks the directory (recorded in a file there).
	TrimEvery time.Duration

	hits, misses, writeErrors atomic.Int64

	// The pack: the results of the last run, in one file (packFile), read once at the
	// first lookup so that a run on an unchanged input reads one file, not one per
	// object. Its entries are keyed as the entry files are, and it is only ever looked
	// up by key, so a pack from another input or an older run can cost misses, never a
	// wrong result.
	packOnce sync.Once
	pack     map[string]schemaResult
	packMu   sync.Mutex
	used     map[string]schemaResult // this run's results, the next pack
	packMiss bool                    // a result of this run was not in the pack
}

// packFile holds the pack of the results of the last run (Cache.WritePack).
const packFile = "pack.json"

// cachePack is the content of the pack file.
type cachePack struct {
	Version string                  `json:"version"`
	Build   string                  `json:"build"`
	CRDs    string                  `json:"crds"`
	Results map[string]schemaResult `json:"results"`
}

// DefaultCacheBytes is the default bound of a cache's size on disk, counted in 4 KiB
// blocks (an entry, some hundred bytes, takes one): about 130,000 objects' results.
const DefaultCacheBytes = 512 << 20

// blockBytes is what an entry is counted for at least: a file system block.
const blockBytes = 4096

// cacheVersion changes when the entry format or the key changes.
const cacheVersion = "agpol-lint-cache-1"

// OpenCache returns the cache in dir for the given build of agpol (the directory is
// created when the first entry is written).
func OpenCache(dir, build string) *Cache {
	return &Cache{dir: dir, build: build, crds: crds.Fingerprint(), MaxBytes: DefaultCacheBytes, TrimEvery: 24 * time.Hour}
}

// CacheStats counts a run's use of the cache.
type CacheStats struct{ Hits, Misses, WriteErrors int64 }

// Stats returns how many results were read from the cache, computed, and not written.
func (c *Cache) Stats() CacheStats {
	if c == nil {
		return CacheStats{}
	}
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), WriteErrors: c.writeErrors.Load()}
}

// schemaResult is what lint keeps of validating one object (crds.Result), in a form
// the cache writes and reads back exactly.
type schemaResult struct {
	Unknown []string      `json:"unknown,omitempty"`
	Errors  []schemaError `json:"errors,omitempty"`
}

// schemaError is a field.Error as lint reports it.
type schemaError struct {
	Field   string `json:"field"`
	Message string `json:"message"` // field.Error.Error()
	Detail  string `json:"detail"`
}

func resultOf(r crds.Result) schemaResult {
	out := schemaResult{Unknown: r.Unknown}
	for _, e := range r.Errors {
		out.Errors = append(out.Errors, schemaError{Field: e.Field, Message: e.Error(), Detail: e.Detail})
	}
	return out
}

// cacheEntry is the content of an entry file.
type cacheEntry struct {
	Version string       `json:"version"`
	Key     string       `json:"key"`
	Result  schemaResult `json:"result"`
}

// key returns the entry name of obj validated as gvk; false when obj cannot be
// encoded (it is then validated, not cached).
func (c *Cache) key(obj *unstructured.Unstructured, gvk schema.GroupVersionKind) (string, bool) {
	data, err := json.Marshal(obj.Object) // map keys sorted: canonical
	if err != nil {
		return "", false
	}
	h := sha256.New()
	for _, s := range []string{cacheVersion, c.build, c.crds, gvk.String()} {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil)), true
}

func (c *Cache) path(key string) string { return filepath.Join(c.dir, key[:2], key) }

// get returns the cached result under key: from the pack, else from its entry file.
func (c *Cache) get(key string) (schemaResult, bool) {
	c.packOnce.Do(c.readPack)
	if r, ok := c.pack[key]; ok {
		c.hits.Add(1)
		c.remember(key, r, false)
		return r, true
	}
	r, ok := c.getEntry(key)
	if ok {
		c.remember(key, r, true)
	}
	return r, ok
}

// remember records a result of this run for the next pack; missed says it was not in
// the pack.
func (c *Cache) remember(key string, r schemaResult, missed bool) {
	c.packMu.Lock()
	defer c.packMu.Unlock()
	if c.used == nil {
		c.used = map[string]schemaResult{}
	}
	c.used[key] = r
	c.packMiss = c.packMiss || missed
}

// readPack reads the pack of the last run; a pack that cannot be read, is not agpol's
// format or belongs to another build or CRD set is ignored (and replaced by WritePack).
func (c *Cache) readPack() {
	p := filepath.Join(c.dir, packFile)
	data, used, err := readEntry(p)
	if err != nil {
		return
	}
	var pk cachePack
	if json.Unmarshal(data, &pk) != nil || pk.Version != cacheVersion || pk.Build != c.build || pk.CRDs != c.crds {
		return
	}
	c.pack = pk.Results
	if now := time.Now(); now.Sub(used) > time.Hour {
		_ = os.Chtimes(p, now, now) // in use (Trim)
	}
}

// WritePack replaces the pack with this run's results, unless it holds exactly them.
// Errors are ignored: the entry files hold every result too.
func (c *Cache) WritePack() {
	if c == nil {
		return
	}
	c.packMu.Lock()
	defer c.packMu.Unlock()
	if len(c.used) == 0 || (!c.packMiss && len(c.used) == len(c.pack)) {
		return
	}
	data, err := json.Marshal(cachePack{Version: cacheVersion, Build: c.build, CRDs: c.crds, Results: c.used})
	if err == nil {
		err = writeAtomic(filepath.Join(c.dir, packFile), data)
	}
	if err != nil {
		c.writeErrors.Add(1)
	}
}

// getEntry returns the result under key from its entry file.
func (c *Cache) getEntry(key string) (schemaResult, bool) {
	p := c.path(key)
	data, used, err := readEntry(p)
	if err != nil {
		c.misses.Add(1)
		return schemaResult{}, false
	}
	var e cacheEntry
	if json.Unmarshal(data, &e) != nil || e.Version != cacheVersion || e.Key != key {
		c.misses.Add(1) // corrupt or foreign: validated again and rewritten
		return schemaResult{}, false
	}
	c.hits.Add(1)
	// Mark it used (for Trim), at most once an hour as Go's cache does.
	if now := time.Now(); now.Sub(used) > time.Hour {
		_ = os.Chtimes(p, now, now)
	}
	return e.Result, true
}

// readEntry returns the content of the entry file p and its modification time (when it
// was last used), with one open, stat, read and close: a warm run reads an entry per
// object, and os.ReadFile followed by os.Stat took two system calls more each (a
// tenth of a warm run's CPU profile went to these calls on the large benchmark topology).
func readEntry(p string) ([]byte, time.Time, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, time.Time{}, err
	}
	return data, fi.ModTime(), nil
}

// put writes the result under key, atomically (a temporary file renamed).
func (c *Cache) put(key string, r schemaResult) {
	data, err := json.Marshal(cacheEntry{Version: cacheVersion, Key: key, Result: r})
	if err == nil {
		err = writeAtomic(c.path(key), data)
	}
	if err != nil {
		c.writeErrors.Add(1)
	}
	c.remember(key, r, true)
}

func writeAtomic(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// trimFile records when the cache was last trimmed.
const trimFile = "trim.txt"

// Trim keeps the cache within MaxBytes: at most once per TrimEvery, it removes entries
// unused for a week, then the least recently used ones until the rest take at most
// three quarters of MaxBytes. Errors are ignored: the cache is an optimisation.
func (c *Cache) Trim() {
	if c == nil {
		return
	}
	now := time.Now()
	mark := filepath.Join(c.dir, trimFile)
	if data, err := os.ReadFile(mark); err == nil {
		if sec, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil && now.Sub(time.Unix(sec, 0)) < c.TrimEvery {
			return
		}
	} else if _, err := os.Stat(c.dir); err != nil {
		return // no cache yet
	}
	type entry struct {
		path string
		size int64
		used time.Time
	}
	var entries []entry
	var total int64
	_ = filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == trimFile {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".tmp-") && now.Sub(fi.ModTime()) > time.Hour {
			_ = os.Remove(p) // left by a run that was killed
			return nil
		}
		if now.Sub(fi.ModTime()) > 7*24*time.Hour {
			_ = os.Remove(p)
			return nil
		}
		size := (fi.Size() + blockBytes - 1) / blockBytes * blockBytes
		entries = append(entries, entry{p, size, fi.ModTime()})
		total += size
		return nil
	})
	if total > c.MaxBytes {
		sort.Slice(entries, func(i, j int) bool { return entries[i].used.Before(entries[j].used) })
		for _, e := range entries {
			if total <= c.MaxBytes/4*3 {
				break
			}
			if os.Remove(e.path) == nil {
				total -= e.size
			}
		}
	}
	_ = writeAtomic(mark, []byte(strconv.FormatInt(now.Unix(), 10)+"\n"))
}
