package lint

import (
	"fmt"
	"path"
	"strings"

	"github.com/agpol/agpol/internal/config"
	"github.com/agpol/agpol/internal/snapshot"
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
	config   []config.Suppression
	cfgPath  string
	issues   []Finding
}

func newSuppressor(ctx *Context, cfg *config.File) *suppressor {
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
			src := snapshot.Source{File: cfg.Path, Line: c.Line, Column: 3}
			base := Finding{Source: src, Object: ObjectRef{Kind: "Config", Name: cfg.Path}, FieldPath: "suppressions"}
			if strings.TrimSpace(c.Reason) == "" {
				f := base
				f.Code = "AGP001"
				f.Message = fmt.Sprintf("suppression of %s has no reason, so it does not apply", c.Code)
				s.issues = append(s.issues, f)
				continue
			}
			c.Codes = s.knownCodes(c.Codes, base)
			if !c.ExpiresAt.IsZero() && !ctx.Now.Before(c.ExpiresAt) {
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
		if !codeMatches(c.Codes, f) {
			continue
		}
		if c.Object != "" {
			if ok, _ := path.Match(strings.ToLower(c.Object), key); !ok {
				continue
			}
		}
		return &Suppression{Kind: SuppressedByConfig, Reason: c.Reason, Expires: c.Expires,
			Source: snapshot.Source{File: s.cfgPath, Line: c.Line}}
	}
	return nil
}
