package kuadrantdiff

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/snapshot"
)

// Scenario is a set of objects (as a user writes them) and requests over them.
type Scenario struct {
	Name     string
	Objects  []*unstructured.Unstructured
	Requests []Request
	// AgpolObjects, when set, are what agpol reads instead of Objects (a test that
	// the harness sees differences gives agpol changed objects).
	AgpolObjects []*unstructured.Unstructured
	// AgpolRequests, when set, are the requests agpol decides instead of Requests (a
	// test that the harness sees a changed identity).
	AgpolRequests []Request
}

// Request is one request: where it enters and what it carries. Identity, Metadata and
// Decisions have the shape of agpol's request files (issue 33).
type Request struct {
	Gateway   string            `json:"gateway"` // ns/name
	Listener  string            `json:"listener,omitempty"`
	Method    string            `json:"method"`
	Host      string            `json:"host"`
	Path      string            `json:"path"`
	Headers   map[string]string `json:"headers,omitempty"`
	Identity  map[string]any    `json:"identity,omitempty"`
	Metadata  map[string]any    `json:"metadata,omitempty"`
	Decisions map[string]string `json:"decisions,omitempty"`
}

func (r Request) String() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// Kinds of comparison, reported apart.
const (
	KindPath      = "path"            // effective rule keys and sources per path
	KindPolicy    = "policy"          // Accepted / Enforced conditions per policy
	KindAuthConf  = "authconfig"      // where the AuthConfig is written
	KindAuthSpec  = "authconfig-spec" // the AuthConfig's rules: the operator's against agpol's effective rules
	KindSelection = "selection"       // wasm-shim stand-in: which path's action a request selects
	KindWhen      = "when"            // wasm-shim stand-in: top-level `when` predicates
	KindVerdict   = "verdict"         // Authorino's answer against agpol's verdict
	KindStatus    = "status"          // a denial's status: 401, 403 or the response override
	KindTied      = "tied"            // the paths whose action sets tie for a request in kuadrant-operator's order
)

// Disagreement is one difference between upstream and agpol.
type Disagreement struct {
	Scenario string
	Kind     string
	Request  int // -1 when not about a request
	Req      Request
	What     string
}

func (d Disagreement) String() string {
	if d.Request < 0 {
		return fmt.Sprintf("%s [%s]: %s", d.Scenario, d.Kind, d.What)
	}
	return fmt.Sprintf("%s [%s] request %d %s: %s", d.Scenario, d.Kind, d.Request, d.Req, d.What)
}

// Report sums up a run.
type Report struct {
	Scenarios int
	Requests  int
	// Compared counts comparisons by kind.
	Compared map[string]int
	// Verdicts counts (agpol verdict → upstream status) pairs of the compared requests.
	Verdicts      map[string]int
	Skipped       map[string]int
	Disagreements []Disagreement
}

func (r *Report) count(m *map[string]int, k string) {
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[k]++
}

// Add merges o into r.
func (r *Report) Add(o *Report) {
	r.Scenarios += o.Scenarios
	r.Requests += o.Requests
	for _, p := range []struct{ dst, src *map[string]int }{{&r.Compared, &o.Compared}, {&r.Verdicts, &o.Verdicts}, {&r.Skipped, &o.Skipped}} {
		for k, v := range *p.src {
			if *p.dst == nil {
				*p.dst = map[string]int{}
			}
			(*p.dst)[k] += v
		}
	}
	r.Disagreements = append(r.Disagreements, o.Disagreements...)
}

// Run compares one scenario: the oracle's answer against agpol's.
func Run(o *Oracle, sc *Scenario) (*Report, error) {
	rep := &Report{Scenarios: 1}
	up, err := o.Ask(sc)
	if err != nil {
		return nil, err
	}
	if up.Error != "" {
		return nil, fmt.Errorf("%s: oracle: %s", sc.Name, up.Error)
	}
	var raws []cluster.RawObject
	agpolObjects := sc.Objects
	if sc.AgpolObjects != nil {
		agpolObjects = sc.AgpolObjects
	}
	for _, x := range agpolObjects {
		raws = append(raws, cluster.NewRawObject(x.DeepCopy(), snapshot.Source{File: sc.Name}))
	}
	snap, err := cluster.Build(raws, nil, "kuadrantdiff")
	if err != nil {
		return nil, fmt.Errorf("agpol cannot load the scenario: %w", err)
	}
	m := model.New(snap)
	res := m.AuthPolicy()
	disagree := func(kind string, i int, rq Request, format string, args ...any) {
		rep.Disagreements = append(rep.Disagreements, Disagreement{Scenario: sc.Name, Kind: kind, Request: i, Req: rq, What: fmt.Sprintf(format, args...)})
	}

	// Per path: the effective rule keys and their sources.
	agpolPaths := map[string]*authpolicy.PathResult{}
	for _, p := range res.Paths {
		if p.Effective != nil && len(p.Effective.Policies) > 0 {
			agpolPaths[p.Path.ID()] = p
		}
	}
	seen := map[string]bool{}
	kuadrantNS := kuadrantNamespace(sc)
	unprogrammed := map[string]bool{}
	for _, np := range res.Topology.NotProgrammed {
		unprogrammed[np.Gateway+"|"+np.Gateway+"#"+np.Listener+"|"+np.Route] = true
	}
	for _, up := range up.Paths {
		seen[up.ID] = true
		if parts := strings.Split(up.ID, "|"); len(parts) == 5 && unprogrammed[strings.Join(parts[1:4], "|")] {
			// No hostname of the route is one the listener accepts: the Gateway never
			// programs the route there. policy-machinery links them all the same
			// (machinery/gateway_api_topology.go does not compare hostnames), so
			// kuadrant-operator keeps an effective policy and writes an AuthConfig for a
			// path no request takes; agpol leaves the path out and says why.
			rep.count(&rep.Skipped, "path the Gateway never programs (route hostnames the listener does not accept)")
			continue
		}
		rep.count(&rep.Compared, KindPath)
		ap := agpolPaths[up.ID]
		if ap == nil {
			disagree(KindPath, -1, Request{}, "path %s: kuadrant-operator has an effective policy (rules %s), agpol none", up.ID, ruleString(up.Rules))
			continue
		}
		mine := map[string]string{}
		for k, r := range ap.Effective.Rules {
			mine[k] = r.Source
		}
		if ruleString(mine) != ruleString(up.Rules) {
			disagree(KindPath, -1, Request{}, "path %s: kuadrant-operator rules %s, agpol %s", up.ID, ruleString(up.Rules), ruleString(mine))
		}
		if s, m := strings.Join(up.Sources, ","), strings.Join(ap.Effective.Sources(), ","); s != m {
			disagree(KindPath, -1, Request{}, "path %s: kuadrant-operator sources [%s], agpol [%s]", up.ID, s, m)
		}
		if up.AuthConfig != "" {
			rep.count(&rep.Compared, KindAuthConf)
			if up.AuthConfigNamespace != kuadrantNS {
				disagree(KindAuthConf, -1, Request{}, "path %s: AuthConfig written in %s, agpol expects Kuadrant's namespace %s", up.ID, up.AuthConfigNamespace, kuadrantNS)
			}
			// The AuthConfig's rules: what Authorino is given for the path.
			rep.count(&rep.Compared, KindAuthSpec)
			upRules, err := authConfigRules(up.Spec)
			if err != nil {
				return nil, fmt.Errorf("%s: the oracle's AuthConfig of %s: %w", sc.Name, up.ID, err)
			}
			mine, err := impliedRules(ap.Effective.Rules)
			if err != nil {
				return nil, fmt.Errorf("%s: agpol's rules of %s: %w", sc.Name, up.ID, err)
			}
			if d := compareAuthConfig(upRules, mine); len(d) > 0 {
				disagree(KindAuthSpec, -1, Request{}, "path %s: AuthConfig %s", up.ID, joinDiffs(d))
			}
		}
	}
	for id := range agpolPaths {
		if !seen[id] {
			disagree(KindPath, -1, Request{}, "path %s: agpol has an effective policy (rules %s), kuadrant-operator none", id, ruleString(rulesOf(agpolPaths[id])))
		}
	}

	// Per policy: the conditions.
	for _, up := range up.Policies {
		rep.count(&rep.Compared, KindPolicy)
		pr := res.Policy(up.Policy)
		if pr == nil {
			disagree(KindPolicy, -1, Request{}, "policy %s: agpol does not see it", up.Policy)
			continue
		}
		want := pr.Condition
		var got *Condition
		for i := range up.Conditions {
			if up.Conditions[i].Type == want.Type {
				got = &up.Conditions[i]
			}
		}
		if want.Type == "Enforced" {
			for _, c := range up.Conditions {
				if c.Type == "Accepted" && c.Status != "True" {
					disagree(KindPolicy, -1, Request{}, "policy %s: kuadrant-operator Accepted=%s (%s: %s), agpol accepts it (%s)", up.Policy, c.Status, c.Reason, c.Message, pr.Enforcement)
				}
			}
		}
		switch {
		case got == nil:
			disagree(KindPolicy, -1, Request{}, "policy %s: kuadrant-operator writes no %s condition (%s), agpol %s=%s %s: %s", up.Policy, want.Type, condString(up.Conditions), want.Type, want.Status, want.Reason, want.Message)
		case got.Status != want.Status || got.Reason != want.Reason || !sameMessage(got.Message, want.Message):
			disagree(KindPolicy, -1, Request{}, "policy %s: kuadrant-operator %s=%s %s: %q, agpol %s=%s %s: %q", up.Policy, got.Type, got.Status, got.Reason, got.Message, want.Type, want.Status, want.Reason, want.Message)
		}
	}

	// Per request: the verdict, counted also by the kinds of rule the AuthConfig has
	// that only a request's data decides (SubjectAccessReview, metadata).
	ruleKinds := map[string][]string{}
	for _, p := range up.Paths {
		for _, k := range []string{"kubernetesSubjectAccessReview", "metadata"} {
			if p.AuthConfig != "" && strings.Contains(string(p.Spec), `"`+k+`"`) {
				ruleKinds[p.AuthConfig] = append(ruleKinds[p.AuthConfig], k)
			}
		}
	}
	sim := explain.New(m, []effective.Semantics{effective.Reference()}, effective.DefaultTrustDomain)
	for i, rq := range sc.Requests {
		rep.Requests++
		if i >= len(up.Requests) {
			return nil, fmt.Errorf("%s: the oracle answered %d requests of %d", sc.Name, len(up.Requests), len(sc.Requests))
		}
		mine := rq
		if sc.AgpolRequests != nil {
			mine = sc.AgpolRequests[i]
		}
		compareRequest(rep, i, rq, mine, up.Requests[i], ruleKinds[up.Requests[i].AuthConfig], sim, disagree)
	}
	return rep, nil
}

// compareRequest compares the oracle's answer to rq with agpol's to mine (rq itself
// but in the test that the harness can fail).
func compareRequest(rep *Report, i int, rq, mine Request, up OracleRequest, ruleKinds []string, sim *explain.Simulator, disagree func(string, int, Request, string, ...any)) {
	if up.Error != "" {
		disagree(KindVerdict, i, rq, "the oracle could not decide: %s", up.Error)
		return
	}
	if up.Unsupported != "" {
		rep.count(&rep.Skipped, "oracle: "+up.Unsupported)
		return
	}
	ns, gname, _ := strings.Cut(rq.Gateway, "/")
	r := &explain.Request{From: explain.Caller{Kind: explain.CallerAnonymous}, Gateway: &explain.NamespacedName{Namespace: ns, Name: gname},
		Listener: rq.Listener, HTTP: explain.HTTP{Method: rq.Method, Path: rq.Path, Host: rq.Host, Headers: copyHeaders(rq.Headers), Time: time.Now()}}
	if mine.Identity != nil {
		// The request file's identity, as agpol's request files carry it; the oracle
		// verifies its credential now (token expiry), so agpol decides at the same time.
		id := &authpolicy.Identity{}
		b, _ := json.Marshal(mine.Identity)
		if err := json.Unmarshal(b, id); err != nil {
			disagree(KindVerdict, i, rq, "agpol cannot read the identity: %v", err)
			return
		}
		r.Credentials = &explain.Credentials{Identity: id}
	}
	if mine.Metadata != nil {
		// What the request says its metadata rules fetch; the oracle serves it at the
		// rules' URLs.
		if r.Credentials == nil {
			r.Credentials = &explain.Credentials{}
		}
		r.Credentials.Metadata = mine.Metadata
	}
	results, err := sim.Explain(explain.Options{AuthPolicy: true}, r)
	if err != nil {
		disagree(KindVerdict, i, rq, "agpol: %v", err)
		return
	}
	// The Kuadrant part of agpol's answer: the AuthPolicy path and evaluation of the
	// route rule agpol routes the request to (the same for every backend choice).
	var ap *explain.AuthPolicyInfo
	var verdict string
	var routed bool
	for _, x := range results {
		if x.Path.Route != "" && x.Path.RuleIndex != nil {
			routed = true
		}
		if x.AuthPolicy != nil {
			ap = x.AuthPolicy
		}
		if verdict == "" || x.Verdict != verdict && x.Verdict == explain.Indeterminate {
			verdict = x.Verdict
		}
	}
	if !routed {
		// agpol denies it (no route); the client gets 404 from Envoy's router, or the
		// auth step's denial first when the shim still selects an action set.
		rep.count(&rep.Skipped, "agpol routes the request nowhere")
		if up.ActionSet != "" || len(up.Tied) > 0 {
			rep.count(&rep.Skipped, "agpol routes the request nowhere, the wasm-shim stand-in selects an action set")
		}
		return
	}
	// Selection: the path whose action the shim runs, against agpol's path.
	agpolHas := ap != nil && ap.Evaluation != nil && ap.Unprogrammed == nil
	tiedSelection := len(up.Tied) > 0
	sameStatus := true
	if tiedSelection {
		// kuadrant-operator's order does not fix which of the tied paths' actions the
		// wasm-shim runs: agpol must name the same tied paths, say indeterminate when
		// they answer differently, and otherwise answer as its own path does (tied.go).
		var ok bool
		if up, sameStatus, ok = compareTied(rep, i, rq, r, up, ap, verdict, sim, disagree); !ok {
			return
		}
	}
	if !tiedSelection && (up.PathID != "" || agpolHas) {
		rep.count(&rep.Compared, KindSelection)
		if up.PathID == "" && agpolHas {
			disagree(KindSelection, i, rq, "agpol applies the AuthPolicy of %s, the wasm-shim stand-in selects no auth action", ap.Path)
			return
		}
		if up.PathID != "" && !agpolHas {
			if ap != nil && ap.Unprogrammed != nil {
				disagree(KindSelection, i, rq, "agpol says Kuadrant does not program this Gateway (%s, data plane %s), the wasm-shim stand-in runs the auth action of %s", ap.Unprogrammed.Ref, ap.Unprogrammed.DataPlane.DataPlane, up.PathID)
			} else {
				disagree(KindSelection, i, rq, "agpol applies no AuthPolicy, the wasm-shim stand-in runs the auth action of %s", up.PathID)
			}
			return
		}
		if !strings.HasSuffix(up.PathID, pathTail(ap.Path)) {
			disagree(KindSelection, i, rq, "agpol applies the AuthPolicy of %s, the wasm-shim stand-in that of %s", ap.Path, up.PathID)
			return
		}
		if agpolHas && len(ap.Tied) > 0 {
			rep.count(&rep.Compared, KindTied)
			disagree(KindTied, i, rq, "agpol says the wasm-shim may run the AuthPolicy of %s too, the stand-in finds no tie", tiedPaths(ap))
			return
		}
	}
	if !agpolHas {
		rep.count(&rep.Skipped, "no AuthPolicy on the path")
		return
	}
	// The top-level `when`.
	rep.count(&rep.Compared, KindWhen)
	applies := ap.Evaluation.Applies
	if applies != authpolicy.Unknown && (applies == authpolicy.True) != up.AuthApplies {
		disagree(KindWhen, i, rq, "the AuthPolicy's when: agpol %s, the wasm-shim stand-in %v", applies, up.AuthApplies)
		return
	}
	// The verdict.
	upVerdict := "allow"
	if up.Status != 200 {
		upVerdict = fmt.Sprintf("deny-%d", up.Status)
	}
	kind := "none"
	if r.Credentials != nil && r.Credentials.Identity != nil {
		kind = r.Credentials.Identity.Kind()
	}
	rep.count(&rep.Verdicts, kind+": "+verdict+" → "+upVerdict)
	if verdict == explain.Indeterminate {
		out := ap.Evaluation.Outcome
		why := ""
		if out != nil {
			why = render.AuthorinoReason(out)
			if os.Getenv("KUADRANT_DIFF_WHY") != "" {
				fmt.Fprintf(os.Stderr, "indeterminate %s → %s: %s\n", rq, upVerdict, why)
			}
		}
		class := indeterminateClass(why)
		if len(ap.Tied) > 0 && out != nil && out.Verdict != authpolicy.OutcomeIndeterminate {
			class = "a tied path's answer not known offline"
		}
		rep.count(&rep.Skipped, "agpol indeterminate: "+class)
		return
	}
	rep.count(&rep.Compared, KindVerdict)
	for _, k := range ruleKinds {
		rep.count(&rep.Compared, KindVerdict+" with "+k)
	}
	if (verdict == explain.Allow) != (up.Status == 200) {
		disagree(KindVerdict, i, rq, "agpol %s, Authorino %d (code %d %s) with AuthConfig %s%s", verdict, up.Status, up.Code, up.Message, up.AuthConfig, outcomeString(ap))
		return
	}
	// The status of a denial: 401 (unauthenticated) or 403 (unauthorized), or the
	// policy's response override.
	if out := ap.Evaluation.Outcome; sameStatus && out != nil && out.Verdict == authpolicy.OutcomeDeny && up.Status != 200 {
		rep.count(&rep.Compared, KindStatus)
		if out.Code != up.Status {
			disagree(KindStatus, i, rq, "agpol %d, Authorino %d (code %d %s) with AuthConfig %s%s", out.Code, up.Status, up.Code, up.Message, up.AuthConfig, outcomeString(ap))
		}
	}
}

// indeterminateClass groups agpol's reasons for an indeterminate verdict, to count
// the comparisons skipped.
func indeterminateClass(reason string) string {
	for _, c := range []struct{ in, class string }{
		{"holds no Role, ClusterRole or binding", "SubjectAccessReview without RBAC in the input"},
		{"SubjectAccessReview", "SubjectAccessReview"},
		{"at the same priority", "equal-priority race"},
		{"auth.metadata", "metadata the request does not give"},
		{"plain identity", "plain identity"},
		{"CA Secret", "x509 CA Secret not in the input"},
	} {
		if strings.Contains(reason, c.in) {
			return c.class
		}
	}
	if reason == "" {
		return "no outcome (a request without identity: authentication not known offline)"
	}
	return "other"
}

// outcomeString is agpol's reason, for a disagreement's text.
func outcomeString(ap *explain.AuthPolicyInfo) string {
	if ap == nil || ap.Evaluation == nil || ap.Evaluation.Outcome == nil {
		return ""
	}
	return "; agpol: " + render.AuthorinoReason(ap.Evaluation.Outcome)
}

// pathTail is the part of a readable agpol path that kuadrant-operator's path ID ends
// with ("…|ns/gw|ns/gw#l|ns/r|ns/r#x"). explain names the rule as its path line does:
// "gateway ns/gw › listener l › route ns/r#x", or "route ns/r[i]" for an unnamed rule,
// which kuadrant-operator calls rule-(i+1); Path.String writes "route ns/r › rule x".
func pathTail(readable string) string {
	var gw, listener, route, rule string
	for _, part := range strings.Split(readable, " › ") {
		k, v, _ := strings.Cut(part, " ")
		switch k {
		case "gateway":
			gw = v
		case "listener":
			listener = v
		case "route":
			route = v
			if r, name, ok := strings.Cut(v, "#"); ok {
				route, rule = r, name
			} else if r, idx, ok := strings.Cut(v, "["); ok {
				if i, err := strconv.Atoi(strings.TrimSuffix(idx, "]")); err == nil {
					route, rule = r, fmt.Sprintf("rule-%d", i+1)
				}
			}
		case "rule":
			rule = v
		}
	}
	return gw + "|" + gw + "#" + listener + "|" + route + "|" + route + "#" + rule
}

func copyHeaders(h map[string]string) map[string]string {
	if h == nil {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[strings.ToLower(k)] = v
	}
	return out
}

func rulesOf(p *authpolicy.PathResult) map[string]string {
	out := map[string]string{}
	for k, r := range p.Effective.Rules {
		out[k] = r.Source
	}
	return out
}

func ruleString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + "←" + m[k])
	}
	b.WriteString("}")
	return b.String()
}

func condString(cs []Condition) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s=%s %s", c.Type, c.Status, c.Reason))
	}
	return strings.Join(parts, "; ")
}

// sameMessage compares condition messages; kuadrant-operator lists the policies of
// an Overridden message in an order of its own, so lists in brackets compare as sets.
func sameMessage(a, b string) bool {
	if a == b {
		return true
	}
	ia, ib := strings.Index(a, "["), strings.Index(b, "[")
	if ia < 0 || ib < 0 || a[:ia] != b[:ib] || !strings.HasSuffix(a, "]") || !strings.HasSuffix(b, "]") {
		return false
	}
	fa, fb := strings.Fields(a[ia+1:len(a)-1]), strings.Fields(b[ib+1:len(b)-1])
	sort.Strings(fa)
	sort.Strings(fb)
	return strings.Join(fa, " ") == strings.Join(fb, " ")
}

// kuadrantNamespace is the namespace of the scenario's Kuadrant CR (kuadrant-system
// without one).
func kuadrantNamespace(sc *Scenario) string {
	for _, o := range sc.Objects {
		if o.GetKind() == "Kuadrant" {
			return o.GetNamespace()
		}
	}
	return "kuadrant-system"
}
