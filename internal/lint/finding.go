package lint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// Severity is how bad a finding is: info, warning or error.
type Severity string

// Severities, from least to most severe.
const (
	SeverityInfo    Severity = "info"
	SeverityWarning Severity = "warning"
	SeverityError   Severity = "error"
)

// rank orders severities; unknown severities rank below info.
func (s Severity) rank() int {
	switch s {
	case SeverityInfo:
		return 1
	case SeverityWarning:
		return 2
	case SeverityError:
		return 3
	}
	return 0
}

// AtLeast reports whether s is at least as severe as t.
func (s Severity) AtLeast(t Severity) bool { return s.rank() >= t.rank() && t.rank() > 0 }

// Threshold is the --fail-on level: a severity, or none to never fail.
type Threshold string

// ThresholdNone never fails.
const ThresholdNone Threshold = "none"

// ParseThreshold parses error|warning|info|none.
func ParseThreshold(s string) (Threshold, error) {
	switch t := Threshold(strings.ToLower(s)); t {
	case Threshold(SeverityError), Threshold(SeverityWarning), Threshold(SeverityInfo), ThresholdNone:
		return t, nil
	}
	return "", fmt.Errorf("unknown --fail-on level %q: use error, warning, info or none", s)
}

// Reached reports whether a finding of severity s reaches the threshold.
func (t Threshold) Reached(s Severity) bool {
	if t == ThresholdNone {
		return false
	}
	return s.AtLeast(Severity(t))
}

// Category groups checks; --only and --skip accept category names.
type Category string

// Categories.
const (
	CategoryConfig     Category = "config"     // lint's own configuration: suppressions
	CategorySchema     Category = "schema"     // what the API server would reject or drop
	CategoryReferences Category = "references" // references to objects that do not exist or are not supported
	CategoryAdmission  Category = "admission"  // policies the controller rejects
	CategoryAllowAll   Category = "allow-all"  // looks restrictive, lets more through
	CategoryLoss       Category = "loss"       // silently lost or denied
	CategoryAmbiguity  Category = "ambiguity"  // means different things in different places
)

// Categories lists every category in code order.
var Categories = []Category{CategoryConfig, CategorySchema, CategoryReferences, CategoryAdmission,
	CategoryAllowAll, CategoryLoss, CategoryAmbiguity}

// ObjectRef names the object a finding blames.
type ObjectRef struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// String is "Kind ns/name" ("Kind name" for cluster-scoped objects).
func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// Key is "Kind/ns/name" ("Kind/name" for cluster-scoped objects), the form
// suppression globs match.
func (r ObjectRef) Key() string {
	if r.Namespace == "" {
		return r.Kind + "/" + r.Name
	}
	return r.Kind + "/" + r.Namespace + "/" + r.Name
}

// Finding is one problem found by a check.
type Finding struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Category Category `json:"category"`
	Title    string   `json:"title"`
	Message  string   `json:"message"`
	// Object is the object blamed; empty for findings about lint's own configuration file.
	Object ObjectRef `json:"object"`
	// FieldPath is the field blamed, e.g. "spec.rules[2].authorization.mcp.methods[0]"; empty for the whole object.
	FieldPath string `json:"fieldPath,omitempty"`
	// Source is where the field is: file, line and column, or the cluster.
	Source snapshot.Source `json:"source"`
	// Fix says how to fix this finding.
	Fix string `json:"fix,omitempty"`
	// Suppressed is set when a suppression silenced the finding.
	Suppressed *Suppression `json:"suppressed,omitempty"`
	// Quoted is data whose sentence render writes into the message (render/lintout,
	// before any format is written): Message is then the text before it. nil for a
	// finding whose Message is whole.
	Quoted *Quoted `json:"-"`
}

// Quoted is what a finding's message quotes that render writes: what the graph found
// wrong at a field (AGP104), where agpol learned a Gateway's data plane (AGP210), an
// AuthPolicy's reasons, joined by "; " (AGP212; a v1beta2 policy's failure in AGP211 and
// AGP106), a backendRef's problem (AGP206), an attachment's or a listener's (AGP207,
// AGP214, AGP215), or a v1beta2 policy's kuadrant.io/v1 form (AGP106).
type Quoted struct {
	// Problem is what the graph found wrong at a field (AGP104: invalid matches and
	// selectors; topology.Graph.Problems). It points into the graph.
	Problem *topology.Problem

	DataPlane *topology.GatewayDataPlane
	Reasons   []authpolicy.Reason
	// Backend is a backendRef the data plane cannot use (AGP206).
	Backend *topology.BackendProblem
	// Attachment is why a route does not attach to a listener (AGP207), ListenerSet why
	// a Gateway does not take a ListenerSet (AGP214), NotProgrammed why a listener
	// carries no routes (AGP215).
	Attachment    *topology.Attachment
	ListenerSet   *topology.ListenerSetStatus
	NotProgrammed *topology.NotProgrammed
	// Migration is a v1beta2 AuthPolicy's kuadrant.io/v1 form (AGP106).
	Migration *authpolicy.V1Migration
	// After is the message's text after the quoted sentence.
	After string
}

// Location is "file:line:col" for file objects and "cluster:CONTEXT" otherwise.
func (f *Finding) Location() string {
	s := f.Source
	switch {
	case s.File != "" && s.Line > 0 && s.Column > 0:
		return fmt.Sprintf("%s:%d:%d", s.File, s.Line, s.Column)
	case s.File != "" && s.Line > 0:
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	}
	return s.String()
}

// SortFindings orders findings deterministically: file objects by file, line,
// column, then objects read from a cluster; ties by code, object and field.
func SortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := &fs[i], &fs[j]
		if (a.Source.File == "") != (b.Source.File == "") {
			return a.Source.File != ""
		}
		if a.Source.File != b.Source.File {
			return a.Source.File < b.Source.File
		}
		if a.Source.Line != b.Source.Line {
			return a.Source.Line < b.Source.Line
		}
		if a.Source.Column != b.Source.Column {
			return a.Source.Column < b.Source.Column
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		if ak, bk := a.Object.Key(), b.Object.Key(); ak != bk {
			return ak < bk
		}
		if a.FieldPath != b.FieldPath {
			return a.FieldPath < b.FieldPath
		}
		return a.Message < b.Message
	})
}

// Summary counts findings by severity; suppressed findings are counted apart.
type Summary struct {
	Errors     int `json:"errors"`
	Warnings   int `json:"warnings"`
	Info       int `json:"info"`
	Suppressed int `json:"suppressed"`
}

// String is "N errors, M warnings, K info" plus ", S suppressed" when any are, in
// English ("1 error, 1 warning"); scripts read the counts from -o json.
func (s Summary) String() string {
	out := fmt.Sprintf("%s, %s, %d info", count(s.Errors, "error"), count(s.Warnings, "warning"), s.Info)
	if s.Suppressed > 0 {
		out += fmt.Sprintf(", %d suppressed", s.Suppressed)
	}
	return out
}

// count is "1 NOUN" or "N NOUNs".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
