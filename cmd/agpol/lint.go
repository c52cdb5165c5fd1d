package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/config"
	"github.com/agpol/agpol/internal/lint"
	"github.com/agpol/agpol/internal/render"
	lintout "github.com/agpol/agpol/internal/render/lintout"
	"github.com/agpol/agpol/internal/version"
)

type lintOptions struct {
	a              *app
	load           loadFlags
	output         render.Format
	failOn         string
	only, skip     []string
	config         string
	showSuppressed bool
	explain        string
	list           bool
	revalidateLive bool
	color          string
	noCache        bool

	// Completed (unless --explain or --list): the threshold, the checks selected, the
	// config read, and the objects lint could not type (filled by the load).
	threshold   lint.Threshold
	checks      []*lint.Check
	cfg         *config.File
	undecodable []lint.Undecodable
}

func (o *lintOptions) Complete(cmd *cobra.Command, args []string) error {
	if o.explain != "" || o.list {
		return nil // printed without reading anything
	}
	var err error
	if o.threshold, err = lint.ParseThreshold(o.failOn); err != nil {
		return usagef("%v", err)
	}
	if o.checks, err = (lint.Selector{Only: o.only, Skip: o.skip}).Select(); err != nil {
		return usagef("%v", err)
	}
	if o.cfg, err = loadConfig(o.config, cmd.Flags().Changed("config")); err != nil {
		return err
	}
	o.load.namespace = o.a.defaultNamespace()
	o.load.config = o.cfg
	o.load.files = append(o.load.files, args...)
	o.load.wholeCluster = true
	o.load.reportsDropped = true
	o.load.skipUndecodable = func(ro cluster.RawObject, err error) {
		o.undecodable = append(o.undecodable, lint.Undecodable{Object: ro.Object(), Source: ro.Source, Err: err})
	}
	return nil
}

func (o *lintOptions) Validate() error {
	if o.explain != "" {
		if _, ok := lint.LookupCheck(o.explain); !ok {
			return usagef("unknown check %q: agpol lint --list shows every code", o.explain)
		}
		return nil
	}
	if o.list {
		return nil
	}
	return o.load.validate()
}

func (o *lintOptions) Run(ctx context.Context) error {
	a := o.a
	if o.explain != "" {
		c, _ := lint.LookupCheck(o.explain)
		return lintout.ExplainCheck(a.streams.Out, c)
	}
	if o.list {
		return lintout.ListChecks(a.streams.Out, lint.Checks())
	}
	cache := lintCache(o.noCache, os.Getenv)
	// Objects read from files are validated as they are read, in the parallel read.
	o.load.inspect = lint.Inspect(cache)
	m, err := a.load(ctx, &o.load)
	if err != nil {
		return err
	}
	if err := o.load.refusePartial(m.Snapshot, nil); err != nil {
		return err
	}
	end := a.progress.Stagef("linting %d objects", m.Snapshot.Len()+len(o.undecodable))
	report, notes := lint.RunOn(m, o.undecodable, o.revalidateLive, lint.Options{Checks: o.checks, Config: o.cfg, Cache: cache})
	cache.WritePack()
	cache.Trim()
	end()
	render.LintNotes(a.streams.ErrOut, o.output, o.load.sourceName(), notes)
	w := a.streams.Out
	mode := render.ColorMode(o.color)
	err = lintout.Write(w, o.output, report, lintout.Options{
		ShowSuppressed: o.showSuppressed, FailOn: o.threshold, ToolVersion: version.Get().Version,
		Style: render.Styler{Color: render.UseColor(mode, w), Profile: render.ColorProfile(mode, w)},
	})
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if report.Fails(o.threshold) {
		return &resultError{code: exitFail}
	}
	return nil
}

func (a *app) newLintCmd() *cobra.Command {
	o := &lintOptions{a: a}
	cmd := &cobra.Command{
		Use:   "lint [FILE|DIR ...]",
		Short: "Find policies that look safe and are not, and objects the API server would reject",
		Long: `Lint Gateway API, XAccessPolicy, XBackend and AuthPolicy objects, from files (-f), the
live cluster, or files laid over the cluster (-f --live). Arguments are read like -f,
so "agpol lint a.yaml b.yaml" lints those files (as a pre-commit hook does).

Every finding has a stable code (agpol lint --list; agpol lint --explain CODE), a
severity (error, warning, info), a category (schema, references, admission, allow-all,
loss, ambiguity, config), the object and field it blames, and the field's file:line.
Objects from files are validated offline against their CRDs, with defaults applied
first, as the API server would. Objects read from the cluster were validated by the API
server when they were stored, so they are not validated again unless --revalidate-live
is given ("would it be rejected if it were created today").

Suppress a finding on the object with the annotation
  agpol.dev/suppress: "AGP203: the Gateway is defined in the platform repository"
or in .agpol.yaml (read from the current directory when present, or --config):
  suppressions:
  - {code: AGP405, object: XAccessPolicy/tools/*, reason: "...", expires: 2027-01-01}

` + exitCodesHelp,
		Example: `  # Lint manifests in CI, failing on errors, with annotations on the pull
  # request
  agpol lint -f manifests/ -R -o github

  # SARIF for code scanning; fail on warnings too
  agpol lint -f manifests/ -R -o sarif --fail-on warning > agpol.sarif

  # What would change if these files were applied to the current cluster
  agpol lint -f new-policy.yaml --live

  # Only the silent allow-all checks, and why one of them matters
  agpol lint -f manifests/ --only allow-all
  agpol lint --explain AGP401`,
		Args: cobra.ArbitraryArgs,
		RunE: a.runE(o),
	}
	o.load.addInputFlags(cmd) // every namespace is read: no -A
	o.load.addAllowPartial(cmd)
	f := cmd.Flags()
	addOutputFlag(cmd, &o.output, lintout.Formats...)
	addColorFlag(cmd, &o.color)
	addEnumFlag(cmd, &o.failOn, "fail-on", "", "error", "--fail-on threshold", "exit 1 when an unsuppressed finding is at least this severe", []string{"error", "warning", "info", "none"})
	f.StringSliceVar(&o.only, "only", nil, "run only these checks: codes or categories, comma-separated or repeated")
	f.StringSliceVar(&o.skip, "skip", nil, "skip these checks: codes or categories, comma-separated or repeated")
	f.StringVar(&o.config, "config", config.DefaultFile, "lint config file with suppressions (read when present unless given explicitly)")
	f.BoolVar(&o.showSuppressed, "show-suppressed", false, "also show suppressed findings")
	f.StringVar(&o.explain, "explain", "", "print the explanation and fix of a check code, and exit")
	_ = cmd.RegisterFlagCompletionFunc("only", checkCompletions(true))
	_ = cmd.RegisterFlagCompletionFunc("skip", checkCompletions(true))
	_ = cmd.RegisterFlagCompletionFunc("explain", checkCompletions(false))
	f.BoolVar(&o.list, "list", false, "list every check, and exit")
	f.BoolVar(&o.noCache, "no-cache", false, "do not read or write the lint cache (schema validation results of unchanged objects, kept under the user's cache directory; also AGPOL_CACHE=off)")
	f.BoolVar(&o.revalidateLive, "revalidate-live", false, "validate objects read from the cluster against agpol's CRDs too (AGP101-AGP103): would they be rejected if they were created today")
	return cmd
}

// loadConfig reads the config file: the default one only when it exists, an
// explicit one always (a missing explicit file is an input error).
func loadConfig(file string, explicit bool) (*config.File, error) {
	if file == "" {
		return nil, nil
	}
	load := config.LoadIfPresent
	if explicit {
		load = config.Load
	}
	cfg, err := load(file)
	if err != nil {
		return nil, &cluster.InputError{Err: err}
	}
	return cfg, nil
}
