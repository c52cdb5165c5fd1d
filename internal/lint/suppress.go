package lint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// SuppressAnnotation is the object annotation that suppresses findings on that object.
//
// Its value is one or more entries separated by semicolons or new lines; each entry is
// a comma-separated list of check codes or categories, a colon, and the reason:
//
//	agpol.dev/suppress: "AGP203: the Gateway lives in the platform repository"
//	agpol.dev/suppress: |
//	  AGP402,AGP403: L7 fields kept for when the controller enforces them
//	  allow-all: public read-only tools
//
// An entry without a reason does not apply and is reported (AGP001).
const SuppressAnnotation = "agpol.dev/suppress"

// Suppression says why a finding is not counted.
type Suppression struct {
	// Kind is "annotation" (on the object) or "config" (the .agpol.yaml file).
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
	// Expires is the config entry's expiry date (YYYY-MM-DD), if any.
	Expires string `json:"expires,omitempty"`
	// Source is where the suppression is written.
	Source snapshot.Source `json:"source"`
}

// Suppression kinds.
const (
	SuppressedByAnnotation = "annotation"
	SuppressedByConfig     = "config"
)

// DefaultConfigFile is read when present and --config is not given.
const DefaultConfigFile = ".agpol.yaml"

// Config is the lint configuration file.
type Config struct {
	// Path is the file the config was read from.
	Path         string
	Suppressions []ConfigSuppression
	// DataPlanes maps GatewayClass names to the data plane that serves their Gateways
	// (topology.DataPlanes), for classes whose controller agpol does not know or that the
	// input lacks. Every command reads it, not only lint.
	DataPlanes map[string]string
}

// ConfigSuppression is one suppression of the config file.
type ConfigSuppression struct {
	// Code is a check code or category, or several comma-separated.
	Code string `yaml:"code"`
	// Object is a glob over "Kind/namespace/name" ("Kind/name" for cluster-scoped
	// objects), matched case-insensitively with path.Match ('*' stops at '/'). Empty
	// matches every object.
	Object string `yaml:"object"`
	Reason string `yaml:"reason"`
	// Expires is a date (YYYY-MM-DD); from that day on (UTC) the suppression no longer applies.
	Expires string `yaml:"expires"`

	line    int
	expires time.Time
	codes   []string
}

type configFile struct {
	Suppressions []ConfigSuppression `yaml:"suppressions"`
	DataPlanes   map[string]string   `yaml:"dataPlanes"`
}

// LoadConfig reads a config file. A missing file is an error (the caller decides
// whether the file was optional); malformed YAML, an unknown key, a bad date or
// a bad glob is an error naming file:line.
func LoadConfig(file string) (*Config, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("reading lint config %s: %w", file, err)
	}
	return ParseConfig(file, data)
}

// ParseConfig parses the contents of a config file.
func ParseConfig(file string, data []byte) (*Config, error) {
	cfg := &Config{Path: file}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var cf configFile
	if err := dec.Decode(&cf); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	for class, plane := range cf.DataPlanes {
		if _, err := topology.ParseDataPlane(plane); err != nil {
			return nil, fmt.Errorf("%s:%d: dataPlanes: GatewayClass %s: %v", file, dataPlaneLine(data, class), class, err)
		}
	}
	cfg.DataPlanes = cf.DataPlanes
	lines := suppressionLines(data)
	for i, s := range cf.Suppressions {
		if i < len(lines) {
			s.line = lines[i]
		}
		at := fmt.Sprintf("%s:%d", file, s.line)
		if strings.TrimSpace(s.Code) == "" {
			return nil, fmt.Errorf("%s: suppression has no code", at)
		}
		for _, c := range strings.Split(s.Code, ",") {
			if c = strings.TrimSpace(c); c != "" {
				s.codes = append(s.codes, c)
			}
		}
		if s.Object != "" {
			if _, err := path.Match(strings.ToLower(s.Object), ""); err != nil {
				return nil, fmt.Errorf("%s: object %q: %w", at, s.Object, err)
			}
		}
		if s.Expires != "" {
			t, err := time.Parse(time.DateOnly, s.Expires)
			if err != nil {
				return nil, fmt.Errorf("%s: expires %q is not a date like 2027-01-01", at, s.Expires)
			}
			s.expires = t
		}
		cfg.Suppressions = append(cfg.Suppressions, s)
	}
	return cfg, nil
}

// suppressionLines returns the line of each item of the top-level suppressions list.
func suppressionLines(data []byte) []int {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "suppressions" && root.Content[i+1].Kind == yaml.SequenceNode {
			var out []int
			for _, it := range root.Content[i+1].Content {
				out = append(out, it.Line)
			}
			return out
		}
	}
	return nil
}

// annotationSuppression is one entry of a suppress annotation.
type annotationSuppression struct {
	codes  []string
	reason string
	source snapshot.Source
}

// suppressor decides which findings are suppressed, and collects the problems of
// the suppressions themselves as findings.
type suppressor struct {
	byObject map[string][]annotationSuppression // ObjectRef.Key() -> entries
	config   []ConfigSuppression
	cfgPath  string
	issues   []Finding
}

func newSuppressor(ctx *Context, cfg *Config) *suppressor {
	s := &suppressor{byObject: map[string][]annotationSuppression{}}
	for _, o := range ctx.Origins() {
		val, ok := o.Annotations()[SuppressAnnotation]
		if !ok {
			continue
		}
		s.parseAnnotation(ctx, o, val)
	}
	if cfg != nil {
		s.cfgPath = cfg.Path
		for _, c := range cfg.Suppressions {
			src := snapshot.Source{File: cfg.Path, Line: c.line, Column: 3}
			base := Finding{Source: src, Object: ObjectRef{Kind: "Config", Name: cfg.Path}, FieldPath: "suppressions"}
			if strings.TrimSpace(c.Reason) == "" {
				f := base
				f.Code = "AGP001"
				f.Message = fmt.Sprintf("suppression of %s has no reason, so it does not apply", c.Code)
				s.issues = append(s.issues, f)
				continue
			}
			c.codes = s.knownCodes(c.codes, base)
			if !c.expires.IsZero() && !ctx.Now.Before(c.expires) {
				f := base
				f.Code = "AGP003"
				f.Message = fmt.Sprintf("suppression of %s%s expired on %s and no longer applies (reason was: %s)",
					c.Code, objectClause(c.Object), c.Expires, c.Reason)
				s.issues = append(s.issues, f)
				continue
			}
			s.config = append(s.config, c)
		}
	}
	return s
}

func objectClause(glob string) string {
	if glob == "" {
		return ""
	}
	return " for " + glob
}

func (s *suppressor) parseAnnotation(ctx *Context, o snapshot.Origin, val string) {
	fieldPath := "metadata.annotations[" + SuppressAnnotation + "]"
	base := ctx.Blame(o, fieldPath)
	entries := strings.FieldsFunc(val, func(r rune) bool { return r == ';' || r == '\n' })
	if len(entries) == 0 {
		f := base
		f.Code = "AGP001"
		f.Message = fmt.Sprintf("annotation %s is empty: name the codes and a reason, e.g. %q", SuppressAnnotation, "AGP203: defined in another repository")
		s.issues = append(s.issues, f)
		return
	}
	key := base.Object.Key()
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		codesPart, reason, found := strings.Cut(e, ":")
		reason = strings.TrimSpace(reason)
		var codes []string
		for _, c := range strings.Split(codesPart, ",") {
			if c = strings.TrimSpace(c); c != "" {
				codes = append(codes, c)
			}
		}
		if !found || reason == "" {
			f := base
			f.Code = "AGP001"
			f.Message = fmt.Sprintf("suppression %q has no reason, so it does not apply: write it as \"%s: why\"", e, strings.TrimSpace(codesPart))
			s.issues = append(s.issues, f)
			continue
		}
		codes = s.knownCodes(codes, base)
		if len(codes) == 0 {
			continue
		}
		s.byObject[key] = append(s.byObject[key], annotationSuppression{codes: codes, reason: reason, source: base.Source})
	}
}

// knownCodes normalises codes and categories, reporting (AGP002) the ones no check has.
func (s *suppressor) knownCodes(codes []string, base Finding) []string {
	var out []string
	for _, c := range codes {
		k, err := parseCodeOrCategory(c)
		if err != nil {
			f := base
			f.Code = "AGP002"
			f.Message = fmt.Sprintf("suppression names %q, which is neither a check code nor a category; it suppresses nothing", c)
			s.issues = append(s.issues, f)
			continue
		}
		out = append(out, k)
	}
	return out
}

func codeMatches(codes []string, f *Finding) bool {
	for _, c := range codes {
		if c == f.Code || c == string(f.Category) {
			return true
		}
	}
	return false
}

// suppress returns the suppression that applies to f, or nil. Findings about lint's
// own configuration are never suppressed.
func (s *suppressor) suppress(f *Finding) *Suppression {
	if f.Category == CategoryConfig {
		return nil
	}
	for _, a := range s.byObject[f.Object.Key()] {
		if codeMatches(a.codes, f) {
			return &Suppression{Kind: SuppressedByAnnotation, Reason: a.reason, Source: a.source}
		}
	}
	key := strings.ToLower(f.Object.Key())
	for _, c := range s.config {
		if !codeMatches(c.codes, f) {
			continue
		}
		if c.Object != "" {
			if ok, _ := path.Match(strings.ToLower(c.Object), key); !ok {
				continue
			}
		}
		return &Suppression{Kind: SuppressedByConfig, Reason: c.Reason, Expires: c.Expires,
			Source: snapshot.Source{File: s.cfgPath, Line: c.line}}
	}
	return nil
}

// dataPlaneLine returns the line of a class's entry under the top-level dataPlanes
// mapping (0 when not found).
func dataPlaneLine(data []byte, class string) int {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return 0
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "dataPlanes" {
			continue
		}
		m := root.Content[i+1]
		for j := 0; j+1 < len(m.Content); j += 2 {
			if m.Content[j].Value == class {
				return m.Content[j+1].Line
			}
		}
	}
	return 0
}
