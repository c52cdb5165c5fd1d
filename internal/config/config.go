// Package config owns agpol's configuration file, .agpol.yaml: where it is looked for,
// the bounds it is read within (a regular file of at most MaxBytes), and its contents
// checked for shape with file:line errors: lint's suppressions and the GatewayClass →
// data plane mapping every command reads. What the entries mean is decided where they
// are used (lint applies suppressions; topology maps classes to data planes).
package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/agpol/agpol/internal/topology"
)

// DefaultFile is read from the current directory when present and --config is not given.
const DefaultFile = ".agpol.yaml"

// MaxBytes bounds the config file: a larger file is refused unread (docs/limits.md).
const MaxBytes = 1 << 20

// File is the configuration file.
type File struct {
	// Path is the file the config was read from.
	Path         string
	Suppressions []Suppression
	// DataPlanes maps GatewayClass names to the data plane that serves their Gateways
	// (topology.DataPlanes), for classes whose controller agpol does not know or that the
	// input lacks. Every command reads it, not only lint.
	DataPlanes map[string]string
}

// Suppression is one entry of the suppressions list.
type Suppression struct {
	// Code is a check code or category, or several comma-separated.
	Code string `yaml:"code"`
	// Object is a glob over "Kind/namespace/name" ("Kind/name" for cluster-scoped
	// objects), matched case-insensitively with path.Match ('*' stops at '/'). Empty
	// matches every object.
	Object string `yaml:"object"`
	Reason string `yaml:"reason"`
	// Expires is a date (YYYY-MM-DD); from that day on (UTC) the suppression no longer applies.
	Expires string `yaml:"expires"`

	// Line is the line of the entry in the file.
	Line int `yaml:"-"`
	// ExpiresAt is Expires parsed (zero when there is none).
	ExpiresAt time.Time `yaml:"-"`
	// Codes are the comma-separated codes or categories of Code, trimmed.
	Codes []string `yaml:"-"`
}

// Load reads a config file. A missing file is an error (the caller decides whether
// the file was optional, see LoadIfPresent); a file that is not regular (a device, a
// FIFO, a symlink to one), a file over MaxBytes, malformed YAML, an unknown key, a bad
// date or a bad glob is an error naming the file (and line).
func Load(file string) (*File, error) {
	data, err := read(file)
	if err != nil {
		return nil, err
	}
	return Parse(file, data)
}

// LoadIfPresent is Load, except that a missing file is no config (nil, nil).
func LoadIfPresent(file string) (*File, error) {
	if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return Load(file)
}

// read reads a regular file of at most MaxBytes, checked on the opened file so that a
// symlink to /dev/zero or a FIFO is never read.
func read(file string) ([]byte, error) {
	fail := func(err error) error {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("reading config %s: %w", file, err)
	}
	// Checked before opening (opening a FIFO blocks) and again on the opened file.
	check := func(st fs.FileInfo) error {
		if !st.Mode().IsRegular() {
			return fail(fmt.Errorf("not a regular file (%s)", kind(st.Mode())))
		}
		if st.Size() > MaxBytes {
			return fail(fmt.Errorf("larger than %d MiB", MaxBytes>>20))
		}
		return nil
	}
	st, err := os.Stat(file)
	if err != nil {
		return nil, fail(err)
	}
	if err := check(st); err != nil {
		return nil, err
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fail(err)
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, fail(err)
	}
	if err := check(st); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, fail(err)
	}
	if len(data) > MaxBytes { // grew since Stat
		return nil, fail(fmt.Errorf("larger than %d MiB", MaxBytes>>20))
	}
	return data, nil
}

func kind(m fs.FileMode) string {
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

// Parse parses the contents of a config file, in time linear in its size: the file is
// parsed once as a node tree and walked (yaml.v3's decoding into maps and structs checks
// duplicate keys pairwise, quadratic in the keys of one mapping).
func Parse(file string, data []byte) (*File, error) {
	cfg := &File{Path: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return cfg, nil
	}
	root := doc.Content[0]
	err := walkMapping(file, root, func(key string, val *yaml.Node) error {
		switch key {
		case "suppressions":
			return parseSuppressions(file, val, cfg)
		case "dataPlanes":
			return parseDataPlanes(file, val, cfg)
		}
		return fmt.Errorf("%s:%d: field %s not found in the config (suppressions, dataPlanes)", file, val.Line, key)
	})
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

// walkMapping calls f for each key of a mapping, refusing a key given twice.
func walkMapping(file string, n *yaml.Node, f func(key string, val *yaml.Node) error) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: want a mapping", file, n.Line)
	}
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key, err := scalar(file, k)
		if err != nil {
			return err
		}
		if at, dup := seen[key]; dup {
			return fmt.Errorf("%s:%d: mapping key %q already defined at line %d", file, k.Line, key, at)
		}
		seen[key] = k.Line
		if err := f(key, v); err != nil {
			return err
		}
	}
	return nil
}

// scalar decodes a scalar as a string (tags resolved as yaml.v3 does).
func scalar(file string, n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("%s:%d: want a string", file, n.Line)
	}
	var s string
	if err := n.Decode(&s); err != nil {
		return "", fmt.Errorf("%s:%d: %s", file, n.Line, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return s, nil
}

func parseDataPlanes(file string, n *yaml.Node, cfg *File) error {
	cfg.DataPlanes = map[string]string{}
	return walkMapping(file, n, func(class string, val *yaml.Node) error {
		plane, err := scalar(file, val)
		if err != nil {
			return err
		}
		if _, err := topology.ParseDataPlane(plane); err != nil {
			return fmt.Errorf("%s:%d: dataPlanes: GatewayClass %s: %v", file, val.Line, class, err)
		}
		cfg.DataPlanes[class] = plane
		return nil
	})
}

func parseSuppressions(file string, n *yaml.Node, cfg *File) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("%s:%d: suppressions: want a list", file, n.Line)
	}
	for _, item := range n.Content {
		s := Suppression{Line: item.Line}
		err := walkMapping(file, item, func(key string, val *yaml.Node) error {
			var field *string
			switch key {
			case "code":
				field = &s.Code
			case "object":
				field = &s.Object
			case "reason":
				field = &s.Reason
			case "expires":
				field = &s.Expires
			default:
				return fmt.Errorf("%s:%d: field %s not found in a suppression (code, object, reason, expires)", file, val.Line, key)
			}
			v, err := scalar(file, val)
			*field = v
			return err
		})
		if err != nil {
			return err
		}
		if err := s.check(file); err != nil {
			return err
		}
		cfg.Suppressions = append(cfg.Suppressions, s)
	}
	return nil
}

// check validates one suppression and fills its parsed fields.
func (s *Suppression) check(file string) error {
	at := fmt.Sprintf("%s:%d", file, s.Line)
	if strings.TrimSpace(s.Code) == "" {
		return fmt.Errorf("%s: suppression has no code", at)
	}
	for _, c := range strings.Split(s.Code, ",") {
		if c = strings.TrimSpace(c); c != "" {
			s.Codes = append(s.Codes, c)
		}
	}
	if s.Object != "" {
		if _, err := path.Match(strings.ToLower(s.Object), ""); err != nil {
			return fmt.Errorf("%s: object %q: %w", at, s.Object, err)
		}
	}
	if s.Expires != "" {
		t, err := time.Parse(time.DateOnly, s.Expires)
		if err != nil {
			return fmt.Errorf("%s: expires %q is not a date like 2027-01-01", at, s.Expires)
		}
		s.ExpiresAt = t
	}
	return nil
}
