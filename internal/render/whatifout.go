package render

import (
	"io"

	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/whatif"
)

// CanIList writes can-i --list's answer: a report for json and yaml, else the table.
func CanIList(w io.Writer, format Format, s *snapshot.Snapshot, l *whatif.CanIList) error {
	if format.Document() {
		return Report(w, format, NewCanIListReport(l), CompletenessOf(s))
	}
	return CanIListText(w, l)
}

// CanI writes can-i's answers for id and op under sems: a report for json and yaml,
// else the text.
func CanI(w io.Writer, format Format, s *snapshot.Snapshot, sems []string, id *whatif.Caller, op whatif.Op, answers []whatif.Answer, skipped []*whatif.Target) error {
	if format.Document() {
		return Report(w, format, NewCanIReport(sems, id, op, answers, skipped), CompletenessOf(s))
	}
	return CanIText(w, sems, op, answers, skipped)
}

// WhoCan writes who-can's answer: a report for json and yaml, else the text.
func WhoCan(w io.Writer, format Format, s *snapshot.Snapshot, sems []string, op whatif.Op, res []*whatif.WhoCanTarget) error {
	if format.Document() {
		return Report(w, format, NewWhoCanReport(sems, op, res), CompletenessOf(s))
	}
	return WhoCanText(w, sems, op, res)
}

// Matrix writes the access matrix: csv, a report for json and yaml, markdown, or the
// table (rows with identical cells grouped unless ungroup).
func Matrix(w io.Writer, format Format, s *snapshot.Snapshot, m *whatif.Matrix, ungroup bool) error {
	switch {
	case format == FormatCSV:
		return MatrixCSV(w, m)
	case format.Document():
		return Report(w, format, NewMatrixReport(m, ungroup), CompletenessOf(s))
	case format == FormatMarkdown:
		return MatrixMarkdown(w, m, ungroup)
	}
	return MatrixTable(w, m, ungroup)
}

// Diff writes the changes between two decision spaces: a report (with the completeness
// of both inputs, DiffCompleteness) for json and yaml, markdown, or the text.
func Diff(w io.Writer, format Format, c Completeness, d *whatif.DiffResult) error {
	switch {
	case format.Document():
		return DiffDocument(w, format, d, c)
	case format == FormatMarkdown:
		return DiffMarkdown(w, d)
	}
	return DiffText(w, d)
}

// DiffCompleteness is the completeness of a diff read from before and after, for Diff:
// taken before the comparison, so that neither input is kept while the diff is written.
func DiffCompleteness(before, after *snapshot.Snapshot) Completeness {
	return CompletenessOfSides([]string{"before", "after"}, before, after)
}
