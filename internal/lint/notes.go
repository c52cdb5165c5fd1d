package lint

import "github.com/agpol/agpol/internal/model"

// Notes are what a lint run says besides its findings.
type Notes struct {
	// NothingRead is true when no object was read (typed or not): a clean report on
	// nothing is no clean bill of health.
	NothingRead bool
	// NotRevalidated is Report.NotRevalidated: objects read from the cluster that were
	// not validated again.
	NotRevalidated int
}

// NotesOf are the notes of the run over ctx that made r.
func NotesOf(ctx *Context, r *Report) Notes {
	read := len(ctx.Undecodable)
	if ctx.Snapshot != nil {
		read += ctx.Snapshot.Len()
	}
	return Notes{NothingRead: read == 0, NotRevalidated: r.NotRevalidated}
}

// RunOn runs the checks over m's snapshot and the objects that could not be typed (validating
// objects read from a cluster again with revalidateLive), and says what the run notes
// besides its findings.
func RunOn(m *model.Model, undecodable []Undecodable, revalidateLive bool, opts Options) (*Report, Notes) {
	ctx := NewContextOn(m)
	ctx.Undecodable = undecodable
	ctx.RevalidateLive = revalidateLive
	r := Run(ctx, opts)
	return r, NotesOf(ctx, r)
}
