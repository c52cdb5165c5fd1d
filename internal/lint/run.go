package lint

import "github.com/agpol/agpol/internal/config"

// Options says which checks run and what suppresses their findings.
type Options struct {
	// Checks to run; nil runs every registered check (see Selector.Select).
	Checks []*Check
	// Config holds suppressions from the config file; nil for none.
	Config *config.File
	// Cache, when set, keeps the schema validation of each object between runs.
	Cache *Cache
}

// Report is the result of a lint run.
type Report struct {
	// Checks are the checks that ran, sorted by code.
	Checks []*Check
	// Findings are sorted (SortFindings) and include suppressed ones (Suppressed set).
	Findings []Finding
	// Summary counts unsuppressed findings by severity, and suppressed ones apart.
	Summary Summary
	// NotRevalidated counts the objects read from a cluster that the schema checks did
	// not validate again (Context.RevalidateLive off); 0 when no schema check ran.
	NotRevalidated int
	// Partial is true when the cluster refused to list some objects (RBAC): a finding
	// may be missing, and a reference may look broken because its target was not read.
	Partial bool
	// NotInstalled lists the kinds the cluster does not serve ("resource.group").
	NotInstalled []string
	// Warnings are the loading warnings, as agpol prints them on stderr.
	Warnings []string
}

// Run runs the checks over the context and applies suppressions.
func Run(ctx *Context, opts Options) *Report {
	checks := opts.Checks
	if checks == nil {
		checks = Checks()
	}
	ctx.cache = opts.Cache
	sup := newSuppressor(ctx, opts.Config)
	ctx.configIssues = sup.issues
	r := &Report{Checks: checks}
	for _, c := range checks {
		for _, f := range c.Run(ctx) {
			f.Code, f.Severity, f.Category, f.Title = c.Code, c.Severity, c.Category, c.Title
			if f.Fix == "" {
				f.Fix = c.Fix
			}
			f.Suppressed = sup.suppress(&f)
			r.Findings = append(r.Findings, f)
		}
	}
	r.NotRevalidated = ctx.notRevalidated
	if s := ctx.Snapshot; s != nil {
		r.Partial, r.NotInstalled = s.Partial, s.NotInstalled
		for _, w := range s.Warnings {
			r.Warnings = append(r.Warnings, w.Message)
		}
	}
	SortFindings(r.Findings)
	for _, f := range r.Findings {
		if f.Suppressed != nil {
			r.Summary.Suppressed++
			continue
		}
		switch f.Severity {
		case SeverityError:
			r.Summary.Errors++
		case SeverityWarning:
			r.Summary.Warnings++
		case SeverityInfo:
			r.Summary.Info++
		}
	}
	return r
}

// Fails reports whether an unsuppressed finding reaches the threshold.
func (r *Report) Fails(t Threshold) bool {
	for _, f := range r.Findings {
		if f.Suppressed == nil && t.Reached(f.Severity) {
			return true
		}
	}
	return false
}

// Visible returns the findings to show: unsuppressed ones, plus suppressed ones when asked.
func (r *Report) Visible(showSuppressed bool) []Finding {
	out := make([]Finding, 0, len(r.Findings))
	for _, f := range r.Findings {
		if f.Suppressed == nil || showSuppressed {
			out = append(out, f)
		}
	}
	return out
}
