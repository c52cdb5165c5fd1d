package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	yaml2 "go.yaml.in/yaml/v2"
	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agpol/agpol/internal/parallel"
	"github.com/agpol/agpol/internal/snapshot"
)

// InputError is bad input: a file that cannot be read or parsed, or an object that
// cannot be decoded. It names the file and line. Commands exit 2 on it.
type InputError struct {
	File string
	Line int
	Err  error
}

func (e *InputError) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	case e.File != "":
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return e.Err.Error()
}

func (e *InputError) Unwrap() error { return e.Err }

// Limits bound what one load may consume, so hostile input fails fast.
type Limits struct {
	MaxFileBytes  int64 // per file
	MaxDocuments  int   // per load
	MaxNodes      int   // YAML nodes per document after alias expansion
	MaxDepth      int   // nesting depth
	MaxTotalBytes int64 // all files together
}

// DefaultLimits are generous for real manifests and refuse bombs.
var DefaultLimits = Limits{
	MaxFileBytes:  64 << 20,
	MaxDocuments:  200000,
	MaxNodes:      2000000,
	MaxDepth:      200,
	MaxTotalBytes: 512 << 20,
}

// FileOptions says which files to read.
type FileOptions struct {
	Filenames []string
	Recursive bool
	Stdin     io.Reader // used for "-"; os.Stdin when nil
	Limits    *Limits
}

// RawObject is an object as read (from a file or the cluster), before it joins a snapshot.
//
// An object read from a file is typed as soon as it is read, and its unstructured form is
// not kept: Object decodes it again from the file's bytes when asked. Until then the
// object's identity, namespace defaulting and typing use what was recorded at reading;
// once Object has been called, every operation works on that object, as if it had been
// held from the start (so a caller that edits it sees its edits typed by Build).
// RawObjects come from ReadFiles, ReadLive or NewRawObject; the zero value holds nothing
// and must not be used.
type RawObject struct {
	Source snapshot.Source
	r      *rawState
}

// rawState is shared by the copies of a RawObject.
type rawState struct {
	raw *snapshot.Raw
	// lazy rebuilds the object from the file; nil when the object is held.
	lazy lazyObject
	// typed is the object as typed at reading; fresh says Build has not used it yet.
	typed snapshot.Typed
	fresh bool
	// id is the identity recorded at reading (namespace kept up to date by DefaultNamespace).
	id snapshot.Identity
	// apiVersion, kind and annotations are recorded at reading too, for the object's header.
	apiVersion, kind string
	annotations      map[string]string
	// dropped are the fields the API server would drop, found when the object was
	// typed at reading (admit).
	dropped []snapshot.DroppedField
}

// NewRawObject holds an object already decoded (read from the cluster, or built by a caller).
func NewRawObject(u *unstructured.Unstructured, src snapshot.Source) RawObject {
	return RawObject{Source: src, r: &rawState{raw: snapshot.NewRaw(u)}}
}

// Object returns the object as read (for a file, with the namespace DefaultNamespace gave
// it); the same pointer every time.
func (o RawObject) Object() *unstructured.Unstructured {
	if o.r == nil {
		return nil
	}
	return o.r.raw.Object()
}

// pristine reports whether the object is still as recorded at reading: typed, not
// decoded again, and not yet used by Build.
func (o RawObject) pristine() bool {
	return o.r != nil && o.r.fresh && o.r.raw.Decoded() == nil
}

// Identity returns the object's identity (group, kind, namespace, name), as
// snapshot.IdentityOf(o.Object()) would, without decoding it again.
func (o RawObject) Identity() snapshot.Identity {
	if o.r != nil && o.r.lazy != nil && o.r.raw.Decoded() == nil {
		return o.r.id
	}
	return snapshot.IdentityOf(o.Object())
}

// Check returns the error Build would report for the object (nil when it types cleanly).
func (o RawObject) Check() error {
	if o.pristine() {
		return nil // typed cleanly at reading (objects that did not are held as read)
	}
	var scratch snapshot.Snapshot
	return scratch.Add(o.Object(), o.Source)
}

// transient returns the object for one pass (writing a snapshot) without keeping it decoded.
func (o RawObject) transient() *unstructured.Unstructured {
	if o.r != nil && o.r.lazy != nil && o.r.raw.Decoded() == nil {
		if u := o.r.lazy.transient(); u != nil {
			return u
		}
	}
	return o.Object()
}

// typeInto adds the object to s: the type recorded at reading when still pristine,
// else the object typed now.
func (o RawObject) typeInto(s *snapshot.Snapshot) error {
	if o.pristine() {
		o.r.fresh = false // a second Build types the object again, as it types a held one
		s.Append(o.r.typed, snapshot.NewOrigin(o.Source, o.r.raw))
		o.record(s, o.r.dropped)
		return nil
	}
	u := o.Object()
	var dropped []snapshot.DroppedField
	if !o.Source.AsStored() && u != nil {
		// Typed as the API server would store it; the object as read stays as it is
		// (lint validates it, a snapshot writes it).
		u = u.DeepCopy()
		dropped = admit(u)
	}
	t, err := snapshot.Decode(u)
	s.Append(t, snapshot.NewOrigin(o.Source, o.r.raw))
	if err == nil {
		o.record(s, dropped)
	}
	return err
}

// record adds the fields the API server would drop of the object to s.Dropped.
func (o RawObject) record(s *snapshot.Snapshot, dropped []snapshot.DroppedField) {
	if len(dropped) == 0 {
		return
	}
	id := o.Identity()
	for _, d := range dropped {
		d.Source, d.Namespace, d.Name = o.Source, id.Namespace, id.Name
		s.Dropped = append(s.Dropped, d)
	}
}

// defaultNamespace defaults the namespace of a namespaced object that has none (DefaultNamespace).
func (o RawObject) defaultNamespace(ns string) {
	if o.r.lazy != nil && o.r.raw.Decoded() == nil {
		id := o.r.id
		if id.Namespace != "" || !defaultsNamespace(id.Group, id.Kind) {
			return
		}
		o.r.id.Namespace = ns
		o.r.lazy.setNamespace(ns)
		if o.r.fresh {
			o.r.typed.SetNamespace(ns)
		}
		return
	}
	u := o.Object()
	if u.GetNamespace() != "" {
		return
	}
	gvk := u.GroupVersionKind()
	if defaultsNamespace(gvk.Group, gvk.Kind) {
		u.SetNamespace(ns)
	}
}

// defaultsNamespace reports whether kubectl apply gives an object of this kind the
// default namespace when it has none.
func defaultsNamespace(group, kind string) bool {
	if k, ok := snapshot.LookupKind(group, kind); ok && !k.Namespaced {
		return false
	}
	return kind != "Namespace" && kind != "GatewayClass"
}

// ReadFiles reads every object of the named files, directories and "-" in order.
// It stops at the first malformed document with an *InputError.
//
// Files are read one after the other, in order, and parsed in parallel (parallel.For);
// the objects, and the error reported, are those of parsing each file after the
// previous one: the first error in file order, the document limit counted over the
// files in order, and a reading error only when every file read before it parsed.
func ReadFiles(opts FileOptions) ([]RawObject, *FilePositions, error) {
	lim := DefaultLimits
	if opts.Limits != nil {
		lim = *opts.Limits
	}
	type input struct {
		name string
		data []byte
	}
	var (
		inputs []input
		total  int64
		// stop is what ended reading early, reported if the files read before it parse.
		stop error
	)
	add := func(name string, data []byte) bool {
		total += int64(len(data))
		if total > lim.MaxTotalBytes {
			stop = &InputError{File: name, Err: fmt.Errorf("input is larger than %s in all", byteSize(lim.MaxTotalBytes))}
			return false
		}
		inputs = append(inputs, input{name, data})
		return true
	}
read:
	for _, name := range opts.Filenames {
		if name == "-" {
			in := opts.Stdin
			if in == nil {
				in = os.Stdin
			}
			data, err := readLimited(in, lim.MaxFileBytes)
			if err != nil {
				stop = &InputError{File: "<stdin>", Err: err}
				break
			}
			if !add("<stdin>", data) {
				break
			}
			continue
		}
		files, err := expand(name, opts.Recursive)
		if err != nil {
			stop = err
			break
		}
		for _, f := range files {
			data, err := readFile(f, lim)
			if err != nil {
				stop = err
				break read
			}
			if !add(f, data) {
				break read
			}
		}
	}
	parsed := make([]*fileReader, len(inputs))
	shared := &internTable{m: map[string]string{}}
	parallel.For(len(inputs), func(i int) {
		r := &fileReader{lim: lim, shared: shared}
		r.err = r.parse(inputs[i].name, inputs[i].data)
		// The file's own intern table is not needed past its parse: dropped here, not
		// at the join, so that the tables of every file are not live at once.
		r.strings = nil
		parsed[i] = r
	})
	positions := newFilePositions()
	n := 0
	for _, r := range parsed {
		n += len(r.out)
	}
	out := make([]RawObject, 0, n)
	docs := 0
	for i, r := range parsed {
		// A file stops at the first document past the limit, counted from its start
		// (parse): here the count goes on from the files before it.
		if docs+r.docs > lim.MaxDocuments {
			return nil, nil, &InputError{File: inputs[i].name, Err: fmt.Errorf("more than %d documents", lim.MaxDocuments)}
		}
		if r.err != nil {
			return nil, nil, r.err
		}
		docs += r.docs
		positions.keep(r.file)
		out = append(out, r.out...)
		parsed[i] = nil
	}
	if stop != nil {
		return nil, nil, stop
	}
	return out, positions, nil
}

// expand turns a path into the files to read: a file as is; a directory's .yaml, .yml
// and .json files (recursively with -R), sorted, as kubectl does.
func expand(name string, recursive bool) ([]string, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, &InputError{File: name, Err: cleanPathErr(err)}
	}
	if !st.IsDir() {
		return []string{name}, nil
	}
	var files []string
	err = filepath.WalkDir(name, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return &InputError{File: p, Err: cleanPathErr(err)}
		}
		if d.IsDir() {
			if p != name && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		if !d.Type().IsRegular() {
			// Never open a named pipe or device found in a directory: opening a FIFO
			// blocks until someone writes to it. Symlinks are followed to what they name.
			st, err := os.Stat(p)
			if err != nil {
				return &InputError{File: p, Err: cleanPathErr(err)}
			}
			if !st.Mode().IsRegular() {
				return &InputError{File: p, Err: fmt.Errorf("not a regular file (%s)", fileType(st.Mode()))}
			}
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	return files, nil
}

func cleanPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// fileReader parses one file.
type fileReader struct {
	lim Limits
	// docs counts the documents parsed, including the one an error stopped at.
	docs    int
	out     []RawObject
	file    *keptFile
	strings map[string]string // see converter.strings
	shared  *internTable      // see converter.shared
	err     error
}

// readFile reads a file named on the command line or found in a directory.
func readFile(name string, lim Limits) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, &InputError{File: name, Err: cleanPathErr(err)}
	}
	defer f.Close()
	// A file named on the command line may also be a pipe or a character device
	// (-f <(kustomize build), -f /dev/stdin); readLimited bounds what is read.
	var in io.Reader = f
	if st, err := f.Stat(); err == nil {
		m := st.Mode()
		if !m.IsRegular() && m&(fs.ModeNamedPipe|fs.ModeCharDevice) == 0 {
			return nil, &InputError{File: name, Err: fmt.Errorf("not a regular file (%s)", fileType(m))}
		}
		if m.IsRegular() && st.Size() <= lim.MaxFileBytes {
			// The bytes are kept for the whole run (objects are decoded again from
			// them): read into a buffer of the file's size, not one grown by doubling.
			in = sizedReader{f, st.Size()}
		}
	}
	data, err := readLimited(in, lim.MaxFileBytes)
	if err != nil {
		return nil, &InputError{File: name, Err: err}
	}
	return data, nil
}

func fileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// byteSize renders a limit for messages: "64 MiB", or bytes when smaller than 1 MiB.
func byteSize(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// sizedReader is a regular file and its size when opened.
type sizedReader struct {
	io.Reader
	size int64
}

func readLimited(in io.Reader, max int64) ([]byte, error) {
	var data []byte
	var err error
	if sr, ok := in.(sizedReader); ok {
		// bytes.Buffer keeps bytes.MinRead free before each read: with that much room
		// past the size, a file that has not grown is read without growing the buffer.
		buf := bytes.NewBuffer(make([]byte, 0, sr.size+bytes.MinRead))
		_, err = buf.ReadFrom(io.LimitReader(sr.Reader, max+1))
		data = buf.Bytes()
	} else {
		data, err = io.ReadAll(io.LimitReader(in, max+1))
	}
	if err != nil {
		return nil, cleanPathErr(err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("file is larger than %s", byteSize(max))
	}
	return data, nil
}

// parse parses the file's data; the total size was checked by ReadFiles.
func (r *fileReader) parse(name string, data []byte) error {
	if bytes.IndexByte(data, 0) >= 0 {
		return &InputError{File: name, Err: errors.New("binary file (contains NUL bytes), not YAML or JSON")}
	}
	if !utf8.Valid(data) {
		line := 1 + bytes.Count(data[:firstInvalidUTF8(data)], []byte("\n"))
		return &InputError{File: name, Line: line, Err: errors.New("invalid UTF-8")}
	}
	f := &keptFile{name: name, data: data, lim: r.lim, lazy: documentsSplittable(data), stored: bytes.HasPrefix(data, []byte(SnapshotHeader))}
	r.file = f
	dec := yaml.NewDecoder(bytes.NewReader(data))
	lines := lineIndex{data: data, line: 1}
	for doc := 0; ; doc++ {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return yamlError(name, data, doc, err)
		}
		r.docs++
		if r.docs > r.lim.MaxDocuments {
			return &InputError{File: name, Err: fmt.Errorf("more than %d documents", r.lim.MaxDocuments)}
		}
		// Where the document starts: the first at the start of the data; a later one at
		// its "---", which the scanner only takes for a marker in the first column.
		d := docStart{}
		switch {
		case doc == 0:
			d.ok = true
		case n.Column == 1 && f.lazy:
			d.offset, d.line, d.ok = lines.offset(n.Line), int32(n.Line), true
		}
		if err := r.document(f, doc, d, &n); err != nil {
			return err
		}
	}
}

// yamlError turns a yaml/v3 syntax error in document doc of data into an InputError
// naming the line of the problem.
//
// yaml/v3 reports the line of the error's context (for example the start of the
// enclosing mapping) and counts it from 0 for parser errors, so its number is often
// one or more lines before the mistake, most visibly in documents after the first.
// yaml/v2 parses the same syntax with the same scanner but reports the problem's own
// position; errorLine re-parses with it (without building values, so aliases are not
// expanded) and corrects its 0-based parser lines.
func yamlError(name string, data []byte, doc int, err error) error {
	line, msg := splitYAMLError(err.Error())
	if l, ok := errorLine(data); ok {
		line = l
	} else if anchor, ok := strings.CutPrefix(msg, "unknown anchor '"); ok {
		anchor = strings.TrimSuffix(anchor, "' referenced")
		line = lineContaining(data, documentStartLine(data, doc), "*"+anchor)
	}
	if line == 0 {
		line = documentStartLine(data, doc)
	}
	if l := lineText(data, line); strings.Contains(l[:len(l)-len(strings.TrimLeft(l, " \t"))], "\t") {
		msg += " (a tab indents this line: YAML indents with spaces only)"
	}
	return &InputError{File: name, Line: line, Err: fmt.Errorf("malformed YAML: %s", msg)}
}

// splitYAMLError splits "yaml: line 12: did not find expected key" into 12 and the rest.
func splitYAMLError(msg string) (int, string) {
	msg = strings.TrimPrefix(msg, "yaml: ")
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return 0, msg
	}
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	n, err := strconv.Atoi(rest[:j])
	if err != nil {
		return 0, msg
	}
	return n, strings.TrimPrefix(strings.TrimPrefix(rest[j:], ":"), " ")
}

// yamlParserErrors are the messages of yaml's parser (as opposed to its scanner):
// their line numbers are 0-based.
var yamlParserErrors = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"found undefined tag handle":             true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found duplicate %TAG directive":         true,
}

// skipDoc parses a yaml/v2 document without building any value.
type skipDoc struct{}

func (skipDoc) UnmarshalYAML(func(any) error) error { return nil }

// errorLine returns the 1-based line of the first syntax error in data, as yaml/v2 locates it.
func errorLine(data []byte) (int, bool) {
	dec := yaml2.NewDecoder(bytes.NewReader(data))
	for {
		var d skipDoc
		err := dec.Decode(&d)
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) {
			return 0, false
		}
		line, msg := splitYAMLError(err.Error())
		switch {
		case !yamlParserErrors[msg] && line > 0: // scanner errors are 1-based already
			return line, true
		case yamlParserErrors[msg]: // 0-based; no number means line 0
			return line + 1, true
		}
		return 0, false
	}
}

// documentStartLine approximates the first line of document doc (0-based) by counting
// "---" separators; it is only used when the parser names no line.
func documentStartLine(data []byte, doc int) int {
	lines := strings.Split(string(data), "\n")
	seps := []int{}
	content := -1 // first line with content, 0-based
	for i, l := range lines {
		l = strings.TrimRight(l, "\r")
		if l == "---" || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "---\t") {
			seps = append(seps, i)
			continue
		}
		if content < 0 && strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#") {
			content = i
		}
	}
	if len(seps) > 0 && (content < 0 || seps[0] < content) {
		seps = seps[1:] // a leading "---" opens the first document
	}
	switch {
	case doc == 0 || len(seps) == 0:
		return 1
	case doc > len(seps):
		return seps[len(seps)-1] + 2
	}
	return seps[doc-1] + 2
}

// lineText returns line n (1-based) of data, or "".
func lineText(data []byte, n int) string {
	for i, l := range strings.Split(string(data), "\n") {
		if i+1 == n {
			return l
		}
	}
	return ""
}

// lineContaining returns the first line at or after from (1-based) that contains s, or from.
func lineContaining(data []byte, from int, s string) int {
	for i, l := range strings.Split(string(data), "\n") {
		if i+1 >= from && strings.Contains(l, s) {
			return i + 1
		}
	}
	return from
}

func (r *fileReader) document(f *keptFile, doc int, start docStart, n *yaml.Node) error {
	name := f.name
	root := n
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			f.addDoc(doc, docStart{})
			return nil // empty document ("---" alone, comments only)
		}
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		f.addDoc(doc, docStart{})
		return nil
	}
	if r.strings == nil {
		r.strings = map[string]string{}
	}
	c := converter{lim: r.lim, strings: r.strings, shared: r.shared}
	v, err := c.convert(root, 0)
	if err != nil {
		return &InputError{File: name, Line: c.errLine, Err: err}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return &InputError{File: name, Line: root.Line, Err: errors.New("document is not a mapping (expected a Kubernetes object)")}
	}
	start.rootLine, start.rootColumn, start.nodes = int32(root.Line), int32(root.Column), int32(c.nodes)
	if !f.lazy {
		start.ok = false
	}
	f.addDoc(doc, start)
	var ref *docRef
	if start.ok {
		ref = &docRef{file: f, doc: doc}
	}
	src := snapshot.Source{File: name, Line: root.Line, Column: root.Column, Doc: doc, Item: -1, Stored: f.stored}
	u := &unstructured.Unstructured{Object: obj}
	if err := checkHeader(u); err != nil {
		return &InputError{File: name, Line: root.Line, Err: err}
	}
	if isList(u) {
		var list *listRef
		if ref != nil {
			list = &listRef{doc: ref}
		}
		return r.list(name, u, root, src, list, 0)
	}
	var lazy lazyObject
	if ref != nil {
		lazy = ref
	}
	r.out = append(r.out, readObject(u, src, lazy))
	return nil
}

// isList reports whether u is a list to flatten, as kubectl's FlattenListVisitor
// does: a v1 List, or a typed list (XAccessPolicyList, HTTPRouteList: the body of a
// raw API GET), a kind ending in List whose items field is a list.
func isList(u *unstructured.Unstructured) bool {
	if !strings.HasSuffix(u.GetKind(), "List") {
		return false
	}
	if u.GetAPIVersion() == "v1" && u.GetKind() == "List" {
		return true
	}
	items, found := u.Object["items"]
	if !found {
		return false
	}
	_, ok := items.([]any)
	return ok || items == nil
}

// nestedItem is the Source.Item of an item of a List inside a List: its line is its
// own, but its fields are not located (Position knows one level of items).
const nestedItem = -2

// maxListNesting bounds Lists inside Lists.
const maxListNesting = 10

// list reads the items of List u (root is its node) into r.out, flattening Lists inside
// it. The items of a typed list that have no kind or apiVersion get the list's (the API
// server leaves them out of a list's items). list, when set, decodes the items again
// from the file; items that were changed here or are nested are held as read instead.
func (r *fileReader) list(name string, u *unstructured.Unstructured, root *yaml.Node, src snapshot.Source, list *listRef, depth int) error {
	if depth > maxListNesting {
		return &InputError{File: name, Line: src.Line, Err: fmt.Errorf("Lists nested deeper than %d levels", maxListNesting)}
	}
	items, _ := u.Object["items"].([]any)
	itemNodes := listItemNodes(root)
	typed := !(u.GetAPIVersion() == "v1" && u.GetKind() == "List")
	for i, it := range items {
		m, ok := it.(map[string]any)
		isrc := src
		isrc.Item = i
		if depth > 0 {
			isrc.Item = nestedItem
		}
		var node *yaml.Node
		if i < len(itemNodes) {
			node = itemNodes[i]
			for node.Kind == yaml.AliasNode && node.Alias != nil {
				node = node.Alias
			}
			isrc.Line, isrc.Column = node.Line, node.Column
		}
		if !ok {
			return &InputError{File: name, Line: isrc.Line, Err: fmt.Errorf("items[%d] is not an object", i)}
		}
		lazy := list != nil && depth == 0
		if typed {
			if _, has := m["kind"]; !has {
				m["kind"] = strings.TrimSuffix(u.GetKind(), "List")
				lazy = false
			}
			if _, has := m["apiVersion"]; !has {
				m["apiVersion"] = u.GetAPIVersion()
				lazy = false
			}
		}
		iu := &unstructured.Unstructured{Object: m}
		if err := checkHeader(iu); err != nil {
			return &InputError{File: name, Line: isrc.Line, Err: fmt.Errorf("items[%d]: %w", i, err)}
		}
		if isList(iu) {
			if node == nil {
				node = &yaml.Node{}
			}
			if err := r.list(name, iu, node, isrc, nil, depth+1); err != nil {
				return err
			}
			continue
		}
		var lz lazyObject
		if lazy {
			lz = &itemRef{list: list, item: i}
		}
		r.out = append(r.out, readObject(iu, isrc, lz))
	}
	return nil
}

// readObject returns the RawObject of an object just read. When the object can be
// decoded again from its file (lazy is set), it is typed now and its unstructured form is
// dropped; an object whose typing fails, or that has a namespace that is not a string
// (which DefaultNamespace replaces before typing), is held as read and typed by Build, as
// every object used to be.
func readObject(u *unstructured.Unstructured, src snapshot.Source, lazy lazyObject) RawObject {
	if lazy == nil {
		return NewRawObject(u, src)
	}
	if ns, found, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "namespace"); found {
		if _, ok := ns.(string); !ok {
			return NewRawObject(u, src)
		}
	}
	id, apiVersion, kind, annotations := snapshot.IdentityOf(u), u.GetAPIVersion(), u.GetKind(), u.GetAnnotations()
	var dropped []snapshot.DroppedField
	if !src.AsStored() {
		dropped = admit(u) // in place: the object as read is decoded again from the file
	}
	t, err := snapshot.Decode(u)
	if err != nil {
		if orig := lazy.object(); orig != nil {
			u = orig // held as read, typed (and admitted) again by Build
		}
		return NewRawObject(u, src)
	}
	st := &rawState{lazy: lazy, typed: t, fresh: true, id: id, apiVersion: apiVersion, kind: kind, annotations: annotations, dropped: dropped}
	st.raw = snapshot.NewLazyRaw(snapshot.Lazy{Decode: lazy.object, Fresh: lazy.transient, Header: st.header, Annotations: st.annots})
	return RawObject{Source: src, r: st}
}

// header is the header of the object as recorded at reading (with the namespace
// DefaultNamespace gave it), for snapshot.Raw.Header while the object is not decoded.
func (st *rawState) header() snapshot.Header {
	return snapshot.Header{APIVersion: st.apiVersion, Kind: st.kind, Namespace: st.id.Namespace, Name: st.id.Name}
}

// annots returns the annotations of the object as recorded at reading, as GetAnnotations
// returns them (a copy), for snapshot.Raw.Annotations while the object is not decoded.
func (st *rawState) annots() map[string]string { return maps.Clone(st.annotations) }

func checkHeader(u *unstructured.Unstructured) error {
	if _, ok := u.Object["kind"].(string); !ok {
		return errors.New("object has no kind")
	}
	if _, ok := u.Object["apiVersion"].(string); !ok {
		return fmt.Errorf("%s has no apiVersion", u.Object["kind"])
	}
	if md, ok := u.Object["metadata"]; ok {
		if _, isMap := md.(map[string]any); !isMap {
			return errors.New("metadata is not a mapping")
		}
	}
	return nil
}

func listItemNodes(root *yaml.Node) []*yaml.Node {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "items" && root.Content[i+1].Kind == yaml.SequenceNode {
			return root.Content[i+1].Content
		}
	}
	return nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// converter turns a yaml.Node tree into the map/slice/int64/float64/bool/string values
// unstructured objects hold, refusing duplicate keys, alias bombs and deep nesting.
type converter struct {
	lim Limits
	// strings, when set, interns short strings: typed objects keep the values (and the
	// keys of label maps) of every object, and most are the same few words (API
	// versions, kinds, namespaces, enum values) over and over.
	strings map[string]string
	// shared, when set, interns the strings strings has not seen over all the files
	// read, which are parsed in parallel, each with its own strings.
	shared  *internTable
	nodes   int
	errLine int
	// alias is the outermost alias being expanded: an error inside an expansion is
	// reported where the alias is used, not deep inside the anchored value.
	alias *yaml.Node
	// expanding holds the anchored values being expanded, to refuse an alias inside its own anchor.
	expanding map[*yaml.Node]bool
}

func (c *converter) fail(n *yaml.Node, format string, args ...any) error {
	c.errLine = n.Line
	if c.alias != nil {
		c.errLine = c.alias.Line
	}
	return fmt.Errorf(format, args...)
}

func (c *converter) convert(n *yaml.Node, depth int) (any, error) {
	c.nodes++
	if c.nodes > c.lim.MaxNodes {
		return nil, c.fail(n, "document expands to more than %d nodes (YAML alias bomb?)", c.lim.MaxNodes)
	}
	if depth > c.lim.MaxDepth {
		return nil, c.fail(n, "nesting deeper than %d levels", c.lim.MaxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.convert(n.Content[0], depth)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, c.fail(n, "unknown alias %q", n.Value)
		}
		if c.expanding[n.Alias] {
			return nil, c.fail(n, "alias *%s refers to a value that contains it", n.Value)
		}
		if c.expanding == nil {
			c.expanding = map[*yaml.Node]bool{}
		}
		if c.alias == nil {
			c.alias = n
			defer func() { c.alias = nil }()
		}
		c.expanding[n.Alias] = true
		defer delete(c.expanding, n.Alias)
		return c.convert(n.Alias, depth+1)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := c.convert(e, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		explicit := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" {
				if err := c.merge(out, v, depth); err != nil {
					return nil, err
				}
				continue
			}
			if k.Kind != yaml.ScalarNode {
				return nil, c.fail(k, "mapping key is not a scalar")
			}
			if explicit[k.Value] {
				return nil, c.fail(k, "duplicate key %q", k.Value)
			}
			explicit[k.Value] = true
			cv, err := c.convert(v, depth+1)
			if err != nil {
				return nil, err
			}
			out[c.str(k.Value)] = cv // an explicit key wins over a merged one, before or after it
		}
		return out, nil
	case yaml.ScalarNode:
		return c.scalar(n)
	}
	return nil, c.fail(n, "unexpected YAML node")
}

// merge applies a YAML merge key ("<<: *anchor" or a list of anchors); explicit keys win.
func (c *converter) merge(out map[string]any, v *yaml.Node, depth int) error {
	srcs := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		srcs = v.Content
	}
	for _, s := range srcs {
		mv, err := c.convert(s, depth+1)
		if err != nil {
			return err
		}
		m, ok := mv.(map[string]any)
		if !ok {
			return c.fail(s, "merge key value is not a mapping")
		}
		for k, x := range m {
			if _, exists := out[k]; !exists { // explicit keys and earlier merges win
				out[k] = x
			}
		}
	}
	return nil
}

// maxInterned is the longest string interned: longer ones (descriptions, CEL
// expressions, certificates) are seldom repeated.
const maxInterned = 64

func (c *converter) str(s string) string {
	if c.strings == nil || len(s) > maxInterned {
		return s
	}
	if x, ok := c.strings[s]; ok {
		return x
	}
	if c.shared != nil {
		s = c.shared.intern(s)
	}
	c.strings[s] = s
	return s
}

func (c *converter) scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, c.fail(n, "%v", err)
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, c.fail(n, "invalid integer %q", n.Value)
		}
		return f, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, c.fail(n, "%v", err)
		}
		return f, nil
	case "!!str", "!!timestamp", "!!binary":
		return c.str(n.Value), nil
	}
	return c.str(n.Value), nil
}

// FilePositions resolves field paths to positions by parsing the object's document again
// on demand, so loading pays nothing for positions that are never asked for.
type FilePositions struct {
	mu    sync.Mutex
	files map[string]*keptFile
	// recent holds the node trees of the documents asked for last: findings are
	// resolved object by object, so the same document is asked for several times in a
	// row, and keeping every document's tree would cost many times the input's size.
	recent [8]posDoc
	next   int
	// whole holds every document of a file parsed as a stream: for documents that
	// cannot be parsed alone, and for files this reader did not read.
	whole map[string][]*yaml.Node
}

// posDoc is the node tree of one document; its lines are shift less than in the file.
type posDoc struct {
	file  *keptFile
	doc   int
	root  *yaml.Node
	shift int
}

func newFilePositions() *FilePositions {
	return &FilePositions{files: map[string]*keptFile{}, whole: map[string][]*yaml.Node{}}
}

func (p *FilePositions) keep(f *keptFile) { p.files[f.name] = f }

// Position implements snapshot.PositionResolver. A nil *FilePositions knows no position.
func (p *FilePositions) Position(src snapshot.Source, fieldPath string) (int, int, bool) {
	if p == nil {
		return 0, 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n, shift := p.document(src)
	if n == nil {
		return 0, 0, false
	}
	if src.Item == nestedItem {
		return 0, 0, false
	}
	if src.Item >= 0 {
		items := listItemNodes(n)
		if src.Item >= len(items) {
			return 0, 0, false
		}
		n = items[src.Item]
	}
	best := n
	for _, seg := range splitPath(fieldPath) {
		at, next := step(n, seg)
		if next == nil {
			break // the deepest field that exists is the best answer
		}
		best, n = at, next
	}
	return best.Line + shift, best.Column, true
}

// document returns the root node of the source's document and how many lines its
// positions are short of the file's.
func (p *FilePositions) document(src snapshot.Source) (*yaml.Node, int) {
	f := p.files[src.File]
	if f != nil && src.Doc >= 0 && src.Doc < len(f.docs) && f.docs[src.Doc].ok {
		for _, r := range p.recent {
			if r.file == f && r.doc == src.Doc && r.root != nil {
				return r.root, r.shift
			}
		}
		d := f.docs[src.Doc]
		if root, ok := f.parseAlone(d); ok {
			p.recent[p.next] = posDoc{file: f, doc: src.Doc, root: root, shift: d.shift()}
			p.next = (p.next + 1) % len(p.recent)
			return root, d.shift()
		}
	}
	docs, ok := p.whole[src.File]
	if !ok {
		var data []byte
		if f != nil {
			data = f.data
		} else {
			var err error
			if data, err = os.ReadFile(src.File); err != nil {
				p.whole[src.File] = nil
				return nil, 0
			}
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var n yaml.Node
			if err := dec.Decode(&n); err != nil {
				break
			}
			docs = append(docs, &n)
		}
		p.whole[src.File] = docs
	}
	if src.Doc < 0 || src.Doc >= len(docs) {
		return nil, 0
	}
	n := docs[src.Doc]
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	return n, 0
}

// keptFile is the content of a file as read, kept to decode its objects again (and to
// resolve positions) without reading the file again: what was read is what is decoded.
type keptFile struct {
	name string
	data []byte
	lim  Limits
	// lazy says its documents can be parsed alone (documentsSplittable).
	lazy bool
	// stored says the file is a snapshot of a cluster (it starts with SnapshotHeader).
	stored bool
	// docs describes each document of the file, by index.
	docs []docStart
}

// docStart locates a document in its file's data, and records what the document's root
// looked like when read, to check that parsing it alone finds the same document.
type docStart struct {
	offset int   // of the first byte of the line where the document starts
	line   int32 // that line (1-based; 0 for the first document, which starts the data)
	// rootLine and rootColumn locate the root node; nodes is the converter's node count.
	rootLine, rootColumn, nodes int32
	// ok is set when the document holds objects and can be parsed alone.
	ok bool
}

func (d docStart) shift() int {
	if d.line == 0 {
		return 0
	}
	return int(d.line) - 1
}

func (f *keptFile) addDoc(doc int, d docStart) {
	for len(f.docs) < doc {
		f.docs = append(f.docs, docStart{})
	}
	f.docs = append(f.docs[:doc], d)
}

// documentsSplittable reports whether a document of data parses the same alone, from
// the start of the line of its "---" to the end of the data, as in the stream, with
// lines counted at each newline. It is false for what could make either differ:
// directives (a %TAG of the stream's directives could apply), line breaks other than
// LF and CRLF (YAML also breaks lines at a lone CR, NEL, LS and PS), and a byte order
// mark after the start. Their objects are held as read instead.
func documentsSplittable(data []byte) bool {
	if len(data) > 0 && data[0] == '%' || bytes.Contains(data, []byte("\n%")) {
		return false
	}
	for _, b := range [][]byte{[]byte("\u0085"), []byte("\u2028"), []byte("\u2029")} {
		if bytes.Contains(data, b) {
			return false
		}
	}
	bom := []byte("\uFEFF")
	if bytes.Contains(bytes.TrimPrefix(data, bom), bom) {
		return false
	}
	for i := bytes.IndexByte(data, '\r'); i >= 0; {
		if i+1 >= len(data) || data[i+1] != '\n' {
			return false
		}
		j := bytes.IndexByte(data[i+1:], '\r')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return true
}

// parseAlone parses the document alone and returns its root node (lines short by
// d.shift()), or false when it does not find the document that was read there.
func (f *keptFile) parseAlone(d docStart) (*yaml.Node, bool) {
	var n yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(f.data[d.offset:])).Decode(&n); err != nil {
		return nil, false
	}
	root := &n
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, false
		}
		root = root.Content[0]
	}
	if root.Line+d.shift() != int(d.rootLine) || root.Column != int(d.rootColumn) {
		return nil, false
	}
	return root, true
}

// decode converts document doc again, as it was converted when read.
func (f *keptFile) decode(doc int) map[string]any {
	if d := f.docs[doc]; d.ok {
		if root, ok := f.parseAlone(d); ok {
			c := converter{lim: f.lim}
			v, err := c.convert(root, 0)
			if m, isMap := v.(map[string]any); err == nil && isMap && c.nodes == int(d.nodes) {
				return m
			}
		}
	}
	// Parse the stream up to the document, as when it was read. The bytes are those that
	// were read and decoded then, kept unchanged in memory, and decoding is deterministic:
	// a failure here is a bug in agpol, and Object has no error to return, hence the panics
	// (recovered by the command with a bug-report hint).
	dec := yaml.NewDecoder(bytes.NewReader(f.data))
	for i := 0; ; i++ {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			panic(fmt.Sprintf("cluster: document %d of %s no longer decodes: %v", doc, f.name, err))
		}
		if i < doc {
			continue
		}
		root := &n
		if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
			root = root.Content[0]
		}
		c := converter{lim: f.lim}
		v, err := c.convert(root, 0)
		m, isMap := v.(map[string]any)
		if err != nil || !isMap {
			panic(fmt.Sprintf("cluster: document %d of %s no longer decodes: %v", doc, f.name, err))
		}
		return m
	}
}

// lineIndex finds the offsets of increasing line numbers in one pass over data.
type lineIndex struct {
	data []byte
	line int // the line that starts at off
	off  int
}

func (x *lineIndex) offset(line int) int {
	for x.line < line {
		i := bytes.IndexByte(x.data[x.off:], '\n')
		if i < 0 {
			break
		}
		x.off += i + 1
		x.line++
	}
	return x.off
}

// lazyObject rebuilds an object read from a file.
type lazyObject interface {
	object() *unstructured.Unstructured
	// transient is object() for a caller that drops it soon; nil when the object is
	// better kept (an item of a List, whose whole List is decoded at once).
	transient() *unstructured.Unstructured
	// setNamespace records the namespace DefaultNamespace gave the object.
	setNamespace(ns string)
}

// docRef is an object that is a whole document.
type docRef struct {
	file *keptFile
	doc  int
	ns   string
}

func (d *docRef) object() *unstructured.Unstructured {
	return withNamespace(d.file.decode(d.doc), d.ns)
}

// withNamespace wraps an object decoded again, with the namespace DefaultNamespace gave
// it when it was read ("" for none).
func withNamespace(obj map[string]any, ns string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: obj}
	if ns != "" {
		u.SetNamespace(ns)
	}
	return u
}

func (d *docRef) transient() *unstructured.Unstructured { return d.object() }
func (d *docRef) setNamespace(ns string)                { d.ns = ns }

// listRef is a v1 List document, decoded once for all its items.
type listRef struct {
	doc   *docRef
	once  sync.Once
	items []any
}

func (l *listRef) item(i int) map[string]any {
	l.once.Do(func() {
		l.items, _ = l.doc.file.decode(l.doc.doc)["items"].([]any)
	})
	return l.items[i].(map[string]any)
}

// itemRef is an object that is an item of a List.
type itemRef struct {
	list *listRef
	item int
	ns   string
}

func (it *itemRef) object() *unstructured.Unstructured {
	return withNamespace(it.list.item(it.item), it.ns)
}

func (it *itemRef) transient() *unstructured.Unstructured { return nil }
func (it *itemRef) setNamespace(ns string)                { it.ns = ns }

// splitPath splits "spec.rules[2].name" into ["spec", "rules", "[2]", "name"].
func splitPath(p string) []string {
	var out []string
	for _, part := range strings.Split(p, ".") {
		for part != "" {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				out = append(out, part)
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.IndexByte(part[i:], ']')
			if j < 0 {
				out = append(out, part[i:])
				break
			}
			out = append(out, part[i:i+j+1])
			part = part[i+j+1:]
		}
	}
	return out
}

// step follows one path segment from n. It returns the node to report for the
// segment (the key of a mapping field, whatever its value; the item itself for a
// list index, whose line is that of its "- ") and the node to continue from.
func step(n *yaml.Node, seg string) (at, next *yaml.Node) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if strings.HasPrefix(seg, "[") {
		idx, err := strconv.Atoi(strings.Trim(seg, "[]"))
		if err != nil || n.Kind != yaml.SequenceNode || idx < 0 || idx >= len(n.Content) {
			return nil, nil
		}
		return n.Content[idx], n.Content[idx]
	}
	if n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == seg {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

// internTable interns strings across the files parsed in parallel. A plain map under a
// mutex: each file's own table (converter.strings) answers most lookups, so this one is
// asked once per distinct string of a file, and holds fewer bytes per string than a
// sync.Map.
type internTable struct {
	mu sync.Mutex
	m  map[string]string
}

func (t *internTable) intern(s string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if x, ok := t.m[s]; ok {
		return x
	}
	t.m[s] = s
	return s
}
