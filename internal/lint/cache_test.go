package lint

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/crds"
	"github.com/agpol/agpol/internal/snapshot"
)

// scenarios returns every input of the repository's testdata that lint reads: each
// directory holding YAML files, and each check fixture beside base.yaml.
func scenarios(t *testing.T) [][]string {
	t.Helper()
	var out [][]string
	dirs := map[string]bool{}
	err := filepath.WalkDir("../../testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".yaml") && !dirs[filepath.Dir(p)] {
			dirs[filepath.Dir(p)] = true
			out = append(out, []string{filepath.Dir(p)})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checks, _ := filepath.Glob(filepath.Join(fixtures, "checks", "*.yaml"))
	for _, c := range checks {
		out = append(out, []string{filepath.Join(fixtures, "base.yaml"), c})
	}
	return out
}

// tryContext is loadContext for inputs that may not load (hostile files): nil then.
func tryContext(files ...string) *Context {
	return tryContextInspected(nil, files...)
}

// tryContextInspected is tryContext with the objects validated as they are read when
// inspect is set (cluster.FileOptions.Inspect).
func tryContextInspected(inspect func(*unstructured.Unstructured) any, files ...string) *Context {
	objs, pos, err := cluster.ReadFiles(cluster.FileOptions{Filenames: files, Inspect: inspect, DefaultNamespace: "default"})
	if err != nil {
		return nil
	}
	cluster.DefaultNamespace(objs, "default")
	var keep []cluster.RawObject
	var bad []Undecodable
	for _, o := range objs {
		var scratch snapshot.Snapshot
		if err := scratch.Add(o.Object(), o.Source); err != nil {
			bad = append(bad, Undecodable{Object: o.Object(), Source: o.Source, Err: err})
			continue
		}
		keep = append(keep, o)
	}
	s, err := cluster.Build(keep, pos, "files")
	if err != nil {
		return nil
	}
	ctx := NewContext(s)
	ctx.Undecodable = bad
	ctx.Now = testNow
	return ctx
}

// findingsJSON runs lint over files (a fresh context: nothing memoized) with cache, and
// returns its findings and summary as JSON.
func findingsJSON(t *testing.T, cache *Cache, files ...string) string {
	t.Helper()
	return reportJSON(t, tryContext(files...), cache)
}

// reportJSON runs lint on ctx with cache and returns its findings and summary as JSON
// ("" for a nil context).
func reportJSON(t *testing.T, ctx *Context, cache *Cache) string {
	t.Helper()
	if ctx == nil {
		return ""
	}
	r := Run(ctx, Options{Cache: cache})
	b, err := json.Marshal(struct {
		F []Finding
		S Summary
	}{r.Findings, r.Summary})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCacheSameFindings: on every testdata scenario, a run that fills the cache and a
// run that reads it report byte for byte what a run without a cache reports, and the
// second run validates nothing again; a new build of agpol or a new CRD set misses.
func TestCacheSameFindings(t *testing.T) {
	total := CacheStats{}
	for _, files := range scenarios(t) {
		dir := t.TempDir()
		cold := findingsJSON(t, nil, files...)
		if cold == "" {
			continue // does not load (hostile input): lint never runs on it
		}
		fill := OpenCache(dir, "build-a")
		if got := findingsJSON(t, fill, files...); got != cold {
			t.Errorf("%v: filling the cache:\n got %s\nwant %s", files, got, cold)
		}
		warm := OpenCache(dir, "build-a")
		if got := findingsJSON(t, warm, files...); got != cold {
			t.Errorf("%v: from the cache:\n got %s\nwant %s", files, got, cold)
		}
		if s := warm.Stats(); s.Misses != 0 || s.WriteErrors != 0 {
			t.Errorf("%v: second run: %+v, want every result from the cache", files, s)
		}
		// Under a new build or CRD set, every object is validated again: each run
		// writes as many entries as the first (the objects of a scenario that are the
		// same bytes share one), and the findings do not change.
		n := countEntries(dir)
		for i, name := range []string{"build", "crds"} {
			c := OpenCache(dir, "build-a")
			if name == "build" {
				c = OpenCache(dir, "build-b")
			} else {
				c.crds = "another CRD set"
			}
			if got := findingsJSON(t, c, files...); got != cold {
				t.Errorf("%v: new %s:\n got %s\nwant %s", files, name, got, cold)
			}
			if got := countEntries(dir); got != (i+2)*n {
				t.Errorf("%v: new %s: %d entries, want %d", files, name, got, (i+2)*n)
			}
		}
		s := warm.Stats()
		total.Hits += s.Hits
	}
	if total.Hits < 100 {
		t.Errorf("only %d results read from the cache over every scenario", total.Hits)
	}
}

// TestInspectSameFindings: on every testdata scenario, validating objects as they are
// read (Inspect, as agpol lint does) reports byte for byte what validating them after
// the load does, with and without a cache; and most objects are validated at reading.
func TestInspectSameFindings(t *testing.T) {
	validatedAtReading := 0
	for _, files := range scenarios(t) {
		want := findingsJSON(t, nil, files...)
		if want == "" {
			continue
		}
		ctx := tryContextInspected(Inspect(nil), files...)
		for _, o := range ctx.Origins() {
			if in, ok := o.Inspected().(*inspected); ok && in.schema != nil {
				validatedAtReading++ // validated as its admission decoded it
			}
		}
		if got := reportJSON(t, ctx, nil); got != want {
			t.Errorf("%v: validated as read:\n got %s\nwant %s", files, got, want)
		}
		dir := t.TempDir()
		for _, run := range []string{"filling the cache", "from the cache"} {
			if got := reportJSON(t, tryContextInspected(Inspect(OpenCache(dir, "build-a")), files...), nil); got != want {
				t.Errorf("%v: validated as read, %s:\n got %s\nwant %s", files, run, got, want)
			}
		}
	}
	if validatedAtReading < 100 {
		t.Errorf("only %d objects validated as they were read over every scenario", validatedAtReading)
	}
}

// TestCacheObjectChanged: after an object changes, a cached run reports what a run
// without the cache reports on the new object.
func TestCacheObjectChanged(t *testing.T) {
	in := t.TempDir()
	src := filepath.Join(fixtures, "checks", "AGP102.yaml")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(in, "objects.yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	before := findingsJSON(t, OpenCache(dir, "b"), file)
	// A typo fixed: the unknown field AGP102 reports is gone.
	changed := strings.Replace(string(data), "sourec:", "source:", 1)
	if changed == string(data) {
		t.Fatal("the fixture no longer has the typo this test fixes")
	}
	if err := os.WriteFile(file, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	cold := findingsJSON(t, nil, file)
	c := OpenCache(dir, "b")
	got := findingsJSON(t, c, file)
	if got != cold {
		t.Errorf("after the change:\n got %s\nwant %s", got, cold)
	}
	if got == before {
		t.Error("the change did not change the findings: the test proves nothing")
	}
	if s := c.Stats(); s.Misses != 1 || s.Hits == 0 {
		t.Errorf("stats %+v: want the changed object alone validated again", s)
	}
}

// TestCachePack: after a run writes its pack, a run on the same input reads every result
// from the pack alone (the entry files removed), byte for byte as a cold run reports; a
// pack that is not JSON is ignored (the entry files serve), and another build's pack is
// not read.
func TestCachePack(t *testing.T) {
	for _, files := range scenarios(t) {
		cold := findingsJSON(t, nil, files...)
		if cold == "" {
			continue
		}
		dir := t.TempDir()
		fill := OpenCache(dir, "b")
		findingsJSON(t, fill, files...)
		fill.WritePack()
		n := fill.Stats().Misses
		if n == 0 {
			continue // nothing validated: nothing cached
		}
		entries := dir + ".entries"
		if err := os.Rename(dir, entries); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(entries, packFile), filepath.Join(dir, packFile)); err != nil {
			t.Fatal(err)
		}
		warm := OpenCache(dir, "b")
		if got := findingsJSON(t, warm, files...); got != cold {
			t.Errorf("%v: from the pack:\n got %s\nwant %s", files, got, cold)
		}
		if s := warm.Stats(); s.Misses != 0 || s.Hits == 0 {
			t.Errorf("%v: from the pack alone: %+v, want every result from it", files, s)
		}
		// A pack that is not JSON is ignored: the entry files serve.
		if err := os.WriteFile(filepath.Join(entries, packFile), []byte("{not json"), 0o644); err != nil {
			t.Fatal(err)
		}
		c := OpenCache(entries, "b")
		if got := findingsJSON(t, c, files...); got != cold {
			t.Errorf("%v: pack not JSON:\n got %s\nwant %s", files, got, cold)
		}
		if s := c.Stats(); s.Misses != 0 || s.Hits != warm.Stats().Hits {
			t.Errorf("%v: pack not JSON: %+v, want every result from the entry files", files, s)
		}
		// Another build's pack is not read: each result is validated again.
		other := t.TempDir()
		data, err := os.ReadFile(filepath.Join(dir, packFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(other, packFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		c = OpenCache(other, "c")
		if got := findingsJSON(t, c, files...); got != cold {
			t.Errorf("%v: another build's pack:\n got %s\nwant %s", files, got, cold)
		}
		// (Objects with the same bytes share a result; validated at once, each may miss.)
		if s := c.Stats(); s.Misses < int64(len(fill.used)) {
			t.Errorf("%v: another build's pack: %+v, want the %d results validated again", files, s, len(fill.used))
		}
	}
}

// TestCacheCorruptEntries: entries that are not JSON, or that hold another key's
// result, are ignored and written again.
func TestCacheCorruptEntries(t *testing.T) {
	files := []string{"../../testdata/examples"}
	cold := findingsJSON(t, nil, files...)
	dir := t.TempDir()
	findingsJSON(t, OpenCache(dir, "b"), files...)
	var entries []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			entries = append(entries, p)
		}
		return nil
	})
	if len(entries) < 2 {
		t.Fatalf("%d entries written", len(entries))
	}
	// The first entry holds garbage; every other one holds the first one's result.
	first, _ := os.ReadFile(entries[0])
	for i, p := range entries {
		content := first
		if i == 0 {
			content = []byte("{not json")
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := OpenCache(dir, "b")
	if got := findingsJSON(t, c, files...); got != cold {
		t.Errorf("with corrupt entries:\n got %s\nwant %s", got, cold)
	}
	if s := c.Stats(); s.Hits != 0 || s.Misses != int64(len(entries)) {
		t.Errorf("stats %+v: want every entry (%d) ignored", s, len(entries))
	}
	again := OpenCache(dir, "b")
	findingsJSON(t, again, files...)
	if s := again.Stats(); s.Misses != 0 {
		t.Errorf("stats %+v: the corrupt entries were not written again", s)
	}
}

// TestCacheTrim: the cache stays within its bound, least recently used first.
func TestCacheTrim(t *testing.T) {
	dir := t.TempDir()
	c := OpenCache(dir, "b")
	old := time.Now().Add(-48 * time.Hour)
	for i := range 20 {
		key := strings.Repeat("0", 62) + string(rune('a'+i/10)) + string(rune('a'+i%10))
		c.put(key, schemaResult{Unknown: []string{strings.Repeat("x", 100)}})
		used := old // the first ten unused for two days, the others used since, in turn
		if i >= 10 {
			used = time.Now().Add(-time.Duration(20-i) * time.Minute)
		}
		_ = os.Chtimes(c.path(key), used, used)
	}
	size := func() (n int, total int64) {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() != trimFile {
				fi, _ := d.Info()
				n++
				total += (fi.Size() + blockBytes - 1) / blockBytes * blockBytes
			}
			return nil
		})
		return n, total
	}
	n, total := size()
	c.MaxBytes = total / 2
	c.Trim()
	n2, total2 := size()
	if total2 > c.MaxBytes || n2 >= n {
		t.Fatalf("after Trim: %d entries, %d bytes; bound %d", n2, total2, c.MaxBytes)
	}
	if _, ok := c.get(strings.Repeat("0", 62) + "bj"); !ok {
		t.Error("the most recently used entry was removed")
	}
	if _, ok := c.get(strings.Repeat("0", 62) + "aa"); ok {
		t.Error("an entry unused for two days was kept")
	}
	// Within TrimEvery, Trim does not walk again.
	c.MaxBytes = 0
	c.Trim()
	if n3, _ := size(); n3 != n2 {
		t.Errorf("Trim ran again within TrimEvery: %d entries, want %d", n3, n2)
	}
}

// countEntries counts the entries of the cache in dir.
func countEntries(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != trimFile {
			n++
		}
		return nil
	})
	return n
}

// TestInspectLeavesObject: Inspect is given the object as read, shared with the loader,
// and leaves it as it was; the object's admission validates it (InspectDecoding), which
// leaves the decoded object as admission decoded it.
func TestInspectLeavesObject(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1",
		"kind":       "HTTPRoute",
		"metadata":   map[string]any{"name": "r", "namespace": "ns"},
		"spec": map[string]any{
			"bogus":      int64(1),
			"parentRefs": []any{map[string]any{"name": "gw"}},
			"rules":      []any{map[string]any{"matches": []any{map[string]any{"path": map[string]any{"value": "/x"}}}}},
		},
		"status": map[string]any{"parents": []any{}},
	}}
	before := u.DeepCopy()
	in, ok := Inspect(nil)(u).(*inspected)
	if !ok || in.pending == nil {
		t.Fatalf("no validation pending: %+v", in)
	}
	if !reflect.DeepEqual(u.Object, before.Object) {
		t.Errorf("Inspect changed the object:\n%v\nwant\n%v", u.Object, before.Object)
	}
	// The admission of a copy (as cluster admits the object) validates it on the way.
	v := crds.ForAdmission(u.GroupVersionKind())
	_, _ = v.AdmitWith(u.DeepCopy(), func(d crds.Decoding) {
		decoded := d.Object.DeepCopy()
		in.InspectDecoding(v, d)
		if !reflect.DeepEqual(d.Object, decoded) {
			t.Errorf("InspectDecoding changed the decoded object")
		}
	})
	if in.schema == nil || len(in.schema.result.Unknown) == 0 {
		t.Fatalf("not validated, or spec.bogus not found: %+v", in)
	}
}
