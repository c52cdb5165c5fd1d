package render

import (
	"fmt"
	"strings"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
)

// Sentences is the view of a result that -o json|yaml prints: a copy of r with its text
// written (the decision's Reason, each trace step's Reason and Source, the path's
// Problem and ListenerAssumed, the problem of a path that reaches no backend, a left-out
// v1beta2 AuthPolicy's reason, a failed expectation's failures). r is left as
// explain made it: render builds its own view and never edits explain's data.
func Sentences(r *explain.Result) *explain.Result {
	v := new(explain.Result)
	sentencesInto(v, r, nil)
	return v
}

// sentencesInto writes into v the view Sentences makes of r, with the copies of r's
// steps appended to buf, which it returns for the next view: a view encoded at once
// and dropped (simulate's stream) then allocates no steps of its own. v's steps are
// valid until buf is used again.
func sentencesInto(v, r *explain.Result, buf []explain.Step) []explain.Step {
	*v = *r
	v.Reason = DecisionReason(&r.Decision)
	v.Path.ListenerAssumed = listenerAssumed(r)
	v.Path.BackendAssumed = backendAssumed(&r.Path)
	v.Path.DataPlaneAssumed = dataPlaneAssumed(&r.Path)
	v.Path.Problem = PathProblem(r.Path)
	v.Trace, buf = filledSteps(r.Trace, buf)
	v.AuthPolicy = authPolicyInfoView(r.AuthPolicy)
	v.Expect = expectationView(r.Expect)
	if r.Cause != nil {
		c := *r.Cause
		c.Near, buf = filledSteps(c.Near, buf)
		c.AuthPolicy = authPolicyCauseView(c.AuthPolicy)
		c.NoBackend = noBackendView(c.NoBackend)
		if c.OtherDataPlane != nil {
			c.Note = OtherDataPlaneText(c.OtherDataPlane)
		}
		if c.Uncertain != nil {
			c.Note = RegexDiffersText(c.Uncertain)
		}
		v.Cause = &c
	}
	return buf
}

// filledSteps is a copy of steps with their text written (nil stays nil, empty
// empty), appended to buf, and buf after it.
func filledSteps(steps, buf []explain.Step) ([]explain.Step, []explain.Step) {
	switch {
	case steps == nil:
		return nil, buf
	case len(steps) == 0:
		return []explain.Step{}, buf
	}
	at := len(buf)
	buf = append(buf, steps...)
	out := buf[at:len(buf):len(buf)]
	for i := range out {
		fillStep(&out[i])
	}
	return out, buf
}

func fillStep(s *explain.Step) {
	s.Reason, s.Source = StepReason(*s), stepSource(*s)
	s.AuthPolicy = authPolicyCauseView(s.AuthPolicy)
	if s.Assumed != nil {
		s.Note = AssumedText(*s.Assumed) // -o json carries the text, as before
	}
	if s.OtherDataPlane != nil {
		s.Note = OtherDataPlaneText(s.OtherDataPlane)
	}
	if s.Uncertain != nil {
		s.Note = RegexDiffersText(s.Uncertain)
	}
	s.NoBackend = noBackendView(s.NoBackend)
	if s.NoFilter != nil {
		s.Note = NoExtAuthFilterText(s.NoFilter)
	}
	s.Allows = permissionView(s.Allows)
	if m := s.Mismatch; m != nil {
		if p, ok := m.Wants.(*effective.Permission); ok && p.Why != "" {
			c := *m
			c.Wants = permissionView(p)
			s.Mismatch = &c
		}
		if m.Principal != nil {
			c := *s.Mismatch
			c.Note = PrincipalNote(m.Principal)
			s.Mismatch = &c
		}
		if m.CEL != nil {
			c := *s.Mismatch
			c.Note = CELFailureText(m.CEL)
			s.Mismatch = &c
		}
	}
}

// CELFailureText is why a CEL condition's evaluation gave no answer (explain.CELFailure).
func CELFailureText(f *explain.CELFailure) string {
	switch f.Why {
	case explain.CELFailEval:
		return f.Err
	case explain.CELFailOverBudget:
		return fmt.Sprintf("its evaluation ran past agpol's runtime cost budget of %d, so its outcome is unknown (Envoy evaluates it without a limit)", f.Limit)
	case explain.CELFailNotBool:
		return fmt.Sprintf("expression returned %s, not bool", f.Type)
	}
	return f.Why // a code this function does not know yet: still shown
}

// stepSource is where the step's rule or policy is written, as text.
func stepSource(s explain.Step) string {
	if s.Source == "" && s.Position != nil {
		return s.Position.String()
	}
	return s.Source
}

// DecisionReason is the one-line why of a decision.
func DecisionReason(d *explain.Decision) string {
	c := d.Cause
	if d.Reason != "" || c == nil {
		return d.Reason
	}
	switch c.Event {
	case explain.CauseOtherDataPlane:
		return "allowed: " + OtherDataPlaneText(c.OtherDataPlane)
	case explain.CauseNoPolicyDeny:
		return "no policy applies and the semantics denies by default"
	case explain.CauseNoPolicyAllow:
		return "no policy applies: allowed by default"
	case explain.CauseExtAuthLast:
		return fmt.Sprintf("allowed: every step allowed, the last the authorizer behind %s at %s level", d.DecidedBy, d.Level)
	case explain.CauseAllowedBy:
		return fmt.Sprintf("allowed by %s at %s level", d.DecidedBy, d.Level)
	case explain.CauseRuleLessOnly:
		return fmt.Sprintf("allowed: the only Allow policy at %s level, %s, has no rules", d.Level, d.DecidedBy)
	case explain.CauseExtAuthOnly:
		return fmt.Sprintf("the authorizer behind %s allowed and no Allow policy enforces", d.DecidedBy)
	case explain.CauseNothingEnforces:
		return "no Allow policy enforces and no authorizer was consulted"
	case explain.CauseExtAuthDenied:
		return fmt.Sprintf("the %s authorizer behind %s denied", d.Level, d.DecidedBy)
	case explain.CauseExtAuthUnknown:
		var parts []string
		for _, b := range d.Branches {
			parts = append(parts, fmt.Sprintf("%s → %s (%s)", b.Assume.String(), strings.ToUpper(b.Decision), b.DecidedBy))
		}
		return fmt.Sprintf("depends on the %s authorizer behind %s; outcome per answer: %s", d.Level, d.DecidedBy, strings.Join(parts, "; "))
	case explain.CauseNoRuleMatches:
		s := fmt.Sprintf("no Allow rule at %s level matches", d.Level)
		if len(c.Near) == 0 {
			caller := identityText(c.Caller)
			if caller == "" {
				caller = "without client certificate"
			}
			return s + "; no rule selects caller " + caller
		}
		return s + nearText(c.Near)
	case explain.CausePolicyMatchesNothing:
		return fmt.Sprintf("Allow policy %s at %s level matches nothing (every Allow policy must allow)", d.DecidedBy, d.Level) + nearText(c.Near)
	case explain.CauseCELUnknown:
		return celUnknown(c.CEL) + ", and the verdict depends on it"
	case explain.CauseRefused:
		return refusedText(c.NoBackend, c.Before)
	case explain.CauseTLSHandshake:
		return handshakeText(c.Listener, c.Handshake)
	case explain.CauseUnread, explain.CauseNotRead:
		return unreadCause(c)
	case explain.CauseUncertainRoute:
		return fmt.Sprintf("cannot decide: Envoy may route the request otherwise: %s (%s)", RegexDiffersText(c.Uncertain), routedText(c.Was))
	}
	if t := authPolicyText(c.Event, c.AuthPolicy); t != "" {
		return t
	}
	return c.Event
}

// nearText is "; rule "a" (file:line) why; rule "b" ..." for the rules nearest to matching.
func nearText(near []explain.Step) string {
	var b strings.Builder
	for _, s := range near {
		fmt.Fprintf(&b, "; rule %q (%s) %s", s.Rule, stepSource(s), mismatchText(s.Mismatch))
	}
	return b.String()
}

func celUnknown(exprs []string) string {
	return fmt.Sprintf("CEL %s ran past agpol's runtime cost budget of %d, so its outcome is unknown (Envoy evaluates it without a limit)",
		strings.Join(exprs, ", "), effective.CELCostLimit)
}

// StepReason is the sentence of a trace step.
func StepReason(s explain.Step) string {
	switch s.Event {
	case "":
		return s.Reason
	case explain.EventNoPolicy:
		return "no accepted XAccessPolicy applies at the gateway or the backend"
	case explain.EventExtAuthRuleLess:
		return "ExternalAuth policy without rules delegates every request"
	case explain.EventExtAuthSelects:
		return "selects the request for the authorizer"
	case explain.EventExtAuthNoRule:
		return "no rule of the ExternalAuth policy selects the request: the authorizer is not called"
	case explain.EventLegacyExtAuth:
		return "legacy ExternalAuth rule: tools/call from its source goes to the authorizer"
	case explain.EventNoFilter:
		return NoExtAuthFilterText(s.NoFilter) + ": the authorizer is never called"
	case explain.EventSharedExtAuth:
		return "same ExternalAuth config as the gateway's: one ext_authz filter, already called"
	case explain.EventAnswerDeny:
		return "authorizer answered deny"
	case explain.EventAnswerAllow:
		return "authorizer answered allow"
	case explain.EventAnswerUnknown:
		return "authorizer answer unknown (give --extauth allow|deny)"
	case explain.EventAnswerAssumed:
		return "authorizer answer unknown (not given with --extauth); the rest of this trace assumes allow"
	case explain.EventAnswerMoot:
		return fmt.Sprintf("the %s authorizer's answer is unknown but does not change the verdict (%s either way)", s.Level, s.Verdict)
	case explain.EventRuleLessAllow:
		return "Allow policy without rules: adds no rule, the level does not enforce"
	case explain.EventRuleLessAllows:
		return "Allow policy without rules allows the request"
	case explain.EventNoAllow:
		return "no Allow policy: the level does not enforce"
	case explain.EventReplaced:
		return fmt.Sprintf("rule %q is replaced by the same-named rule of %s: rules merge by name, the younger policy's wins", s.RuleName, s.KeptBy)
	case explain.EventAllows:
		if s.Allows == nil {
			return "allows"
		}
		return "allows " + permissionText(s.Allows)
	case explain.EventNotMatched:
		return mismatchText(s.Mismatch)
	case explain.EventLevelPassed:
		return "no rule at this level selects the caller: the level is passed (PR #220)"
	case explain.EventCELSame:
		t := celUnknown(s.CEL) + "; the verdict is the same whatever it is"
		if len(s.DecidedByEither) > 1 {
			t += " (decided by " + strings.Join(s.DecidedByEither, " or ") + ", depending on it)"
		}
		return t
	case explain.EventCELDepends:
		return celUnknown(s.CEL) + ", and the verdict depends on it"
	case explain.EventNoBackend:
		return NoBackendSentence(s.NoBackend)
	case explain.EventNoBackendSeeLast:
		return noBackendSeeLast(s.NoBackend)
	case explain.EventRefused:
		return refusedText(s.NoBackend, s.Before)
	case explain.EventNoBackendLevel:
		return noBackendLevelText(s.BackendKind)
	case explain.EventPlainHTTP:
		return fmt.Sprintf("listener %s is plain HTTP: no client certificate, the caller %s is seen as anonymous", s.Listener, s.Caller)
	case explain.EventUnread:
		return unreadStep(s)
	case explain.EventOtherDataPlane:
		return OtherDataPlaneText(s.OtherDataPlane)
	case explain.EventUncertainRoute:
		return RegexDiffersText(s.Uncertain) + "; " + routedText(s.Was)
	case explain.EventTLSHandshakeFails:
		return handshakeText(s.Listener, s.Handshake)
	case explain.EventTLSCAAssumed:
		return fmt.Sprintf("listener %s validates client certificates against %s, not the SPIFFE trust bundle: agpol assumes that CA issued the caller's SVID (else the TLS handshake fails)", s.Listener, s.CA)
	case explain.EventIgnoredMethod:
		return ignoredMethodText(s.IgnoredMethod)
	case explain.EventBackendAssumed:
		if s.Assumed != nil {
			return AssumedText(*s.Assumed)
		}
		return s.Note
	}
	if t := authPolicyText(s.Event, s.AuthPolicy); t != "" {
		return t
	}
	return s.Event
}

// handshakeText says why the caller fails the TLS handshake of a listener (an
// explain.Handshake* constant; docs/routing.md, "The TLS handshake").
func handshakeText(listener, why string) string {
	switch why {
	case explain.HandshakeNoCertificate:
		return fmt.Sprintf("listener %s requires a client certificate and the caller presents none: the TLS handshake fails before any HTTP request (the kube-agentic-networking translator sets RequireClientCertificate on every HTTPS listener, listener.go:695)", listener)
	case explain.HandshakeNotSVID:
		return fmt.Sprintf("listener %s validates client certificates against the SPIFFE trust bundle (no spec.tls.frontend CA for its port) and the caller's certificate is not a SPIFFE SVID: the TLS handshake fails before any HTTP request (listener.go:684-730)", listener)
	}
	return fmt.Sprintf("the caller fails the TLS handshake of listener %s (%s)", listener, why)
}

// mismatchText says why a rule did not match, e.g. "source: wants X; saw Y".
func mismatchText(m *explain.Mismatch) string {
	if m == nil {
		return ""
	}
	call, _ := m.Saw.(explain.Call)
	switch m.Field {
	case "source":
		if m.Test == "nobody" {
			if m.Principal != nil {
				return "source: " + PrincipalNote(m.Principal)
			}
			return "source: " + m.Note
		}
		wantID, _ := m.Wants.(string)
		sawID, _ := m.Saw.(string)
		wants, saw := identityText(wantID), identityText(sawID)
		if wants == saw && wantID != sawID {
			// The same sa:NS/NAME in another trust domain: only the SPIFFE IDs show the difference.
			wants, saw = wantID, sawID
		}
		if sawID == "" {
			saw = "no client certificate (anonymous)"
		}
		if m.Test == "namespace-defaulted" {
			return fmt.Sprintf("source: wants %s (the ServiceAccount names no namespace: it defaults to the policy's, %s); caller is %s", wants, m.Note, saw)
		}
		return fmt.Sprintf("source: wants %s; caller is %s", wants, saw)
	case "cel":
		switch m.Test {
		case "tools-call-only":
			return "CEL rules only match tools/call; saw " + callText(call)
		case "error":
			note := m.Note
			if m.CEL != nil {
				note = CELFailureText(m.CEL)
			}
			return fmt.Sprintf("CEL %v: evaluation error (no match): %s", m.Wants, note)
		}
		return fmt.Sprintf("CEL %v is false for %s", m.Wants, callText(call))
	case "mcp":
		p, _ := m.Wants.(*effective.Permission)
		return fmt.Sprintf("allows %s; saw %s", permissionText(p), callText(call))
	case "methods":
		return fmt.Sprintf("methods: wants %v; saw %v", m.Wants, m.Saw)
	case "paths":
		return fmt.Sprintf("paths: no path match for %v", m.Saw)
	case "headers":
		switch m.Test {
		case "absent":
			return fmt.Sprintf("headers: wants %s; header absent", m.Name)
		case "regex":
			return fmt.Sprintf("headers: %s wants /%v/; saw %q", m.Name, m.Wants, m.Saw)
		case "invalid":
			return fmt.Sprintf("headers: %s has an invalid regular expression", m.Name)
		}
		return fmt.Sprintf("headers: %s wants %q; saw %q", m.Name, m.Wants, m.Saw)
	case "hosts":
		return fmt.Sprintf("hosts: wants %v; saw %q", m.Wants, m.Saw)
	case "ports":
		return fmt.Sprintf("ports: wants %v; saw %v", m.Wants, m.Saw)
	}
	return fmt.Sprintf("%s: wants %v; saw %v", m.Field, m.Wants, m.Saw)
}

// callText is the request as a permission saw it, e.g. `tools/call "balance"`.
func callText(c explain.Call) string {
	if !c.MCP {
		return fmt.Sprintf("HTTP %s %s without MCP metadata", c.HTTPMethod, c.Path)
	}
	if c.Tool != "" {
		return fmt.Sprintf("%s %q", c.Method, c.Tool)
	}
	return c.Method
}

// identityText is a principal as a user types it: sa:NS/NAME for a ServiceAccount's
// SPIFFE ID (spiffe://TD/ns/NS/sa/NAME), else the SPIFFE ID itself.
func identityText(principal string) string {
	rest, ok := strings.CutPrefix(principal, "spiffe://")
	if !ok {
		return principal
	}
	parts := strings.Split(rest, "/")
	if len(parts) == 5 && parts[1] == "ns" && parts[3] == "sa" && parts[2] != "" && parts[4] != "" {
		return "sa:" + parts[2] + "/" + parts[4]
	}
	return principal
}
