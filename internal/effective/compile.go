package effective

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"sort"
	"strings"

	"github.com/agpol/agpol/internal/apis/agentic/v0alpha0"
	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
	"github.com/agpol/agpol/internal/snapshot"
)

// builtins are the legacy translator's three allow policies, attributed to p.
func builtins(p *Policy) []*Rule {
	src := fixedSource(p.Source)
	return []*Rule{
		{Name: BuiltinInitialize, Policy: p, Index: -1, Builtin: true, Principal: Principal{Any: true},
			Permission: Permission{Methods: []MethodMatcher{{Name: "initialize"}, {Name: "notifications/initialized"}, {Name: "tools/list"}},
				Why: PermissionBuiltin}, Source: src},
		{Name: BuiltinHTTPGet, Policy: p, Index: -1, Builtin: true, Principal: Principal{Any: true},
			Permission: Permission{HTTPMethods: []string{"GET"}, Why: PermissionBuiltin}, Source: src},
		{Name: BuiltinSessionClose, Policy: p, Index: -1, Builtin: true, Principal: Principal{Any: true},
			Permission: Permission{SessionClose: true, Why: PermissionBuiltin}, Source: src},
	}
}

func (e *Engine) newPolicy(p *snapshot.XAccessPolicy, action string) *Policy {
	return &Policy{Namespace: p.Namespace, Name: p.Name, Action: action, Obj: p, Source: p.Source,
		CreationStamp: p.CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z")}
}

// finish sorts the rules into RBAC map order and adds built-ins for the per-policy combination.
func (e *Engine) finish(cp *Policy, perPolicy bool) *Policy {
	for _, r := range cp.All {
		if r.CELError == "" {
			cp.Rules = append(cp.Rules, r)
		}
	}
	cp.RuleLess = len(cp.All) == 0
	if perPolicy && e.Semantics.BaseMethods == BaseMethodsBuiltin && cp.Action != string(v1alpha1.ActionTypeExternalAuth) {
		cp.Rules = append(cp.Rules, builtins(cp)...)
	}
	sort.SliceStable(cp.Rules, func(i, j int) bool { return cp.Rules[i].Name < cp.Rules[j].Name })
	cp.id = cp.Namespace + "/" + cp.Name
	for _, r := range append(append([]*Rule(nil), cp.All...), cp.Rules...) {
		r.id = cp.id + "#" + r.Name
	}
	if cp.ExtAuth != nil {
		b, _ := json.Marshal(cp.ExtAuth)
		sum := sha256.Sum256(b)
		cp.ExtAuthHash = hex.EncodeToString(sum[:])
	}
	return cp
}

// Compile compiles one policy as a level would (per-policy rules, no built-ins), for
// describing a policy whatever its admission: a v0alpha0 object through the legacy
// compiler.
func (e *Engine) Compile(p *snapshot.XAccessPolicy) *Policy {
	if p.Legacy != nil {
		return e.compileLegacy(p)
	}
	return e.compile(p, false)
}

// compile compiles a v1alpha1 policy.
func (e *Engine) compile(p *snapshot.XAccessPolicy, perPolicy bool) *Policy {
	cp := e.newPolicy(p, string(p.Spec.Action))
	cp.ExtAuth = p.Spec.ExternalAuth
	srcs := policyRuleSources(e.Snapshot, p.Source, len(p.Spec.Rules))
	for i := range p.Spec.Rules {
		r := &p.Spec.Rules[i]
		cr := &Rule{Name: r.Name, Policy: cp, Index: i, Source: srcs.rule(i)}
		cr.Principal = e.principal(string(r.Source.Type), r.Source.SPIFFE != nil, spiffeOf(r.Source.SPIFFE), saOf(r.Source.ServiceAccount), p.Namespace)
		cr.Permission, cr.CELError = e.permission(r.Authorization)
		cp.All = append(cp.All, cr)
	}
	return e.finish(cp, perPolicy)
}

func spiffeOf(s *v1alpha1.AuthorizationSourceSPIFFE) string {
	if s == nil {
		return ""
	}
	return string(*s)
}

func saOf(sa *v1alpha1.AuthorizationSourceServiceAccount) *[2]string {
	if sa == nil {
		return nil
	}
	return &[2]string{sa.Namespace, sa.Name}
}

// principal maps a rule source to the peer principal it requires (docs/semantics.md#principals, #source-fail-open).
func (e *Engine) principal(typ string, hasSPIFFE bool, spiffe string, sa *[2]string, policyNS string) Principal {
	switch {
	case typ == string(v1alpha1.AuthorizationSourceTypeSPIFFE) && hasSPIFFE:
		return Principal{Value: spiffe}
	case typ == string(v1alpha1.AuthorizationSourceTypeServiceAccount) && sa != nil:
		pr := Principal{Value: ServiceAccountSPIFFEID(e.TrustDomain, policyNS, sa[0], sa[1]), ServiceAccount: true}
		if sa[0] == "" {
			pr.DefaultedNamespace = policyNS
		}
		return pr
	case typ == "" && !hasSPIFFE && sa == nil:
		return Principal{Any: true, Omitted: true, Why: SourceOmitted}
	}
	pr := Principal{Why: SourceTypeWithoutField, SourceType: typ}
	if typ == "" {
		pr.Why = SourceFieldWithoutType
	} else if (typ == "SPIFFE" && sa != nil) || (typ == "ServiceAccount" && hasSPIFFE) {
		pr.Why = SourceOtherKindField
	}
	if e.Semantics.SourceFailOpen == SourceNone {
		pr.None = true
	} else {
		pr.Any = true
	}
	return pr
}

// DefaultTrustDomain is the reference deployment's --agentic-identity-trust-domain, the
// trust domain of ServiceAccount identities unless --trust-domain says otherwise.
const DefaultTrustDomain = "cluster.local"

// SPIFFEID is the identity of a ServiceAccount in a trust domain.
func SPIFFEID(trustDomain, ns, name string) string {
	return "spiffe://" + trustDomain + "/ns/" + ns + "/sa/" + name
}

// ServiceAccountSPIFFEID is the identity a rule's ServiceAccount source names: its
// namespace defaults to the policy's (the translator's ServiceAccount source, see
// docs/semantics.md).
func ServiceAccountSPIFFEID(trustDomain, policyNS, ns, name string) string {
	if ns == "" {
		ns = policyNS
	}
	return SPIFFEID(trustDomain, ns, name)
}

// emptyPermission is what an authorization that lists nothing means under the
// semantics (docs/semantics.md#permissions), why says why it lists nothing (a
// Permission* constant).
func (e *Engine) emptyPermission(why string) Permission {
	if e.Semantics.EmptyAuthorization == EmptyAuthDenyTools {
		return Permission{NotToolsCall: true, Why: why}
	}
	return Permission{Any: true, Why: why}
}

// permission compiles a v1alpha1 authorization (docs/semantics.md#permissions, #l7-fields,
// #cel-only-tools-call), and gives cel-go's error when its CEL expression does not compile
// (the translator drops the rule).
func (e *Engine) permission(a *v1alpha1.AuthorizationRule) (Permission, string) {
	if a == nil {
		return e.emptyPermission(PermissionAuthorizationOmitted), ""
	}
	var perm Permission
	switch a.Type {
	case v1alpha1.AuthorizationRuleTypeInline:
		for _, m := range a.MCP.Methods {
			mm := MethodMatcher{Name: string(m.Name)}
			switch m.Name {
			case "tools", "prompts", "resources":
				mm.Prefix = true
				mm.Name += "/"
			}
			for _, p := range m.Params {
				mm.Params = append(mm.Params, string(p))
			}
			perm.Methods = append(perm.Methods, mm)
		}
		perm.Base = a.MCP.MCPBaseProtocolMethodsOption == v1alpha1.MCPBaseProtocolMethodsOptionMatch
		switch {
		case len(perm.Methods) > 0 || perm.Base:
		case a.MCP.Methods != nil && e.Semantics.EmptyMethods == EmptyMethodsNone:
			perm = Permission{Why: PermissionEmptyMethods}
		default:
			perm = e.emptyPermission(PermissionNoMCPMethod)
		}
	case v1alpha1.AuthorizationRuleTypeCEL:
		if a.CEL == nil {
			perm = e.emptyPermission(PermissionCELWithoutExpression)
			break
		}
		prg, err := CompileCEL(a.CEL.Expression)
		if err != nil {
			return perm, err.Error()
		}
		perm.CEL = &CELCondition{Expression: a.CEL.Expression, Program: prg}
		perm.ToolsCallOnly = e.Semantics.CELOnlyToolsCall
	default:
		perm = e.emptyPermission(PermissionUnknownType)
		perm.AuthorizationType = string(a.Type)
	}
	l7, fields := compileL7(a)
	if len(fields) > 0 {
		if e.Semantics.L7Fields == Enforced {
			perm.L7 = l7
		} else {
			perm.IgnoredL7 = fields
		}
	}
	return perm, ""
}

func compileL7(a *v1alpha1.AuthorizationRule) (*L7Match, []string) {
	var fields []string
	m := &L7Match{}
	for _, x := range a.Methods {
		m.Methods = append(m.Methods, string(x))
	}
	if len(a.Methods) > 0 {
		fields = append(fields, "methods")
	}
	for _, p := range a.Paths {
		pm := PathMatcher{Type: string(v1alpha1.PathMatchPathPrefix)}
		if p.Type != nil {
			pm.Type = string(*p.Type)
		}
		if p.Value != nil {
			pm.Value = *p.Value
		}
		if pm.Type == string(v1alpha1.PathMatchRegularExpression) {
			pm.Re, _ = regexp.Compile("^(?:" + pm.Value + ")$")
		}
		m.Paths = append(m.Paths, pm)
	}
	if len(a.Paths) > 0 {
		fields = append(fields, "paths")
	}
	for _, h := range a.Headers {
		hm := HeaderMatcher{Name: strings.ToLower(string(h.Name)), Type: string(v1alpha1.HeaderMatchExact), Value: h.Value}
		if h.Type != nil {
			hm.Type = string(*h.Type)
		}
		if hm.Type == string(v1alpha1.HeaderMatchRegularExpression) {
			hm.Re, _ = regexp.Compile("^(?:" + h.Value + ")$")
		}
		m.Headers = append(m.Headers, hm)
	}
	if len(a.Headers) > 0 {
		fields = append(fields, "headers")
	}
	for _, h := range a.Hosts {
		m.Hosts = append(m.Hosts, strings.ToLower(string(h)))
	}
	if len(a.Hosts) > 0 {
		fields = append(fields, "hosts")
	}
	for _, p := range a.Ports {
		m.Ports = append(m.Ports, int32(p))
	}
	if len(a.Ports) > 0 {
		fields = append(fields, "ports")
	}
	return m, fields
}

// compileLegacy compiles a v0alpha0 policy as the legacy translator did (docs/semantics.md#v0alpha0).
func (e *Engine) compileLegacy(p *snapshot.XAccessPolicy) *Policy {
	cp := e.newPolicy(p, "")
	cp.Legacy = true
	srcs := policyRuleSources(e.Snapshot, p.Source, len(p.Legacy.Spec.Rules))
	for i := range p.Legacy.Spec.Rules {
		r := &p.Legacy.Spec.Rules[i]
		cr := &Rule{Name: r.Name, Policy: cp, Index: i, Source: srcs.rule(i)}
		var sa *[2]string
		if r.Source.ServiceAccount != nil {
			sa = &[2]string{r.Source.ServiceAccount.Namespace, r.Source.ServiceAccount.Name}
		}
		sp := ""
		if r.Source.SPIFFE != nil {
			sp = string(*r.Source.SPIFFE)
		}
		cr.Principal = e.principal(string(r.Source.Type), r.Source.SPIFFE != nil, sp, sa, p.Namespace)
		a := r.Authorization
		switch {
		case a == nil:
			cr.Permission = e.emptyPermission(PermissionAuthorizationOmitted)
		case a.Type == v0alpha0.AuthorizationRuleTypeInlineTools && len(a.Tools) > 0:
			cr.Permission = Permission{Methods: []MethodMatcher{{Name: "tools/call", Params: append([]string(nil), a.Tools...)}}}
		case a.Type == v0alpha0.AuthorizationRuleTypeInlineTools && (p.Source.Cluster != "" || p.Source.Stored):
			// Read from a cluster (or its --snapshot-out replay), which stores v1alpha1:
			// storage dropped authorization.tools (docs/semantics.md#v0alpha0).
			cr.Permission = e.emptyPermission(PermissionToolsDropped)
			cr.Permission.ToolsDropped = true
		case a.Type == v0alpha0.AuthorizationRuleTypeInlineTools:
			cr.Permission = e.emptyPermission(PermissionEmptyToolList)
		case a.Type == v0alpha0.AuthorizationRuleTypeExternalAuth:
			cr.Permission = Permission{Methods: []MethodMatcher{{Name: "tools/call"}}, Why: PermissionLegacyExtAuth}
			cr.ExtAuth, cr.ExtAuthConfig = true, a.ExternalAuth
		case a.Type == v0alpha0.AuthorizationRuleTypeCEL && a.CEL != nil:
			prg, err := CompileCEL(a.CEL.Expression)
			if err != nil {
				cr.CELError = err.Error()
				break
			}
			cr.Permission = Permission{CEL: &CELCondition{Expression: a.CEL.Expression, Program: prg}, ToolsCallOnly: true}
		default:
			cr.Permission = e.emptyPermission(PermissionUnknownType)
			cr.Permission.AuthorizationType = string(a.Type)
		}
		cp.All = append(cp.All, cr)
	}
	return e.finish(cp, true)
}
