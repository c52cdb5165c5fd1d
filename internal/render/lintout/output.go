// Package lintout renders lint reports: text (one line per finding, compiler
// style), JSON, SARIF 2.1.0, JUnit XML and GitHub Actions workflow commands.
// It is the render stage for lint, under render so that no import runs back up from
// lint to render; it formats and decides nothing.
package lintout

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/jstemmer/go-junit-report/v2/junit"
	sarif "github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/agpol/agpol/internal/lint"
	textrender "github.com/agpol/agpol/internal/render"
)

// Formats are the accepted -o values.
var Formats = []textrender.Format{textrender.FormatText, textrender.FormatJSON, textrender.FormatSARIF, textrender.FormatJUnit, textrender.FormatGitHub}

// Options tune rendering.
type Options struct {
	// ShowSuppressed includes suppressed findings (marked as such).
	ShowSuppressed bool
	// FailOn is the --fail-on threshold: JUnit marks findings that reach it as failures.
	FailOn lint.Threshold
	// ToolVersion is agpol's version, recorded in SARIF.
	ToolVersion string
	// InformationURI is where the checks are documented, recorded in SARIF.
	InformationURI string
	// Style colours the severities of the text format (--color); the zero Styler prints
	// plain text.
	Style textrender.Styler
}

// Write renders the report in the named format.
func Write(w io.Writer, format textrender.Format, r *lint.Report, o Options) error {
	switch format {
	case "", textrender.FormatText:
		return Text(w, r, o)
	case textrender.FormatJSON:
		return JSON(w, r, o)
	case textrender.FormatSARIF:
		return SARIF(w, r, o)
	case textrender.FormatJUnit:
		return JUnit(w, r, o)
	case textrender.FormatGitHub:
		return GitHub(w, r, o)
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return fmt.Errorf("unknown output format %q: use %s", format, strings.Join(names, ", "))
}

// clean makes untrusted text (names, expressions, messages) safe for one line of a
// terminal or log: ESC and CR go through the escaper of every text renderer
// (render.EscapeTerminal: ^[ and \r as kubectl shows them, hidden characters as
// <U+202E>), line breaks become spaces, and other control characters are shown as \xNN.
func clean(s string) string {
	s = textrender.EscapeTerminal(s)
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteByte(' ')
		case unicode.IsControl(r):
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Text writes "file:line:col: severity CODE [category] message (Kind ns/name field)"
// per finding and a summary line.
func Text(w io.Writer, r *lint.Report, o Options) error {
	r = written(r)
	if o.Style.Color {
		w = o.Style.Writer(w) // renders the severities' styles
	}
	for _, f := range r.Visible(o.ShowSuppressed) {
		var obj string
		if f.Object.Kind != "" {
			obj = " (" + clean(f.Object.String())
			if f.FieldPath != "" {
				obj += " " + clean(f.FieldPath)
			}
			obj += ")"
		}
		sup := ""
		if f.Suppressed != nil {
			sup = fmt.Sprintf(" [suppressed by %s: %s]", f.Suppressed.Kind, clean(f.Suppressed.Reason))
		}
		if _, err := fmt.Fprintf(w, "%s: %s %s [%s] %s%s%s\n", clean(f.Location()), severityText(o.Style, f.Severity), f.Code, f.Category,
			clean(f.Message), obj, sup); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, r.Summary.String())
	return err
}

// jsonReport is the -o json document.
type jsonReport struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	FailOn     lint.Threshold `json:"failOn"`
	Failed     bool           `json:"failed"`
	Summary    lint.Summary   `json:"summary"`
	Checks     []string       `json:"checks"`
	// NotRevalidated counts the objects read from a cluster that were not validated
	// again against the embedded CRDs (agpol lint --revalidate-live validates them).
	NotRevalidated int `json:"notRevalidated,omitempty"`
	// Partial, NotInstalled and Warnings say what the read of the cluster missed and
	// what else loading warned about, as in every other agpol report; each is absent
	// when there is nothing to say.
	Partial      bool           `json:"partial,omitempty"`
	NotInstalled []string       `json:"notInstalled,omitempty"`
	Warnings     []string       `json:"warnings,omitempty"`
	Findings     []lint.Finding `json:"findings"`
}

// APIVersion and Kind identify the JSON report.
const (
	APIVersion = "agpol.dev/v1alpha1"
	ReportKind = "LintReport"
)

// JSON writes the report as one JSON document.
func JSON(w io.Writer, r *lint.Report, o Options) error {
	r = written(r)
	doc := jsonReport{APIVersion: APIVersion, Kind: ReportKind, FailOn: o.FailOn, Failed: r.Fails(o.FailOn),
		Summary: r.Summary, Checks: []string{}, NotRevalidated: r.NotRevalidated,
		Partial: r.Partial, NotInstalled: r.NotInstalled, Warnings: r.Warnings, Findings: r.Visible(o.ShowSuppressed)}
	for _, c := range r.Checks {
		doc.Checks = append(doc.Checks, c.Code)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func sarifLevel(s lint.Severity) string {
	switch s {
	case lint.SeverityError:
		return sarif.LevelError
	case lint.SeverityWarning:
		return sarif.LevelWarning
	}
	return sarif.LevelNote
}

// SARIF writes a SARIF 2.1.0 log with one run: a rule per check that ran and a
// result per finding, located by file, line and column (or logically, by object,
// for objects read from a cluster). Suppressed findings carry SARIF suppressions. The
// run's property notRevalidated counts the live objects not validated again.
func SARIF(w io.Writer, r *lint.Report, o Options) error {
	r = written(r)
	uri := o.InformationURI
	if uri == "" {
		uri = "https://github.com/agpol/agpol/blob/main/docs/checks.md"
	}
	run := sarif.NewRunWithInformationURI("agpol", uri)
	if o.ToolVersion != "" {
		run.Tool.Driver.WithVersion(o.ToolVersion)
	}
	if r.NotRevalidated > 0 || r.Partial || len(r.NotInstalled) > 0 || len(r.Warnings) > 0 {
		props := sarif.NewPropertyBag()
		if r.NotRevalidated > 0 {
			props.Add("notRevalidated", r.NotRevalidated)
		}
		if r.Partial {
			props.Add("partial", true)
		}
		if len(r.NotInstalled) > 0 {
			props.Add("notInstalled", r.NotInstalled)
		}
		if len(r.Warnings) > 0 {
			props.Add("warnings", r.Warnings)
		}
		run.WithProperties(props)
	}
	for _, c := range r.Checks {
		run.AddRule(c.Code).
			WithName(ruleName(c.Title)).
			WithShortDescription(sarif.NewMultiformatMessageString().WithText(c.Title)).
			WithFullDescription(sarif.NewMultiformatMessageString().WithText(reflow(c.Explanation))).
			WithHelp(sarif.NewMultiformatMessageString().WithText(reflow(c.Fix))).
			WithHelpURI(uri + "#" + strings.ToLower(c.Code)).
			WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel(sarifLevel(c.Severity))).
			WithProperties(sarif.NewPropertyBag().Add("category", string(c.Category)).Add("tags", []string{"agpol", string(c.Category)}))
	}
	for _, f := range r.Visible(o.ShowSuppressed) {
		res := run.CreateResultForRule(f.Code).
			WithLevel(sarifLevel(f.Severity)).
			WithMessage(sarif.NewTextMessage(resultText(&f)))
		loc := sarif.NewLocation()
		if f.Source.File != "" && f.Source.File != "<stdin>" {
			region := sarif.NewRegion().WithStartLine(max(f.Source.Line, 1))
			if f.Source.Column > 0 {
				region.WithStartColumn(f.Source.Column)
			}
			loc.WithPhysicalLocation(sarif.NewPhysicalLocation().
				WithArtifactLocation(sarif.NewSimpleArtifactLocation(artifactURI(f.Source.File))).
				WithRegion(region))
			run.AddDistinctArtifact(artifactURI(f.Source.File))
		}
		if f.Object.Kind != "" {
			ll := sarif.NewLogicalLocation().WithFullyQualifiedName(f.Object.Key()).WithName(f.Object.Name).WithKind("resource")
			loc.WithLogicalLocations([]*sarif.LogicalLocation{ll})
		}
		res.AddLocation(loc)
		if f.Suppressed != nil {
			kind := "external"
			if f.Suppressed.Kind == lint.SuppressedByAnnotation {
				kind = "inSource"
			}
			res.AddSuppression(sarif.NewSuppression().WithKind(kind).WithJustification(f.Suppressed.Reason))
		}
	}
	report := sarif.NewReport()
	report.AddRun(run)
	if err := report.PrettyWrite(w); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}

func resultText(f *lint.Finding) string {
	s := f.Message
	if f.Object.Kind != "" {
		s += " (" + f.Object.String()
		if f.FieldPath != "" {
			s += " " + f.FieldPath
		}
		s += ")"
	}
	return s
}

// ruleName turns a title into a SARIF rule name (PascalCase, letters and digits).
func ruleName(title string) string {
	var b strings.Builder
	for _, word := range strings.FieldsFunc(title, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		b.WriteString(strings.ToUpper(word[:1]) + word[1:])
	}
	return b.String()
}

// reflow joins the lines of each paragraph.
func reflow(s string) string {
	paras := strings.Split(strings.TrimSpace(s), "\n\n")
	for i, p := range paras {
		lines := strings.Split(p, "\n")
		for j := range lines {
			lines[j] = strings.TrimSpace(lines[j])
		}
		paras[i] = strings.Join(lines, " ")
	}
	return strings.Join(paras, "\n\n")
}

// JUnit writes one testsuite per check that ran. Each finding is a testcase: a
// failure when it reaches --fail-on, skipped when suppressed (with
// --show-suppressed), and passed otherwise (the message in system-out). A check
// without findings has one passing testcase.
func JUnit(w io.Writer, r *lint.Report, o Options) error {
	r = written(r)
	suites := junit.Testsuites{Name: "agpol lint"}
	byCode := map[string][]lint.Finding{}
	for _, f := range r.Visible(o.ShowSuppressed) {
		byCode[f.Code] = append(byCode[f.Code], f)
	}
	for i, c := range r.Checks {
		ts := junit.Testsuite{Name: c.Code + " " + c.Title, ID: i, Package: string(c.Category), Time: "0"}
		fs := byCode[c.Code]
		if len(fs) == 0 {
			ts.AddTestcase(junit.Testcase{Name: "no findings", Classname: c.Code, Time: "0"})
		}
		for _, f := range fs {
			tc := junit.Testcase{Name: junitName(&f), Classname: c.Code, Time: "0"}
			text := fmt.Sprintf("%s: %s %s [%s] %s\nfix: %s", f.Location(), f.Severity, f.Code, f.Category, resultText(&f), reflow(f.Fix))
			switch {
			case f.Suppressed != nil:
				tc.Skipped = &junit.Result{Message: "suppressed by " + f.Suppressed.Kind + ": " + f.Suppressed.Reason}
				tc.SystemOut = &junit.Output{Data: text}
			case o.FailOn.Reached(f.Severity):
				tc.Failure = &junit.Result{Message: f.Message, Type: string(f.Severity), Data: text}
			default:
				tc.SystemOut = &junit.Output{Data: text}
			}
			ts.AddTestcase(tc)
		}
		suites.AddSuite(ts)
	}
	return suites.WriteXML(w)
}

func junitName(f *lint.Finding) string {
	name := f.Location()
	if f.Object.Kind != "" {
		name += " " + f.Object.String()
	}
	if f.FieldPath != "" {
		name += " " + f.FieldPath
	}
	return name
}

// GitHub writes GitHub Actions workflow commands (::error file=F,line=L,col=C,title=CODE::message),
// which the Actions runner turns into annotations on the pull request, then the summary.
func GitHub(w io.Writer, r *lint.Report, o Options) error {
	r = written(r)
	for _, f := range r.Visible(o.ShowSuppressed) {
		if f.Suppressed != nil {
			// Suppressed findings are not annotations; list them as plain log lines.
			if _, err := fmt.Fprintf(w, "%s: suppressed %s %s (%s)\n", clean(f.Location()), f.Code, clean(f.Message), clean(f.Suppressed.Reason)); err != nil {
				return err
			}
			continue
		}
		cmd := "notice"
		switch f.Severity {
		case lint.SeverityError:
			cmd = "error"
		case lint.SeverityWarning:
			cmd = "warning"
		}
		var props []string
		if f.Source.File != "" && f.Source.File != "<stdin>" {
			props = append(props, "file="+ghProperty(filepath.ToSlash(f.Source.File)))
			if f.Source.Line > 0 {
				props = append(props, fmt.Sprintf("line=%d", f.Source.Line))
			}
			if f.Source.Column > 0 {
				props = append(props, fmt.Sprintf("col=%d", f.Source.Column))
			}
		}
		props = append(props, "title="+ghProperty(f.Code))
		if _, err := fmt.Fprintf(w, "::%s %s::%s\n", cmd, strings.Join(props, ","), ghData(textrender.EscapeTerminal(resultText(&f)))); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, r.Summary.String())
	return err
}

// ghData escapes a workflow command's message.
func ghData(s string) string {
	s = strings.ReplaceAll(s, "%", "%25")
	s = strings.ReplaceAll(s, "\r", "%0D")
	return strings.ReplaceAll(s, "\n", "%0A")
}

// ghProperty escapes a workflow command's property value.
func ghProperty(s string) string {
	s = ghData(s)
	s = strings.ReplaceAll(s, ":", "%3A")
	return strings.ReplaceAll(s, ",", "%2C")
}

// ListChecks writes what agpol lint --list prints: a table of the checks, fitted to a
// 100-column terminal.
func ListChecks(w io.Writer, checks []*lint.Check) error {
	t := &textrender.Table{Header: []string{"CODE", "SEVERITY", "CATEGORY", "TITLE"}}
	for _, c := range checks {
		t.Rows = append(t.Rows, []string{c.Code, string(c.Severity), string(c.Category), c.Title})
	}
	return t.Text(w, textrender.TextWidth)
}

// severityText is a finding's severity, coloured when st colours: errors red, warnings
// yellow, information dim.
func severityText(st textrender.Styler, s lint.Severity) string {
	switch s {
	case lint.SeverityError:
		return st.Red(string(s))
	case lint.SeverityWarning:
		return st.Yellow(string(s))
	}
	return st.Dim(string(s))
}

// artifactURI is a file's path as the relative URI reference SARIF's artifactLocation.uri
// must be (RFC 3986): each segment percent-encoded, so a space or a '#' does not break it.
func artifactURI(file string) string {
	u := (&url.URL{Path: filepath.ToSlash(file)}).EscapedPath()
	if first, _, _ := strings.Cut(u, "/"); strings.Contains(first, ":") && !strings.HasPrefix(u, "/") {
		u = "./" + u // not read as a scheme
	}
	return u
}
