package lintout

import (
	"strings"

	"github.com/agpol/agpol/internal/lint"
	textrender "github.com/agpol/agpol/internal/render"
)

// written is r with the sentences its findings quote written into their messages
// (lint.Finding.Quoted: where agpol learned a Gateway's data plane, an AuthPolicy's
// reasons), as render writes them for every other view; r itself is not changed.
func written(r *lint.Report) *lint.Report {
	quotes := false
	for i := range r.Findings {
		if r.Findings[i].Quoted != nil {
			quotes = true
			break
		}
	}
	if !quotes {
		return r
	}
	c := *r
	c.Findings = make([]lint.Finding, len(r.Findings))
	for i, f := range r.Findings {
		if q := f.Quoted; q != nil {
			f.Message += QuotedText(q) + q.After
			f.Quoted = nil
		}
		c.Findings[i] = f
	}
	return &c
}

// QuotedText is the sentence a finding quotes: the data plane's phrase
// (render.DataPlaneWhy), a backendRef's problem (render.BackendProblemText), an
// attachment's or a listener's (render.AttachmentText, ListenerSetReasonText,
// NotProgrammedText), a v1beta2 policy's kuadrant.io/v1 form
// (render.MigrationParagraph), or the AuthPolicy's reasons joined by "; "
// (render.AuthPolicyReasonText).
func QuotedText(q *lint.Quoted) string {
	if q.Problem != nil { // what the graph found wrong at a field
		return textrender.GraphProblemText(q.Problem)
	}
	if q.DataPlane != nil {
		return textrender.DataPlaneWhy(*q.DataPlane)
	}
	if q.Backend != nil {
		return textrender.BackendProblemText(q.Backend)
	}
	if q.Attachment != nil {
		return textrender.AttachmentText(q.Attachment)
	}
	if q.ListenerSet != nil {
		return textrender.ListenerSetReasonText(q.ListenerSet)
	}
	if q.NotProgrammed != nil {
		return textrender.NotProgrammedText(q.NotProgrammed)
	}
	if q.Migration != nil {
		return textrender.MigrationParagraph(q.Migration)
	}
	return strings.Join(textrender.AuthPolicyReasonsText(q.Reasons), "; ")
}
