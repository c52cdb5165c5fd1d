package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/whatif"
)

type diffOptions struct {
	whatifFlags
	before, after string
	failOn        string

	// bySemantics compares two --semantics on one input instead of two inputs.
	bySemantics bool
	// shared holds the files of --before, read once when --after has them too.
	shared *cluster.SharedFiles
}

// sideFlags turns a --before/--after value into load flags: "live" is the cluster,
// anything else a file or directory (read recursively), whose files that both sides
// hold with the same bytes at the same path are read once.
func (o *diffOptions) sideFlags(v string) *loadFlags {
	if v == "live" {
		return &loadFlags{namespace: o.namespace}
	}
	if o.shared == nil {
		o.shared = cluster.NewSharedFiles()
	}
	return &loadFlags{files: []string{v}, recursive: true, namespace: o.namespace, shared: o.shared}
}

func (o *diffOptions) Complete(*cobra.Command, []string) error {
	if err := o.completeWhatif(); err != nil {
		return err
	}
	o.bySemantics = o.before == "" && o.after == ""
	return nil
}

func (o *diffOptions) Validate() error {
	switch {
	case o.bySemantics && len(o.sems) != 2:
		return usagef("give --before and --after (a file, a directory, or live), or two --semantics to compare on one input (-f, or the cluster)")
	case !o.bySemantics && (len(o.load.files) > 0 || o.load.live):
		return usagef("diff reads its inputs from --before and --after, not -f/--live")
	case !o.bySemantics && (o.before == "" || o.after == ""):
		return usagef("--before and --after are required (a file, a directory, or live)")
	}
	return o.load.validate()
}

func (o *diffOptions) Run(ctx context.Context) error {
	a, sems := o.a, o.sems
	var (
		before, after *whatif.Engine
		sb, sa        *model.Model
		err           error
	)
	if o.bySemantics {
		// The same objects, decided under each semantics.
		before, sb, err = a.engine(ctx, &o.whatifFlags, &o.load, sems[:1], whatif.Question{})
		if err != nil {
			return err
		}
		after, sa = whatif.New(sb, sems[1:], o.options()), sb
	} else {
		before, sb, err = a.engine(ctx, &o.whatifFlags, o.sideFlags(o.before), sems, whatif.Question{})
		if err != nil {
			return err
		}
		// The after side takes the paths whose inputs are unchanged from the before one.
		o.whatifFlags.before = before
		after, sa, err = a.engine(ctx, &o.whatifFlags, o.sideFlags(o.after), sems, whatif.Question{})
	}
	if err != nil {
		return err
	}
	// Only the changes are written: nothing read or decided is kept past the comparison
	// (the collector then marks the changes alone while they are written).
	c := render.DiffCompleteness(sb.Snapshot, sa.Snapshot)
	o.whatifFlags.before, o.shared = nil, nil
	end := a.progress.Stage("comparing every decision")
	d := whatif.Diff(before, after, o.filter)
	end()
	if o.bySemantics {
		d.Compare = "semantics " + sems[0].Name + " → " + sems[1].Name
	}
	if err := render.Diff(a.streams.Out, o.output, c, d); err != nil {
		return err
	}
	if d.Fails(o.failOn) {
		return &resultError{code: exitFail}
	}
	return nil
}

func (a *app) newDiffCmd() *cobra.Command {
	o := &diffOptions{whatifFlags: whatifFlags{decideFlags: decideFlags{a: a}}}
	cmd := &cobra.Command{
		Use:   "diff (--before PATH|live --after PATH|live | --semantics A --semantics B [-f PATH])",
		Short: "Every access decision a change makes: granted, revoked, decided by another rule",
		Long: `Compare the decision space of two inputs (a file or directory, read recursively, or
"live" for the current cluster) and print every (identity, gateway, listener, backend,
operation) whose decision changes, with the deciding rule before and after, grouped into
"access granted" (deny → indeterminate → allow), "access revoked" and "decided by a
different rule" (same verdict, another rule or level). Paths that exist on one side only
compare with "no path" (a deny); deny ↔ no path is not a change of access.

Identities, paths and operations are the union of both sides; the comparison is exact.
Use -o markdown for a pull-request comment and --fail-on to fail CI.

With two --semantics and no --before/--after, diff compares the decisions of the same
objects (-f, or the cluster) under the first semantics (before) and the second (after):
what an upstream change, such as the open pull requests pr-293 and pr-236, would do to
your access before it ships.

` + whatifSpaceHelp + `

` + exitCodesHelp,
		Example: `  # What does this pull request change?
  agpol diff --before base/manifests --after manifests -o markdown \
      --fail-on granted

  # The example scenario against a modified copy
  agpol diff --before testdata/examples --after testdata/whatif/after
  # What would upstream pull request #293 change on these manifests?
  agpol diff --semantics reference --semantics pr-293 -f testdata/examples`,
		Args: cobra.NoArgs,
		RunE: a.runE(o),
	}
	o.addWhatif(a, cmd, "text", "markdown", "json", "yaml")
	f := cmd.Flags()
	f.StringVar(&o.before, "before", "", "the input before the change: a file, a directory, or live")
	f.StringVar(&o.after, "after", "", "the input after the change: a file, a directory, or live")
	addEnumFlag(cmd, &o.failOn, "fail-on", "", "none", "--fail-on value", "exit 1 when a change of this kind exists", []string{"granted", "revoked", "any", "none"})
	// -f/-R/--live serve only the comparison of two semantics on one input.
	for _, n := range []string{"all-namespaces", "snapshot-out"} {
		_ = f.MarkHidden(n)
	}
	return cmd
}
