package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/whatif"
)

// decideFlags are the flags explain and simulate share (and the what-if commands).
type decideFlags struct {
	a           *app
	load        loadFlags
	semantics   string
	trustDomain string
	output      render.Format
	color       string
	// namespace is the namespace of NAMEs given without one (-n, else "default").
	namespace string
	// sems are the presets of --semantics.
	sems []effective.Semantics
}

// complete resolves the namespace and the presets.
func (d *decideFlags) complete() error {
	d.namespace = d.a.defaultNamespace()
	d.load.namespace = d.namespace
	// Decisions need the whole topology: every namespace is read.
	d.load.wholeCluster = true
	var err error
	d.sems, err = d.check()
	return err
}

// add adds the shared flags; formats are the -o values, the first the default.
func (d *decideFlags) add(cmd *cobra.Command, formats ...render.Format) {
	// Decisions need the whole topology: every namespace is read, so no -A.
	d.load.addInputFlags(cmd)
	f := cmd.Flags()
	d.semantics = effective.PresetReference
	f.Var(&presetList{value: &d.semantics}, "semantics",
		"semantics preset(s), comma-separated or repeated, or all: "+strings.Join(effective.PresetNames(), ", "))
	_ = cmd.RegisterFlagCompletionFunc("semantics", cobra.FixedCompletions(append(effective.PresetNames(), "all"), cobra.ShellCompDirectiveNoFileComp))
	f.StringVar(&d.trustDomain, "trust-domain", effective.DefaultTrustDomain, "SPIFFE trust domain of ServiceAccount identities")
	addOutputFlag(cmd, &d.output, formats...)
	addColorFlag(cmd, &d.color)
}

// presetList is the --semantics flag: comma-separated presets, and a repeated flag adds
// to the list (--semantics reference --semantics pr-293 is reference,pr-293).
type presetList struct {
	value *string
	set   bool
}

func (p *presetList) String() string { return *p.value }
func (p *presetList) Type() string   { return "string" }
func (p *presetList) Set(v string) error {
	if _, err := effective.ParsePresets(v); err != nil {
		return err
	}
	if p.set {
		*p.value += "," + v
	} else {
		*p.value, p.set = v, true
	}
	return nil
}

// semantics returns the presets of --semantics (checked when the flag was parsed).
func (d *decideFlags) check() ([]effective.Semantics, error) {
	sems, err := effective.ParsePresets(d.semantics)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return sems, nil
}

type explainOptions struct {
	decideFlags
	from, gateway, listener, route, backend, service string
	host, path, method, mcpMethod, tool, uri         string
	headers                                          []string
	port                                             int
	at                                               string
	extauth                                          string
	// Kuadrant identity (docs/kuadrant-identities.md): a file, or shorthand flags.
	identityFile, apiKeySecret, identityRule string
	jwtClaims, decisions                     []string

	// req is the request of the flags (Complete); its time is set by Run without --time.
	req *explain.Request
}

func (o *explainOptions) Complete(cmd *cobra.Command, _ []string) error {
	if err := o.complete(); err != nil {
		return err
	}
	var err error
	o.req, err = o.request(cmd, o.namespace)
	return err
}

func (o *explainOptions) Validate() error {
	if o.from == "" {
		return usagef("--from IDENTITY is required (%s)", explain.CallerForms)
	}
	if !strings.HasPrefix(o.path, "/") {
		return usagef("--path must start with /")
	}
	if o.port < 0 || o.port > 65535 {
		return usagef("--port must be 1-65535")
	}
	if _, ok := explain.HTTPMethod(o.method); !ok {
		hint := ""
		if strings.Contains(o.method, "/") || o.method == "initialize" || o.method == "ping" {
			// can-i and who-can take the MCP method as --method; explain as --mcp-method.
			hint = "; for the MCP method give --mcp-method " + o.method
		}
		return usagef("--method %q is not an HTTP method (GET, HEAD, POST, PUT, DELETE, CONNECT, OPTIONS, TRACE or PATCH)%s", o.method, hint)
	}
	return o.load.validate()
}

func (o *explainOptions) Run(ctx context.Context) error {
	a, req := o.a, o.req
	if o.at == "" {
		req.HTTP.Time, req.TimeAssumed = time.Now().UTC(), true
	}
	m, err := a.load(ctx, &o.load)
	if err != nil {
		return err
	}
	s := m.Snapshot
	sim := explain.New(m, o.sems, o.trustDomain)
	render.WhatifWarnings(a.streams.ErrOut, whatif.KnownNames(sim).Request(req, ""))
	results, err := sim.Explain(explain.Full, req)
	if err != nil {
		if errors.Is(err, explain.ErrInput) {
			return usagef("%v%s", err, partialHint(s))
		}
		return err
	}
	if o.at == "" {
		// Decided at the current time; the report names the request's time only
		// when the request gave one, so that two runs print the same bytes.
		req.HTTP.Time = time.Time{}
	}
	if err := render.Decisions(a.streams.Out, o.output, render.ColorMode(o.color), s, results); err != nil {
		return err
	}
	return verdictExit(explain.Overall(results))
}

func (a *app) newExplainCmd() *cobra.Command {
	o := &explainOptions{decideFlags: decideFlags{a: a}}
	cmd := &cobra.Command{
		Use:   "explain",
		Short: "Decide one request: allow, deny or indeterminate, and why",
		Long: `Decide one simulated request as the data plane would: resolve the route (unless
--route/--backend/--service name the path), run the ExternalAuth and Allow filters of the
gateway and backend levels in data-plane order, and print the verdict first, then every
level, policy and rule considered with matched / not matched / skipped, the reason and
the rule's file:line.

An external authorizer cannot be called offline: give its answer with --extauth allow|deny
(or per level: --extauth gateway=allow,backend=deny). When it is needed and not given, the
verdict is indeterminate and the outcome of each answer is shown.

Without MCP metadata (--mcp-method none, or an HTTP method other than POST and no
--mcp-method), the request is a plain HTTP request.

` + exitCodesHelp,
		Example: `  # Would billing be allowed to call the refund tool on the ledger?
  agpol explain -f testdata/examples --from sa:agents/billing \
    --gateway infra/edge --host ledger.mcp.example.com --tool refund \
    --extauth allow

  # Same question under every semantics preset, as JSON
  agpol explain -f testdata/examples --from sa:agents/support \
    --gateway infra/edge --backend pay/ledger --tool refund \
    --semantics all -o json`,
		Args: cobra.NoArgs,
		RunE: a.runE(o),
	}
	o.add(cmd, "text", "json", "yaml")
	f := cmd.Flags()
	f.StringVar(&o.from, "from", "", "caller (required): "+explain.CallerForms)
	f.StringVar(&o.gateway, "gateway", "", "gateway NAMESPACE/NAME (inferred when only one fits)")
	f.StringVar(&o.listener, "listener", "", "listener name (default: chosen by port and host)")
	f.StringVar(&o.route, "route", "", "HTTPRoute NAMESPACE/NAME (skips route resolution with --backend/--service)")
	f.StringVar(&o.backend, "backend", "", "XBackend NAMESPACE/NAME (skips route resolution)")
	f.StringVar(&o.service, "service", "", "core Service NAMESPACE/NAME as the backend (skips route resolution)")
	f.StringVar(&o.host, "host", "", "host (:authority) of the request, optionally with :port")
	f.StringVar(&o.path, "path", "/mcp", "request path, optionally with ?query")
	f.StringVar(&o.method, "method", "POST", "HTTP method")
	f.StringArrayVar(&o.headers, "header", nil, "request header K=V (repeatable)")
	f.IntVar(&o.port, "port", 0, "destination port (default: the listener's)")
	f.StringVar(&o.at, "time", "", "request time, RFC 3339 (default: now)")
	f.StringVar(&o.mcpMethod, "mcp-method", "tools/call", "JSON-RPC method; none for a plain HTTP request")
	f.StringVar(&o.tool, "tool", "", "tool name (params.name)")
	for flag, kind := range map[string]completionKind{"gateway": completeGateways, "route": completeRoutes, "backend": completeXBackends, "from": completeIdentities, "tool": completeTools, "host": completeHosts} {
		_ = cmd.RegisterFlagCompletionFunc(flag, a.completeFrom(&o.load, kind))
	}
	f.StringVar(&o.uri, "uri", "", "resource URI (params.uri)")
	f.StringVar(&o.extauth, "extauth", "", "external authorizer answer: allow, deny, or gateway=allow,backend=deny")
	f.StringVar(&o.identityFile, "identity-file", "", "file with the request's Kuadrant identity, metadata and decisions (docs/kuadrant-identities.md)")
	f.StringArrayVar(&o.jwtClaims, "jwt-claim", nil, "Kuadrant identity: a JWT claim K=V, V read as JSON when it parses (repeatable)")
	f.StringVar(&o.apiKeySecret, "api-key-secret", "", "Kuadrant identity: the API key of Secret NAMESPACE/NAME")
	f.StringVar(&o.identityRule, "identity-rule", "", "the authentication rule that verified the identity")
	f.StringArrayVar(&o.decisions, "decision", nil, "answer of an external authorization rule, NAME=allow|deny (repeatable)")
	cmd.MarkFlagsMutuallyExclusive("backend", "service")
	cmd.MarkFlagsMutuallyExclusive("identity-file", "jwt-claim")
	cmd.MarkFlagsMutuallyExclusive("identity-file", "api-key-secret")
	cmd.MarkFlagsMutuallyExclusive("jwt-claim", "api-key-secret")
	return cmd
}

// credentials builds the request's Kuadrant credentials from --identity-file or the
// shorthand flags; nil when none is given.
func (o *explainOptions) credentials(ns string) (*explain.Credentials, error) {
	var c *explain.Credentials
	switch {
	case o.identityFile != "":
		data, err := readBounded("identity file", o.identityFile, o.a.streams.In)
		if err != nil {
			return nil, err
		}
		if c, err = explain.ParseIdentityFile(o.identityFile, data, ns); err != nil {
			return nil, err
		}
	case len(o.jwtClaims) > 0:
		claims := map[string]any{}
		for _, kv := range o.jwtClaims {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return nil, usagef("--jwt-claim %q: use NAME=VALUE", kv)
			}
			var val any
			if json.Unmarshal([]byte(v), &val) != nil {
				val = v
			}
			claims[k] = val
		}
		c = &explain.Credentials{Identity: &authpolicy.Identity{JWT: &authpolicy.JWTIdentity{Claims: claims}}}
	case o.apiKeySecret != "":
		n, err := explain.ParseNamespacedName(o.apiKeySecret, ns)
		if err != nil {
			return nil, usagef("--api-key-secret: %v", err)
		}
		c = &explain.Credentials{Identity: &authpolicy.Identity{APIKey: &authpolicy.APIKeyIdentity{Secret: n.String()}}}
	}
	if o.identityRule != "" {
		if c == nil || c.Identity == nil {
			return nil, usagef("--identity-rule needs an identity (--identity-file, --jwt-claim or --api-key-secret)")
		}
		c.Identity.Rule = o.identityRule
	}
	for _, kv := range o.decisions {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || (v != string(explain.AnswerAllow) && v != string(explain.AnswerDeny)) {
			return nil, usagef("--decision %q: use NAME=allow or NAME=deny", kv)
		}
		if c == nil {
			c = &explain.Credentials{}
		}
		if c.Decisions == nil {
			c.Decisions = map[string]explain.Answer{}
		}
		c.Decisions[k] = explain.Answer(v)
	}
	return c, nil
}

// request builds the request of the flags; NS/NAME flags without a namespace take ns.
// Without --time the request has no time (Run decides at the current time).
func (o *explainOptions) request(cmd *cobra.Command, ns string) (*explain.Request, error) {
	r := &explain.Request{Name: "explain"}
	var err error
	if o.from != "" {
		if r.From, err = explain.ParseCaller(o.from); err != nil {
			return nil, usagef("--from: %v", err)
		}
	}
	for _, x := range []struct {
		flag, val string
		dst       **explain.NamespacedName
	}{{"--gateway", o.gateway, &r.Gateway}, {"--route", o.route, &r.Route}, {"--backend", o.backend, &r.Backend}, {"--service", o.service, &r.Service}} {
		if x.val == "" {
			continue
		}
		n, err := explain.ParseNamespacedName(x.val, ns)
		if err != nil {
			return nil, usagef("%s: %v", x.flag, err)
		}
		*x.dst = &n
	}
	r.Listener = o.listener
	r.HTTP = explain.HTTP{Method: strings.ToUpper(o.method), Path: o.path, Host: o.host, Port: o.port}
	for _, h := range o.headers {
		k, v, ok := strings.Cut(h, "=")
		if !ok || k == "" {
			return nil, usagef("--header %q: use NAME=VALUE", h)
		}
		if err := explain.ValidHeaderName(k); err != nil {
			return nil, usagef("--header: %v", err)
		}
		if r.HTTP.Headers == nil {
			r.HTTP.Headers = map[string]string{}
		}
		k = strings.ToLower(k)
		if old, ok := r.HTTP.Headers[k]; ok {
			v = old + "," + v
		}
		r.HTTP.Headers[k] = v
	}
	if o.at != "" {
		if r.HTTP.Time, err = time.Parse(time.RFC3339, o.at); err != nil {
			return nil, usagef("--time %q: use RFC 3339, e.g. 2026-05-01T10:00:00Z", o.at)
		}
	}
	mcpSet := cmd.Flags().Changed("mcp-method") || cmd.Flags().Changed("tool") || cmd.Flags().Changed("uri")
	if o.mcpMethod != "none" && o.mcpMethod != "" && (r.HTTP.Method == "POST" || mcpSet) {
		r.MCP = &explain.MCP{Method: o.mcpMethod, Tool: o.tool, URI: o.uri}
	}
	if r.ExtAuth, err = parseExtAuth(o.extauth); err != nil {
		return nil, err
	}
	if r.Credentials, err = o.credentials(ns); err != nil {
		return nil, err
	}
	return r, nil
}

func parseExtAuth(v string) (explain.ExtAuth, error) {
	var e explain.ExtAuth
	if v == "" {
		return e, nil
	}
	if v == "allow" || v == "deny" {
		return explain.ExtAuth{Gateway: explain.Answer(v), Backend: explain.Answer(v)}, nil
	}
	for _, part := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(part, "=")
		if !ok || (val != "allow" && val != "deny") {
			return e, usagef("--extauth %q: use allow, deny, or gateway=allow|deny,backend=allow|deny", v)
		}
		switch k {
		case "gateway":
			e.Gateway = explain.Answer(val)
		case "backend":
			e.Backend = explain.Answer(val)
		default:
			return e, usagef("--extauth %q: unknown level %q (gateway or backend)", v, k)
		}
	}
	return e, nil
}

// partialHint is appended to a "not found" error when the cluster refused some reads:
// the object may exist where agpol was not allowed to look.
func partialHint(s *snapshot.Snapshot) string {
	if s == nil || !s.Partial {
		return ""
	}
	return " (the read of the cluster was partial, see the warnings above: it may exist where agpol may not list)"
}

// verdictExit maps a verdict to the exit code: deny → 1, indeterminate → 3.
func verdictExit(verdict string) error {
	switch verdict {
	case explain.Deny:
		return &resultError{code: exitFail}
	case explain.Indeterminate:
		return &resultError{code: exitIndeterminate}
	}
	return nil
}
