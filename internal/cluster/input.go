// Reading the named files, directories and stdin within Limits, and parsing them in parallel.

package cluster

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agpol/agpol/internal/parallel"
	"github.com/agpol/agpol/internal/yamlnode"
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
	MaxAliasNodes int   // YAML nodes per document that aliases add (see yamlnode.Limits)
	MaxDepth      int   // nesting depth
	MaxTotalBytes int64 // all files together
}

// DefaultLimits are generous for real manifests and refuse bombs.
var DefaultLimits = Limits{
	MaxFileBytes:  64 << 20,
	MaxDocuments:  200000,
	MaxAliasNodes: yamlnode.DefaultLimits.MaxAliasNodes, // the same bounds as request files
	MaxDepth:      yamlnode.DefaultLimits.MaxDepth,
	MaxTotalBytes: 512 << 20,
}

// node returns the bounds of one document.
func (l Limits) node() yamlnode.Limits {
	return yamlnode.Limits{MaxAliasNodes: l.MaxAliasNodes, MaxDepth: l.MaxDepth}
}

// errorLineOf returns the line a yamlnode error names (0 for another error).
func errorLineOf(err error) int {
	var e *yamlnode.Error
	if errors.As(err, &e) {
		return e.Line
	}
	return 0
}

// FileOptions says which files to read.
type FileOptions struct {
	Filenames []string
	Recursive bool
	Stdin     io.Reader // used for "-"; os.Stdin when nil
	Limits    *Limits
	// Inspect, when set, is called during the parallel read on each object read from a
	// file (not a snapshot of a cluster) that is typed at reading, with the object as
	// read, namespace defaulted to DefaultNamespace as DefaultNamespace will. It must
	// not change the object (its maps are the object's, admitted in place next): it
	// copies what it would change. What it returns is kept with the object
	// (snapshot.Origin.Inspected), so that a later stage (lint's schema validation)
	// need not decode the object again. It must be safe for concurrent use.
	Inspect          func(u *unstructured.Unstructured) any
	DefaultNamespace string
	// Shared, when set and Inspect is not, takes the objects of a file that another load
	// with Shared read with the same bytes at the same path from there instead of
	// parsing it again, and keeps this load's files for the next (SharedFiles).
	Shared *SharedFiles
	// Admit names the kinds whose objects are admitted (AdmitKinds); nil admits every
	// kind. The objects of other kinds are typed as written.
	Admit AdmitKinds
	// Read, when set, is told the bytes read before they are parsed: the files' sizes,
	// without those taken from Shared (agpol's memory limit follows them).
	Read func(bytes int64)
}

// ReadFiles reads every object of the named files, directories and "-" in order.
// It stops at the first malformed document with an *InputError.
//
// Files are read one after the other, in order, and parsed in parallel (parallel.For);
// the objects, and the error reported, are those of parsing each file after the
// previous one: the first error in file order, the document limit counted over the
// files in order, and a reading error only when every file read before it parsed.
func ReadFiles(opts FileOptions) ([]RawObject, *FilePositions, error) {
	return readFiles(opts, defaultUnitBytes)
}

// readFiles is ReadFiles parsing the parts of a file in parallel (splitFile) in parts of
// about unitBytes; 0 parses each file as one stream.
func readFiles(opts FileOptions, unitBytes int) ([]RawObject, *FilePositions, error) {
	lim := DefaultLimits
	if opts.Limits != nil {
		lim = *opts.Limits
	}
	type input struct {
		name string
		data []byte
		// key names the file for opts.Shared ("" for stdin).
		key string
	}
	var (
		inputs []input
		total  int64
		// stop is what ended reading early, reported if the files read before it parse.
		stop error
	)
	add := func(name string, data []byte, key string) bool {
		total += int64(len(data))
		if total > lim.MaxTotalBytes {
			stop = &InputError{File: name, Err: fmt.Errorf("input is larger than %s in all", byteSize(lim.MaxTotalBytes))}
			return false
		}
		inputs = append(inputs, input{name, data, key})
		return true
	}
read:
	for arg, name := range opts.Filenames {
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
			if !add("<stdin>", data, "") {
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
			if !add(f, data, sharedKey(arg, relativeTo(name, f))) {
				break read
			}
		}
	}
	var insp *inspection
	if opts.Inspect != nil {
		insp = &inspection{fn: opts.Inspect, namespace: opts.DefaultNamespace}
	}
	parsed := make([]*fileReader, len(inputs))
	sums := make([][sha256.Size]byte, len(inputs))
	share := opts.Shared
	if insp != nil || opts.Admit != nil {
		share = nil // what Inspect returned, or what Admit admitted, for another load is not this load's
	}
	if share != nil {
		parallel.For(len(inputs), func(i int) {
			if inputs[i].key == "" {
				return
			}
			sums[i] = sha256.Sum256(inputs[i].data)
			if f := share.lookup(inputs[i].key, sums[i], opts.DefaultNamespace); f != nil {
				parsed[i] = &fileReader{file: f.file, docs: f.docs, out: f.readAs(inputs[i].name)}
			}
		})
	}
	if opts.Read != nil {
		fresh := int64(0)
		for i, in := range inputs {
			if parsed[i] == nil {
				fresh += int64(len(in.data))
			}
		}
		opts.Read(fresh)
	}
	shared := &internTable{m: map[string]string{}}
	parallel.For(len(inputs), func(i int) {
		if parsed[i] != nil { // taken from share
			return
		}
		r := &fileReader{lim: lim, shared: shared, inspect: insp, admit: opts.Admit, unitBytes: unitBytes}
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
		positions.keepAs(inputs[i].name, r.file)
		out = append(out, r.out...)
		if share == nil || inputs[i].key == "" {
			parsed[i] = nil
		}
	}
	if stop != nil {
		return nil, nil, stop
	}
	// Only a load that succeeds shares its files.
	for i, r := range parsed {
		if r != nil && r.file.name == inputs[i].name { // parsed here, not shared
			share.record(inputs[i].key, &sharedFile{sum: sums[i], namespace: opts.DefaultNamespace, file: r.file, objs: r.out, docs: r.docs})
		}
	}
	return out, positions, nil
}

// relativeTo returns the path of file f below argument arg ("" for arg itself).
func relativeTo(arg, f string) string {
	if f == arg {
		return ""
	}
	if rel, err := filepath.Rel(arg, f); err == nil {
		return rel
	}
	return f
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
