package authpolicy

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kuadrantv1 "github.com/agpol/agpol/internal/apis/kuadrant/v1"
)

// Tri is a three-valued result: what cannot be known offline is Unknown, never guessed.
type Tri string

// Tri values.
const (
	True    Tri = "true"
	False   Tri = "false"
	Unknown Tri = "unknown"
)

// Request is what is known about a simulated request. Fields left empty are unknown.
type Request struct {
	Method string
	Host   string
	// Path may carry a query string ("/toys?id=1").
	Path string
	// Headers by name (matched case-insensitively); nil when the headers are not known.
	Headers map[string]string
	// SourceAddress is the client address; empty when unknown.
	SourceAddress string
	// Identity is what Authorino would have verified; nil when the request gives none
	// (then authentication stays unknown, as the credentials are not read).
	Identity *Identity
	// Metadata is what each named metadata rule would fetch (auth.metadata.NAME).
	Metadata map[string]any
	// Decisions are the answers of external authorizers by rule name: "allow" or "deny".
	Decisions map[string]string
	// Time is the request's time; zero when not given (a token's exp is then unknown).
	Time time.Time
}

// Check is one evaluated condition.
type Check struct {
	// Expression is the CEL predicate, or "selector operator value" for an Authorino pattern.
	Expression string `json:"expression"`
	Result     Tri    `json:"result"`
	// Why says why the result is unknown (or what failed), as data: none, one, or the
	// reasons of the entries of a patternRef, all or any.
	Why []Why `json:"-"`
	// Reason is Why's sentences: empty here, written by render.
	Reason string `json:"reason,omitempty"`
	// errs is set (with Result False) when evaluating the check fails on known data:
	// Authorino's pattern expressions stop at an error (pkg/jsonexp/expressions.go:111-151),
	// so an `any` fails at it instead of trying the next entry.
	errs bool
}

// Requirement is one effective rule as it applies to the request.
type Requirement struct {
	Group  string `json:"group"`
	Name   string `json:"name"`
	Source string `json:"source"`
	// Method is the Authorino method ("apiKey", "jwt", "patternMatching", "opa", ...).
	Method string `json:"method,omitempty"`
	// Need is what the request must present (authentication) or what must hold
	// (authorization), as data.
	Need Need `json:"-"`
	// Present is Need's sentence, or for an authorization rule Authorino decided
	// (Evaluation.Outcome) Why's: empty here, written by render.
	Present string `json:"present"`
	// Why is the authorization rule's result, when Authorino decided (RuleOutcome.Why).
	Why *Why `json:"-"`
	// Reads is where the credential is read from (authentication; nil when none is).
	Reads *CredentialSource `json:"-"`
	// Credential is Reads' text: empty here, written by render.
	Credential string `json:"credential,omitempty"`
	// Runs is the rule-level `when`: False means the rule is skipped for this request.
	Runs       Tri     `json:"runs"`
	Conditions []Check `json:"conditions,omitempty"`
	// Passes is the authorization outcome when it can be known offline.
	Passes Tri `json:"passes,omitempty"`
	// Priority is Authorino's evaluation order among rules of the section.
	Priority int `json:"priority,omitempty"`
}

// Evaluation is what the effective AuthPolicy asks of one request.
type Evaluation struct {
	// Applies is the policy-level `when`: False means the policy is skipped and the
	// request passes without authentication.
	Applies    Tri     `json:"applies"`
	Predicates []Check `json:"predicates,omitempty"`
	// Authentication rules: at least one that runs must succeed.
	Authentication []Requirement `json:"authentication,omitempty"`
	// Authorization rules: every one that runs must pass.
	Authorization []Requirement `json:"authorization,omitempty"`
	// Offline lists the attributes that cannot be known offline (AttrUnnamed for those
	// agpol cannot name; render writes the view's).
	Offline []string `json:"offline,omitempty"`
	// ProblemWhys are rule bodies that could not be read, as data.
	ProblemWhys []Why `json:"-"`
	// Problems are ProblemWhys' sentences: empty here, written by render.
	Problems []string `json:"problems,omitempty"`
	// Outcome is Authorino's answer, for a request that carries an identity.
	Outcome *Outcome `json:"outcome,omitempty"`
}

// Requirements evaluates the effective policy's policy-level and rule-level conditions
// on the request attributes supplied and lists what the request must present.
func Requirements(e *Effective, req Request) *Evaluation {
	return Decide(e, req, nil)
}

// Decide is Requirements, and for a request that carries an identity, Authorino's
// answer in env (nil: the defaults of an input without Secrets, RBAC or Kuadrant CR).
func Decide(e *Effective, req Request, env *Env) *Evaluation {
	ev := &Evaluation{Applies: True}
	if e == nil || len(e.Rules) == 0 {
		ev.Applies = False
		return ev
	}
	c := newConditionEvaluator(e, req)
	if w, ok := e.Rules["conditions#"]; ok {
		preds, err := parseWhen(w.Spec)
		if err != nil {
			ev.ProblemWhys = append(ev.ProblemWhys, Why{Code: ProblemWhen, Source: w.Source, Err: err.Error()})
		}
		var results []Tri
		for _, p := range preds {
			ch := c.predicate(p.Predicate)
			ev.Predicates = append(ev.Predicates, ch)
			results = append(results, ch.Result)
		}
		ev.Applies = and(results...)
	}
	for _, k := range e.Keys() {
		r := e.Rules[k]
		switch r.Group {
		case "authentication":
			spec, err := parseAuthentication(r.Spec)
			if err != nil {
				ev.ProblemWhys = append(ev.ProblemWhys, Why{Code: ProblemRule, Group: r.Group, Rule: r.Name, Source: r.Source, Err: err.Error()})
				continue
			}
			req := Requirement{Group: r.Group, Name: r.Name, Source: r.Source, Priority: spec.Priority}
			req.Conditions, req.Runs = c.conditions(spec.Conditions)
			req.Method, req.Need, req.Reads = authenticationNeed(spec)
			ev.Authentication = append(ev.Authentication, req)
		case "authorization":
			spec, err := parseAuthorization(r.Spec)
			if err != nil {
				ev.ProblemWhys = append(ev.ProblemWhys, Why{Code: ProblemRule, Group: r.Group, Rule: r.Name, Source: r.Source, Err: err.Error()})
				continue
			}
			req := Requirement{Group: r.Group, Name: r.Name, Source: r.Source, Priority: spec.Priority}
			req.Conditions, req.Runs = c.conditions(spec.Conditions)
			switch {
			case spec.PatternMatching != nil:
				req.Method = "patternMatching"
				var checks []Check
				checks, req.Passes = c.conditions(spec.PatternMatching.Patterns)
				req.Need = Need{Code: NeedPatterns, Expressions: make([]string, len(checks))}
				for i, ch := range checks {
					req.Need.Expressions[i] = ch.Expression
				}
				req.Conditions = append(req.Conditions, checks...)
			case spec.OPA != nil:
				req.Method, req.Need, req.Passes = "opa", Need{Code: NeedOPA}, Unknown
			case spec.KubernetesSubjectAccessReview != nil:
				req.Method, req.Need, req.Passes = "kubernetesSubjectAccessReview", Need{Code: NeedSAR}, Unknown
			case spec.SpiceDB != nil:
				req.Method, req.Need, req.Passes = "spicedb", Need{Code: NeedSpiceDB}, Unknown
			default:
				req.Need, req.Passes = Need{Code: NeedUnread}, Unknown
			}
			ev.Authorization = append(ev.Authorization, req)
		}
	}
	sort.SliceStable(ev.Authentication, func(i, j int) bool { return ev.Authentication[i].Priority < ev.Authentication[j].Priority })
	sort.SliceStable(ev.Authorization, func(i, j int) bool { return ev.Authorization[i].Priority < ev.Authorization[j].Priority })
	if req.Identity != nil && len(ev.ProblemWhys) == 0 {
		ev.Outcome = decide(e, req, env, c)
		for _, ro := range ev.Outcome.Authorization {
			for i := range ev.Authorization {
				if a := &ev.Authorization[i]; a.Name == ro.Name {
					a.Runs, a.Passes = ro.Runs, ro.Passes
					why := ro.Why
					a.Why = &why
				}
			}
		}
	}
	ev.Offline = c.offline()
	return ev
}

func selectorString(s *metav1.LabelSelector) string {
	if s == nil {
		return "<none>"
	}
	str := metav1.FormatLabelSelector(s)
	if str == "<none>" {
		return "{} (any)"
	}
	return str
}

func and(rs ...Tri) Tri {
	out := True
	for _, r := range rs {
		if r == False {
			return False
		}
		if r == Unknown {
			out = Unknown
		}
	}
	return out
}

func or(rs ...Tri) Tri {
	out := False
	for _, r := range rs {
		if r == True {
			return True
		}
		if r == Unknown {
			out = Unknown
		}
	}
	return out
}

// conditionEvaluator evaluates CEL predicates and Authorino patterns on one request.
type conditionEvaluator struct {
	req      Request
	vars     map[string]any
	unknowns []*cel.AttributePatternType
	patterns map[string][]kuadrantv1.PatternExpression
	missing  map[string]bool
	// auth is Authorino's auth object (identity, metadata, authorization) once the
	// identity is known (withAuth); nil before, when every auth.* attribute is unknown.
	// authJSON is its JSON, authUnknown the paths in it that are not known
	// ("auth.metadata.NAME").
	auth        map[string]any
	authJSON    string
	authUnknown []string
	// act holds vars and unknowns for CEL, made on first use (actErr if it cannot be).
	act    cel.PartialActivation
	actErr error
}

func newConditionEvaluator(e *Effective, req Request) *conditionEvaluator {
	c := &conditionEvaluator{req: req, patterns: map[string][]kuadrantv1.PatternExpression{}, missing: map[string]bool{}}
	for _, r := range e.Group("patterns") {
		if np, err := parseNamedPattern(r.Spec); err == nil {
			c.patterns[r.Name] = np.AllOf
		}
	}
	request := map[string]any{}
	unknownReq := func(field string) {
		c.unknowns = append(c.unknowns, cel.AttributePattern("request").QualString(field))
	}
	if req.Method != "" {
		request["method"] = req.Method
	} else {
		unknownReq("method")
	}
	if req.Host != "" {
		request["host"] = req.Host
	} else {
		unknownReq("host")
	}
	if req.Path != "" {
		request["path"] = req.Path
		u, err := url.Parse(req.Path)
		if err == nil {
			request["url_path"] = u.Path
			request["query"] = u.RawQuery
		}
	} else {
		unknownReq("path")
		unknownReq("url_path")
		unknownReq("query")
	}
	if req.Headers != nil {
		h := map[string]any{}
		for k, v := range req.Headers {
			h[strings.ToLower(k)] = v
		}
		request["headers"] = h
	} else {
		unknownReq("headers")
	}
	source := map[string]any{}
	if req.SourceAddress != "" {
		source["address"] = req.SourceAddress
	} else {
		c.unknowns = append(c.unknowns, cel.AttributePattern("source").QualString("address"))
	}
	c.vars = map[string]any{"request": request, "source": source}
	for _, v := range []string{"destination", "connection", "metadata", "filter_state"} {
		c.unknowns = append(c.unknowns, cel.AttributePattern(v))
	}
	return c
}

func (c *conditionEvaluator) offline() []string {
	out := make([]string, 0, len(c.missing))
	for k := range c.missing {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var (
	celOnce sync.Once
	celEnv  *cel.Env
	celErr  error
	// attrRe finds the well-known attributes an expression reads.
	attrRe = regexp.MustCompile(`\b(request|source|destination|auth|connection|metadata|filter_state)(\.[a-zA-Z_][a-zA-Z0-9_]*)+`)
)

func kuadrantEnv() (*cel.Env, error) {
	celOnce.Do(func() {
		var opts []cel.EnvOption
		for _, v := range []string{"request", "source", "destination", "auth", "connection", "metadata", "filter_state"} {
			opts = append(opts, cel.Variable(v, cel.MapType(cel.StringType, cel.DynType)))
		}
		opts = append(opts, ext.Strings())
		celEnv, celErr = cel.NewEnv(opts...)
	})
	return celEnv, celErr
}

// compiledPredicate is a `when` predicate compiled for partial evaluation, or why it
// cannot be.
type compiledPredicate struct {
	prg cel.Program
	// why is why it cannot be compiled; reason the error resolve reports for it.
	why    Why
	reason string
	// attrs are the well-known attributes the expression reads (attrRe), each once.
	attrs []string
}

// predicates memoises compiled predicates by expression (string → *compiledPredicate):
// compiling is most of the cost of Requirements, the same few expressions come back for
// every request on a path, and a cel.Program is safe for concurrent use.
var predicates sync.Map

func compilePredicate(expr string) *compiledPredicate {
	if p, ok := predicates.Load(expr); ok {
		return p.(*compiledPredicate)
	}
	p := &compiledPredicate{}
	for _, a := range attrRe.FindAllString(expr, -1) {
		if !contains(p.attrs, a) {
			p.attrs = append(p.attrs, a)
		}
	}
	env, err := kuadrantEnv()
	if err != nil {
		p.reason = err.Error()
		p.why = Why{Code: CheckError, Err: err.Error()}
	} else if ast, iss := env.Compile(expr); iss.Err() != nil {
		p.reason = "invalid CEL: " + iss.Err().Error()
		p.why = Why{Code: CheckInvalidCEL, Err: iss.Err().Error()}
	} else if p.prg, err = env.Program(ast, cel.EvalOptions(cel.OptPartialEval), cel.CostLimit(1_000_000)); err != nil {
		p.prg, p.reason = nil, err.Error()
		p.why = Why{Code: CheckError, Err: err.Error()}
	}
	v, _ := predicates.LoadOrStore(expr, p)
	return v.(*compiledPredicate)
}

// predicate evaluates a CEL predicate over Kuadrant's well-known attributes.
func (c *conditionEvaluator) predicate(expr string) Check {
	ch := Check{Expression: expr, Result: Unknown}
	p := compilePredicate(expr)
	if p.prg == nil {
		ch.Why = []Why{p.why}
		return ch
	}
	if c.act == nil && c.actErr == nil {
		c.act, c.actErr = cel.PartialVars(c.vars, append(c.unknowns, c.authPatterns()...)...)
	}
	if c.actErr != nil {
		ch.Why = []Why{{Code: CheckError, Err: c.actErr.Error()}}
		return ch
	}
	out, _, err := p.prg.Eval(c.act)
	switch {
	case err != nil && c.failsOnKnownAuth(p.attrs):
		// Authorino's CEL predicate returns the error (pkg/expressions/cel/expressions.go:39-48):
		// a rule's `when` then skips the rule (pkg/service/auth_pipeline.go:123-127,385-395) and
		// a patternMatching rule denies (pkg/evaluators/authorization/json.go:15-25).
		ch.Result, ch.errs = False, true
		ch.Why = []Why{{Code: CheckFailsOnAuth, Err: err.Error()}}
	case err != nil:
		ch.Why = []Why{{Code: CheckEvalOffline, Err: err.Error()}}
		c.noteAttributes(c.unknownAttrs(p.attrs))
	case types.IsUnknown(out):
		unknown := c.unknownAttrs(p.attrs)
		ch.Why = []Why{{Code: CheckDepends, Attrs: unknown}}
		c.noteAttributes(unknown)
	case out.Type() == types.BoolType:
		if out.Value() == true {
			ch.Result = True
		} else {
			ch.Result = False
		}
	default:
		ch.Why = []Why{{Code: CheckNotBool, Value: fmt.Sprint(out.Value())}}
	}
	return ch
}

// failsOnKnownAuth reports whether an evaluation error comes from data agpol knows: the
// expression reads Authorino's auth object, which is known (an identity was given), and
// every attribute it reads is known.
func (c *conditionEvaluator) failsOnKnownAuth(attrs []string) bool {
	if c.auth == nil {
		return false
	}
	readsAuth := false
	for _, a := range attrs {
		if !c.known(a) {
			return false
		}
		readsAuth = readsAuth || strings.HasPrefix(a, "auth.")
	}
	return readsAuth
}

// unknownAttrs lists the attributes of an expression (its compiledPredicate.attrs) that
// the request does not supply.
func (c *conditionEvaluator) unknownAttrs(attrs []string) []string {
	var out []string
	for _, a := range attrs {
		if !c.known(a) {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		out = []string{AttrUnnamed}
	}
	return out
}

// AttrUnnamed stands, in Evaluation.Offline and a CheckDepends Why's Attrs, for the
// attributes an expression reads that the request does not supply when agpol cannot
// name them; render writes it (render.AttributeText).
const AttrUnnamed = ""

// AttrWholeInput stands, in Evaluation.Offline and a WhyOPAInputUnknown Why's Attr, for
// an OPA policy's whole input when part of it is not known; render writes it
// (render.AttributeText).
const AttrWholeInput = "*"

func (c *conditionEvaluator) noteAttributes(unknown []string) {
	for _, a := range unknown {
		c.missing[a] = true
	}
}

func (c *conditionEvaluator) known(attr string) bool {
	parts := strings.Split(attr, ".")
	if parts[0] == "auth" && c.auth != nil {
		for _, u := range c.authUnknown {
			if attr == u || strings.HasPrefix(attr, u+".") || strings.HasPrefix(u, attr+".") {
				return false
			}
		}
		return true
	}
	m, ok := c.vars[parts[0]].(map[string]any)
	if !ok || len(parts) < 2 {
		return false
	}
	_, ok = m[parts[1]]
	return ok
}

// conditions evaluates rule-level `when` entries (all must hold).
func (c *conditionEvaluator) conditions(list []kuadrantv1.PatternExpressionOrRef) ([]Check, Tri) {
	var checks []Check
	var rs []Tri
	for _, p := range list {
		ch := c.condition(p, 0)
		checks = append(checks, ch)
		rs = append(rs, ch.Result)
	}
	return checks, and(rs...)
}

func (c *conditionEvaluator) condition(p kuadrantv1.PatternExpressionOrRef, depth int) Check {
	if depth > 16 {
		return Check{Expression: "…", Result: Unknown, Why: []Why{{Code: CheckTooDeep}}}
	}
	switch {
	case p.Predicate != "":
		return c.predicate(p.Predicate)
	case p.PatternRef != "":
		allOf, ok := c.patterns[p.PatternRef]
		if !ok {
			return Check{Expression: "patternRef " + p.PatternRef, Result: Unknown, Why: []Why{{Code: CheckNoPattern, Pattern: p.PatternRef}}}
		}
		var rs []Tri
		var whys []Why
		for _, pe := range allOf {
			ch := c.pattern(pe)
			rs = append(rs, ch.Result)
			whys = append(whys, ch.Why...)
		}
		return Check{Expression: "patternRef " + p.PatternRef, Result: and(rs...), Why: whys}
	case len(p.All) > 0 || len(p.Any) > 0:
		list, combine, word := p.All, and, "all"
		if len(p.Any) > 0 {
			list, combine, word = p.Any, or, "any"
		}
		var rs []Tri
		var exprs []string
		var whys []Why
		errs := false
		decides := False // what ends an all; an any ends at True
		if len(p.Any) > 0 {
			decides = True
		}
		for _, q := range list {
			ch := c.condition(q, depth+1)
			rs = append(rs, ch.Result)
			exprs = append(exprs, ch.Expression)
			whys = append(whys, ch.Why...)
			// Authorino stops at the first entry that decides an all (false) or an any
			// (true), and at an error (pkg/jsonexp/expressions.go:111-151).
			if errs = ch.errs; errs || ch.Result == decides {
				break
			}
		}
		out := combine(rs...)
		if errs {
			// An error after entries that may have decided is unknown; after entries that
			// did not decide, the whole fails with the error.
			out = False
			if slices.Contains(rs[:len(rs)-1], Unknown) {
				out, errs = Unknown, false
			}
		}
		return Check{Expression: word + "(" + strings.Join(exprs, "; ") + ")", Result: out, Why: whys, errs: errs}
	}
	return c.pattern(p.PatternExpression)
}

// authPatterns are the CEL unknowns of the auth attribute: all of it before the
// identity is known, else the paths withAuth was told are unknown.
func (c *conditionEvaluator) authPatterns() []*cel.AttributePatternType {
	if c.auth == nil {
		return []*cel.AttributePatternType{cel.AttributePattern("auth")}
	}
	var out []*cel.AttributePatternType
	for _, p := range c.authUnknown {
		parts := strings.Split(p, ".")
		ap := cel.AttributePattern(parts[0])
		for _, q := range parts[1:] {
			ap = ap.QualString(q)
		}
		out = append(out, ap)
	}
	return out
}

// withAuth returns an evaluator of the same request that knows Authorino's auth object
// (auth.identity, auth.metadata, ...), but for the paths in unknown.
func (c *conditionEvaluator) withAuth(auth map[string]any, unknown []string) *conditionEvaluator {
	d := &conditionEvaluator{req: c.req, unknowns: c.unknowns, patterns: c.patterns, missing: c.missing,
		auth: auth, authUnknown: unknown, vars: map[string]any{}}
	for k, v := range c.vars {
		d.vars[k] = v
	}
	d.vars["auth"] = auth
	data, err := json.Marshal(auth)
	if err != nil {
		d.actErr = err
	}
	d.authJSON = string(data)
	return d
}
