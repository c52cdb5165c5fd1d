package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/whatif"
)

type simulateOptions struct {
	decideFlags
	requests string
	// strict fails the expectation of a request naming a tool or caller the input
	// does not know.
	strict bool

	// rf is the request file (Complete); trustDomain is the file's unless
	// --trust-domain was given.
	rf *explain.RequestFile
}

func (o *simulateOptions) Complete(cmd *cobra.Command, _ []string) error {
	if err := o.complete(); err != nil {
		return err
	}
	if o.requests == "" {
		return nil // Validate says it is required
	}
	if o.requests == "-" && slices.Contains(o.load.files, "-") {
		return usagef("-f - and --requests - both read standard input: give one of them as a file")
	}
	data, err := o.a.readRequests(o.requests)
	if err != nil {
		return err
	}
	if o.rf, err = explain.ParseRequestFile(o.requests, data, o.namespace); err != nil {
		return err
	}
	if !cmd.Flags().Changed("trust-domain") && o.rf.TrustDomain != "" {
		o.trustDomain = o.rf.TrustDomain
	}
	return nil
}

func (o *simulateOptions) Validate() error {
	if o.requests == "" {
		return usagef("--requests FILE is required")
	}
	return o.load.validate()
}

func (o *simulateOptions) Run(ctx context.Context) error {
	a, rf := o.a, o.rf
	m, err := a.load(ctx, &o.load)
	if err != nil {
		return err
	}
	end := a.progress.Stagef("simulating %d requests", len(rf.Requests))
	defer end()
	// Results are written as they are decided, never held all at once.
	out, err := render.NewSimulateWriter(render.SimulateOutput{
		Out: a.streams.Out, ErrOut: a.streams.ErrOut, Format: o.output, Color: render.ColorMode(o.color),
		Requests: o.requests, Snapshot: m.Snapshot,
	}, len(rf.Requests))
	if err != nil {
		return err
	}
	if render.IsTerminal(a.streams.Out) {
		end() // results reach the terminal as they come: no status line among them
	}
	sim := explain.New(m, o.sems, o.trustDomain)
	names := whatif.KnownNames(sim)
	for _, r := range rf.Requests {
		warns := names.Request(r, whatif.RequestSource(o.requests, r))
		render.WhatifWarnings(a.streams.ErrOut, warns)
		if o.strict {
			for _, w := range warns {
				r.Strict = append(r.Strict, w.Strict())
			}
		}
	}
	// Decided on every core, chunk by chunk, each chunk rendered where it is decided and
	// written in request order.
	tally, err := sim.ExplainBatch(render.SimulateDetail(o.output), rf.Requests, out.Chunk, out.WriteChunk)
	if err != nil {
		if errors.Is(err, explain.ErrInput) {
			return fmt.Errorf("%s: %w%s", o.requests, err, partialHint(m.Snapshot))
		}
		return err
	}
	end()
	if err := out.Close(tally); err != nil {
		return err
	}
	if tally.Failed > 0 {
		return &resultError{code: exitFail}
	}
	return nil
}

func (a *app) newSimulateCmd() *cobra.Command {
	o := &simulateOptions{decideFlags: decideFlags{a: a}}
	cmd := &cobra.Command{
		Use:   "simulate --requests FILE",
		Short: "Decide many requests at once, optionally checking expectations",
		Long: `Decide every request of a request file (the format is a public contract):

  trustDomain: cluster.local              # optional
  requests:
  - name: sum-allowed
    from: {serviceAccount: shop/agent-a}  # or {spiffe: URI}, {certificate: "CN=..."} (CA-signed, no SPIFFE ID) or {anonymous: true}
    gateway: shop/front
    listener: https                       # optional
    route: shop/calc-route                # optional; resolved when absent
    backend: shop/calc                    # optional XBackend; or service: NS/NAME
    http: {method: POST, path: /mcp, host: calc.example.com, port: 443,
           headers: {mcp-session-id: s-1}, time: "2026-05-01T10:00:00Z"}
    mcp: {method: tools/call, tool: add-numbers}   # omit mcp for a plain HTTP request
    extauth: allow                        # or deny, or {gateway: allow, backend: deny}
    expect: allow                         # optional: turns the request into a test
    expectDecidedBy: shop/calc-sum#be-sum # optional
    expectLevel: backend                  # optional

A weighted route rule yields one result per backend. With several --semantics, every
request gets one result per semantics (expectations are checked against the first).
With expectations, "N passed, M failed" is printed (to stderr for json, yaml and junit)
and any failure exits 1.

A request whose tool or caller appears in no policy, no ServiceAccount (and, for a
caller, no rule source) of the input is answered as any tool (caller) no rule names,
with a warning naming the nearest known name: a misspelt tool would otherwise pass an
"expect: deny" silently. With --strict, such a request's expectation fails.

` + exitCodesHelp,
		Example: `  # The example scenario's request file, as a test
  agpol simulate -f testdata/examples --requests testdata/requests.yaml

  # JUnit XML for CI
  agpol simulate -f manifests/ --requests requests.yaml -o junit > report.xml`,
		Args: cobra.NoArgs,
		RunE: a.runE(o),
	}
	o.add(cmd, "text", "json", "yaml", "junit")
	cmd.Flags().StringVar(&o.requests, "requests", "", "request file (YAML), - for stdin")
	cmd.Flags().BoolVar(&o.strict, "strict", false, "fail the expectation of a request whose tool or caller the input does not know")
	return cmd
}

func (a *app) readRequests(name string) ([]byte, error) {
	return readBounded("request file", name, a.streams.In)
}

// maxSideFileBytes bounds the side files a command reads besides the manifests
// (request files, tool inventories), so /dev/zero or a huge file is refused, not read.
const maxSideFileBytes = 16 << 20

// readBounded reads name (with a non-nil in, "-" is in) up to maxSideFileBytes; a
// larger input is an error.
func readBounded(what, name string, in io.Reader) ([]byte, error) {
	if name != "-" || in == nil {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", what, err)
		}
		defer f.Close()
		in = f
	}
	data, err := io.ReadAll(io.LimitReader(in, maxSideFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", what, name, err)
	}
	if len(data) > maxSideFileBytes {
		return nil, fmt.Errorf("reading %s: %s: larger than %d MiB", what, name, maxSideFileBytes>>20)
	}
	return data, nil
}
