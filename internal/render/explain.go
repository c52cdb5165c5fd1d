package render

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/explain"
)

// PathLine is "gw ns/name → route ns/name → xbackend ns/name".
func PathLine(p explain.PathInfo) string {
	parts := []string{"gw " + p.Gateway}
	if p.Listener != "" && (p.ListenerAssumed != "" || p.ListenerChoice != nil) {
		parts[0] += " (" + p.Listener + ", assumed)" // the request named no listener: see writeListenerNotes
	} else if p.Listener != "" {
		parts[0] += " (" + p.Listener + ")"
	}
	if p.DataPlaneAssumed != "" || p.DataPlaneAssumption != nil {
		parts[0] += " [data plane assumed]" // the GatewayClass is not in the input: see writeListenerNotes
	}
	if p.Route != "" {
		parts = append(parts, "route "+p.RouteRule())
	}
	if p.Backend != "" {
		b := strings.ToLower(p.BackendKind) + " " + strings.TrimPrefix(p.Backend, p.BackendKind+" ")
		if p.Weight != nil {
			b += fmt.Sprintf(" (weight %d)", *p.Weight)
		}
		if p.BackendAssumed != "" || p.BackendAssumption != nil {
			b += " [assumed to exist]" // not in the input: see writeListenerNotes
		}
		parts = append(parts, b)
	}
	if t := PathProblem(p); t != "" {
		parts = append(parts, t)
	}
	return strings.Join(parts, " → ")
}

// ExplainText writes results as text: verdict first, then one line per step, each line
// wrapped to TextWidth columns (continuation lines indented under their first).
func ExplainText(w io.Writer, results []*explain.Result, st Styler) error {
	w = st.Writer(w)
	var b bytes.Buffer
	for i, r := range results {
		if i > 0 {
			fmt.Fprintln(w)
		}
		b.Reset()
		writeResult(&b, r, st)
		for _, l := range strings.SplitAfter(b.String(), "\n") {
			if l = strings.TrimSuffix(l, "\n"); l != "" {
				fmt.Fprintln(w, wrapLine(l, TextWidth))
			}
		}
	}
	return nil
}

func writeResult(w io.Writer, r *explain.Result, st Styler) {
	// The headline holds the verdict and why; the path has a line of its own.
	head := st.Verdict(&r.Decision) + " " + r.Request.Describe() + ": " + DecisionReason(&r.Decision)
	if r.Name != "" && !strings.HasPrefix(r.Name, "request-") && r.Name != "explain" {
		head = st.Bold(r.Name) + ": " + head
	}
	head += "\n  path: " + PathLine(r.Path)
	fmt.Fprintln(w, head)
	fmt.Fprintf(w, "  decided by %s at level %s (semantics %s)\n", st.Bold(r.DecidedBy), r.Level, r.Semantics)
	if r.Disagreement {
		fmt.Fprintln(w, "  "+st.Yellow("the semantics evaluated disagree on this request"))
	}
	for _, b := range r.Branches {
		fmt.Fprintf(w, "  if %s: %s (%s at %s)\n", b.Assume.String(), strings.ToUpper(b.Decision), b.DecidedBy, b.Level)
	}
	writeListenerNotes(w, r, st)
	if len(r.Trace) > 0 {
		writeTree(w, "  ", traceTree(r.Trace, st))
	}
	if ap := r.AuthPolicy; ap != nil {
		writeAuthPolicy(w, ap, st)
	}
	if x := r.Expect; x != nil {
		if x.Passed {
			fmt.Fprintln(w, "  "+st.Green("expectation passed"))
		} else {
			for _, f := range expectationFailures(x) {
				fmt.Fprintln(w, "  "+st.Red("expectation failed: "+f))
			}
		}
	}
}

// writeListenerNotes says which listener agpol assumed for a request that named none,
// and on which other listeners the verdict would differ.
func writeListenerNotes(w io.Writer, r *explain.Result, st Styler) {
	if a := dataPlaneAssumed(&r.Path); a != "" {
		writeWrapped(w, "  ", "assumed: "+a, st.Dim)
	}
	if a := listenerAssumed(r); a != "" {
		writeWrapped(w, "  ", "assumed: "+a, st.Dim)
	}
	if a := backendAssumed(&r.Path); a != "" {
		writeWrapped(w, "  ", "assumed: "+a, st.Dim)
	}
	for _, o := range r.OtherListeners {
		writeWrapped(w, "  ", otherListener(o), st.Yellow)
	}
}

// writeWrapped writes text after indent in lines of at most TextWidth columns (wrapLine:
// continuation lines two spaces further), each styled.
func writeWrapped(w io.Writer, indent, text string, style func(string) string) {
	for _, l := range strings.Split(wrapLine(indent+strings.Join(strings.Fields(text), " "), TextWidth), "\n") {
		t := strings.TrimLeft(l, " ")
		fmt.Fprintln(w, l[:len(l)-len(t)]+style(t))
	}
}

func otherListener(o explain.ListenerVerdict) string {
	return fmt.Sprintf("on listener %s (%s) the verdict would be %s (%s at %s): the answer depends on how the agent connects",
		o.Listener, o.Protocol, strings.ToUpper(o.Decision), o.DecidedBy, o.Level)
}

// traceTree is the trace as a tree: the steps in evaluation order, each run of steps
// of one level and phase (e.g. "gateway allow") under a branch of its own.
func traceTree(trace []explain.Step, st Styler) *node {
	root := &node{text: "trace:"}
	var group *node
	for i, s := range trace {
		if i == 0 || s.Level != trace[i-1].Level || s.Phase != trace[i-1].Phase {
			group = root.add(st.Bold(groupLabel(s)))
		}
		group.add(stepText(s, st))
	}
	return root
}

// groupLabel names a run of trace steps: "gateway allow", "backend default verdict";
// steps of no level (nothing to evaluate, or the data plane's own answer) are the
// "default verdict" alone, not "none default".
func groupLabel(s explain.Step) string {
	phase := s.Phase
	if phase == "default" {
		phase = "default verdict"
	}
	if s.Level == "" || s.Level == string(effective.LevelNone) {
		return phase
	}
	return s.Level + " " + phase
}

// stepText is one trace step: its outcome, the policy and rule, where they are
// written, and why.
func stepText(s explain.Step, st Styler) string {
	var b strings.Builder
	outcome := s.Outcome
	switch s.Outcome {
	case explain.OutcomeMatched:
		outcome = st.Green(outcome)
	case explain.OutcomeNotMatched:
		outcome = st.Red(outcome)
	case explain.OutcomeConsulted:
		outcome = st.Yellow(outcome)
	case explain.OutcomeSkipped, explain.OutcomeInfo:
		outcome = st.Dim(outcome)
	}
	b.WriteString(outcome)
	if s.Policy != "" {
		name := s.Policy
		if s.Rule != "" {
			name += "#" + s.Rule
		}
		b.WriteString(" " + st.Cyan(name))
	}
	if src := stepSource(s); src != "" {
		b.WriteString(" (" + src + ")")
	}
	if reason := StepReason(s); reason != "" {
		b.WriteString(": " + reason)
	}
	return b.String()
}

// SimulateSummary is "N passed, M failed" for results with expectations.
func SimulateSummary(results []*explain.Result) (passed, failed int) {
	for _, r := range results {
		if r.Expect == nil {
			continue
		}
		if r.Expect.Passed {
			passed++
		} else {
			failed++
		}
	}
	return passed, failed
}

// SimulateText writes a verdict line and a path line per result, then the failures in detail.
func SimulateText(w io.Writer, results []*explain.Result, st Styler) error {
	w = st.Writer(w)
	for _, r := range results {
		if err := SimulateTextResult(w, r, st); err != nil {
			return err
		}
	}
	return nil
}

// SimulateTextResult writes the lines of one result of SimulateText (and its failures).
// w must be st.Writer's.
func SimulateTextResult(w io.Writer, r *explain.Result, st Styler) error {
	mark := " "
	if r.Expect != nil {
		if r.Expect.Passed {
			mark = st.Green("✓")
		} else {
			mark = st.Red("✗")
		}
	}
	sem := ""
	if !r.Primary {
		sem = " [" + r.Semantics + "]"
	}
	// A verdict line, then a path line: the request and where it goes.
	fmt.Fprintln(w, wrapLine(fmt.Sprintf("%s %s%s: %s by %s at %s", mark, r.Name, sem, st.Verdict(&r.Decision), r.DecidedBy, r.Level), TextWidth))
	_, err := fmt.Fprintln(w, wrapLine(fmt.Sprintf("    %s → %s", r.Request.Describe(), PathLine(r.Path)), TextWidth))
	for _, o := range r.OtherListeners {
		writeWrapped(w, "    ", otherListener(o), st.Yellow)
	}
	if r.Expect != nil && !r.Expect.Passed {
		for _, f := range expectationFailures(r.Expect) {
			fmt.Fprintln(w, "    "+st.Red(f))
		}
		_, err = fmt.Fprintln(w, wrapLine("    "+DecisionReason(&r.Decision), TextWidth))
	}
	return err
}

// writeAuthPolicy shows what Kuadrant's effective AuthPolicy asks of the request: beside
// the verdict, or as the verdict where it decides (AuthPolicyInfo.Decides).
func writeAuthPolicy(w io.Writer, ap *explain.AuthPolicyInfo, st Styler) {
	esc := EscapeTerminal
	root := &node{text: fmt.Sprintf("%s %s (%s)", st.Bold("Kuadrant AuthPolicy on"), esc(ap.Path), strings.Join(ap.Policies, ", "))}
	defer writeTree(w, "  ", root)
	switch {
	case ap.Decides:
		root.add(st.Dim("the verdict above: no XAccessPolicy runs on this Gateway's data plane"))
	case ap.Unprogrammed != nil:
		root.add(st.Dim("not programmed, so not part of the verdict: " + esc(unprogrammedText(ap.Unprogrammed))))
	default:
		root.add(st.Dim("not part of the verdict above, the access policies'; Kuadrant enforces it only on the Gateways it programs (Istio, Envoy Gateway)"))
	}
	if ap.V1beta2 != nil {
		root.add("kuadrant.io/v1beta2: " + esc(v1beta2Reason(ap.V1beta2)))
	}
	e := evaluationView(ap.Evaluation)
	if e == nil {
		return
	}
	switch e.Applies {
	case authpolicy.False:
		root.add("policy-level when is false for this request: Kuadrant lets it through unauthenticated")
	case authpolicy.Unknown:
		root.add("policy-level when cannot be decided offline: the requirements below apply if it holds")
	}
	for _, c := range e.Predicates {
		root.add(fmt.Sprintf("when %s: %s%s", esc(c.Expression), c.Result, reasonSuffix(c.Reason)))
	}
	for _, rq := range e.Authentication {
		root.add(fmt.Sprintf("authentication %s (%s): must present %s%s%s", esc(rq.Name), rq.Source, esc(rq.Present),
			credentialSuffix(rq.Credential), runsSuffix(rq.Runs)))
	}
	for _, rq := range e.Authorization {
		item := fmt.Sprintf("authorization %s (%s): %s%s", esc(rq.Name), rq.Source, esc(rq.Present), runsSuffix(rq.Runs))
		if rq.Passes != "" {
			item += fmt.Sprintf(" [passes: %s]", rq.Passes)
		}
		root.add(item)
	}
	for _, o := range e.Offline {
		root.add(st.Dim("not known offline: " + esc(o)))
	}
	for _, p := range e.Problems {
		root.add(st.Yellow("problem: " + esc(p)))
	}
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return " (" + EscapeTerminal(r) + ")"
}

func credentialSuffix(c string) string {
	if c == "" {
		return ""
	}
	return ", " + EscapeTerminal(c)
}

func runsSuffix(t authpolicy.Tri) string {
	switch t {
	case authpolicy.False:
		return " [skipped: its when is false]"
	case authpolicy.Unknown:
		return " [runs only if its when holds; not known offline]"
	}
	return ""
}
