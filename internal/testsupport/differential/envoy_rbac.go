//lint:file-ignore SA1019 the evaluator reads every field the translator may write, deprecated Envoy fields included

package differential

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	rbacconfigv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	exprpb "google.golang.org/genproto/googleapis/api/expr/v1alpha1"
	"google.golang.org/protobuf/types/known/anypb"
)

// Verdicts of the data plane.
const (
	VerdictAllow = "allow"
	VerdictDeny  = "deny"
)

// Decision is the outcome of the HTTP filters for one path under one set of
// authorizer answers.
type Decision struct {
	Verdict string
	// By is the filter that denied ("" for allow); Level its level (gateway or
	// backend; "" for an authorizer both levels enabled).
	By, Level string
	// Consulted are the ext_authz filters (by index) the request reached and enabled.
	Consulted []int
}

// filterLevel is the level of one of the translator's RBAC filters, by its name.
func filterLevel(name string) string {
	switch {
	case strings.Contains(name, "gateway"):
		return "gateway"
	case strings.Contains(name, "backend"):
		return "backend"
	}
	return ""
}

// ExtAuthzFilters lists the indexes of the path's ext_authz filters.
func (p *Path) ExtAuthzFilters() []int {
	if p.ch == nil {
		return nil
	}
	var out []int
	for i, f := range p.ch.filters {
		if f.kind == filterExtAuthz {
			out = append(out, i)
		}
	}
	return out
}

// ExtAuthzKey is the metadata key that enables ext_authz filter i.
func (p *Path) ExtAuthzKey(i int) string {
	segs := p.ch.filters[i].extAuthz.GetFilterEnabledMetadata().GetPath()
	if len(segs) == 0 {
		return ""
	}
	return segs[0].GetKey()
}

// Decide runs the HTTP filters of the path in order. answer says what the authorizer
// behind an enabled ext_authz filter answers (true allows), given the levels of the
// RBAC filters whose shadow rules enabled it.
func (p *Path) Decide(req *EnvoyRequest, answer func(levels []string) bool) (Decision, error) {
	if p.ch == nil {
		return Decision{Verdict: VerdictDeny, By: "no listener"}, nil
	}
	// envoy.filters.http.rbac dynamic metadata: key -> levels of the filters that wrote it.
	md := map[string][]string{}
	var d Decision
	for i, f := range p.ch.filters {
		switch f.kind {
		case filterRBAC:
			cfg, shadowPrefix := p.rbacFor(f)
			if sh := cfg.GetShadowRules(); sh != nil {
				id, err := p.engineMatch(sh, req)
				if err != nil {
					return d, err
				}
				if id != "" {
					k := shadowPrefix + shadowPolicyIDKey
					md[k] = append(md[k], filterLevel(f.name))
				}
			}
			if rules := cfg.GetRules(); rules != nil {
				id, err := p.engineMatch(rules, req)
				if err != nil {
					return d, err
				}
				allowed := (rules.GetAction() == rbacconfigv3.RBAC_ALLOW) == (id != "")
				if rules.GetAction() == rbacconfigv3.RBAC_LOG {
					allowed = true
				}
				if !allowed {
					d.Verdict, d.By, d.Level = VerdictDeny, f.name, filterLevel(f.name)
					return d, nil
				}
			}
			if cfg.GetMatcher() != nil {
				return d, fmt.Errorf("filter %s: RBAC matcher is not a config type the translator emits", f.name)
			}
		case filterExtAuthz:
			levels, on := extAuthzEnabled(f.extAuthz, md)
			if !on {
				continue
			}
			d.Consulted = append(d.Consulted, i)
			if !answer(levels) {
				d.Verdict, d.By = VerdictDeny, f.name
				if len(levels) == 1 {
					d.Level = levels[0]
				}
				return d, nil
			}
		case filterRouter:
			d.Verdict = VerdictAllow
			return d, nil
		}
	}
	d.Verdict = VerdictAllow
	return d, nil
}

// rbacFor is the RBAC config the filter applies on this path: the most specific
// RBACPerRoute (weighted cluster, route, virtual host) by the filter's name, else the
// filter's own; and the prefix of the shadow metadata keys (a route-local non-empty
// shadow_rules_stat_prefix overrides the filter's).
func (p *Path) rbacFor(f httpFilter) (*rbacv3.RBAC, string) {
	var perRoute *anypb.Any
	if p.cluster != nil {
		perRoute = p.cluster.GetTypedPerFilterConfig()[f.name]
	}
	if perRoute == nil && p.route != nil {
		perRoute = p.route.GetTypedPerFilterConfig()[f.name]
	}
	if perRoute != nil {
		pr := &rbacv3.RBACPerRoute{}
		if err := perRoute.UnmarshalTo(pr); err == nil {
			prefix := f.rbac.GetShadowRulesStatPrefix()
			if pr.GetRbac().GetShadowRulesStatPrefix() != "" {
				prefix = pr.GetRbac().GetShadowRulesStatPrefix()
			}
			// RBACPerRoute without rbac disables the filter on the route.
			if pr.GetRbac() == nil {
				return &rbacv3.RBAC{}, prefix
			}
			return pr.GetRbac(), prefix
		}
	}
	return f.rbac, f.rbac.GetShadowRulesStatPrefix()
}

// extAuthzEnabled applies filter_enabled_metadata: the filter runs only when the
// metadata matcher matches. It returns the levels of the filters that wrote the key.
func extAuthzEnabled(ea *extauthzv3.ExtAuthz, md map[string][]string) ([]string, bool) {
	m := ea.GetFilterEnabledMetadata()
	if m == nil {
		return nil, true
	}
	if m.GetFilter() != rbacMetadataNamespace || len(m.GetPath()) != 1 {
		panic("ext_authz filter_enabled_metadata is not of the form the translator emits")
	}
	levels, present := md[m.GetPath()[0].GetKey()]
	return levels, present == m.GetValue().GetPresentMatch()
}

// engineMatch returns the name of the first policy (in Envoy's order: by name) that
// matches, "" if none.
func (p *Path) engineMatch(rules *rbacconfigv3.RBAC, req *EnvoyRequest) (string, error) {
	names := make([]string, 0, len(rules.GetPolicies()))
	for n := range rules.GetPolicies() {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ok, err := policyMatches(rules.GetPolicies()[n], req)
		if err != nil {
			return "", fmt.Errorf("policy %s: %w", n, err)
		}
		if ok {
			return n, nil
		}
	}
	return "", nil
}

// policyMatches: some permission AND some principal AND the condition.
func policyMatches(pol *rbacconfigv3.Policy, req *EnvoyRequest) (bool, error) {
	perm := false
	for _, pm := range pol.GetPermissions() {
		ok, err := permissionMatches(pm, req)
		if err != nil {
			return false, err
		}
		if ok {
			perm = true
			break
		}
	}
	if !perm {
		return false, nil
	}
	prin := false
	for _, pr := range pol.GetPrincipals() {
		ok, err := principalMatches(pr, req)
		if err != nil {
			return false, err
		}
		if ok {
			prin = true
			break
		}
	}
	if !prin {
		return false, nil
	}
	if pol.GetCheckedCondition() != nil {
		return false, fmt.Errorf("checked_condition is not a config type the translator emits")
	}
	if c := pol.GetCondition(); c != nil {
		return evalCondition(c, req), nil
	}
	return true, nil
}

func permissionMatches(pm *rbacconfigv3.Permission, req *EnvoyRequest) (bool, error) {
	switch r := pm.GetRule().(type) {
	case *rbacconfigv3.Permission_Any:
		return r.Any, nil
	case *rbacconfigv3.Permission_AndRules:
		for _, x := range r.AndRules.GetRules() {
			ok, err := permissionMatches(x, req)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case *rbacconfigv3.Permission_OrRules:
		for _, x := range r.OrRules.GetRules() {
			ok, err := permissionMatches(x, req)
			if err != nil {
				return false, err
			}
			if ok {
				return true, nil
			}
		}
		return false, nil
	case *rbacconfigv3.Permission_NotRule:
		ok, err := permissionMatches(r.NotRule, req)
		return !ok, err
	case *rbacconfigv3.Permission_Header:
		return headerMatches(r.Header, req), nil
	case *rbacconfigv3.Permission_UrlPath:
		path, _ := splitPath(req.Path)
		return stringMatches(r.UrlPath.GetPath(), path), nil
	case *rbacconfigv3.Permission_Metadata:
		return metadataMatches(r.Metadata, req), nil
	case *rbacconfigv3.Permission_SourcedMetadata:
		if r.SourcedMetadata.GetMetadataSource() != rbacconfigv3.MetadataSource_DYNAMIC {
			return false, fmt.Errorf("sourced metadata from %v is not a config type the translator emits", r.SourcedMetadata.GetMetadataSource())
		}
		return metadataMatches(r.SourcedMetadata.GetMetadataMatcher(), req), nil
	}
	return false, fmt.Errorf("permission %T is not a config type the translator emits", pm.GetRule())
}

func principalMatches(pr *rbacconfigv3.Principal, req *EnvoyRequest) (bool, error) {
	switch r := pr.GetIdentifier().(type) {
	case *rbacconfigv3.Principal_Any:
		return r.Any, nil
	case *rbacconfigv3.Principal_Authenticated_:
		// Without a client certificate the principal never matches; with one, the
		// matcher sees the URI SAN (the only identity the harness's callers carry).
		if req.Principal == "" {
			return false, nil
		}
		if r.Authenticated.GetPrincipalName() == nil {
			return true, nil
		}
		return stringMatches(r.Authenticated.GetPrincipalName(), req.Principal), nil
	case *rbacconfigv3.Principal_AndIds:
		for _, x := range r.AndIds.GetIds() {
			ok, err := principalMatches(x, req)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case *rbacconfigv3.Principal_OrIds:
		for _, x := range r.OrIds.GetIds() {
			ok, err := principalMatches(x, req)
			if err != nil {
				return false, err
			}
			if ok {
				return true, nil
			}
		}
		return false, nil
	case *rbacconfigv3.Principal_NotId:
		ok, err := principalMatches(r.NotId, req)
		return !ok, err
	case *rbacconfigv3.Principal_Header:
		return headerMatches(r.Header, req), nil
	}
	return false, fmt.Errorf("principal %T is not a config type the translator emits", pr.GetIdentifier())
}

// mcpValue resolves a path in the mcp_proxy namespace.
func (req *EnvoyRequest) mcpValue(path []string) (string, bool) {
	if req.MCP == nil {
		return "", false
	}
	switch strings.Join(path, ".") {
	case "method":
		return req.MCP.Method, true
	case "params.name":
		return req.MCP.ParamsName, req.MCP.ParamsName != ""
	}
	return "", false
}

func metadataMatches(m *matcherv3.MetadataMatcher, req *EnvoyRequest) bool {
	if m.GetFilter() != mcpMetadataNamespace {
		return m.GetInvert()
	}
	var path []string
	for _, s := range m.GetPath() {
		path = append(path, s.GetKey())
	}
	v, ok := req.mcpValue(path)
	res := ok && valueMatches(m.GetValue(), v)
	if m.GetInvert() {
		return !res
	}
	return res
}

func valueMatches(vm *matcherv3.ValueMatcher, v string) bool {
	switch p := vm.GetMatchPattern().(type) {
	case *matcherv3.ValueMatcher_StringMatch:
		return stringMatches(p.StringMatch, v)
	case *matcherv3.ValueMatcher_PresentMatch:
		return p.PresentMatch
	case *matcherv3.ValueMatcher_OrMatch:
		for _, x := range p.OrMatch.GetValueMatchers() {
			if valueMatches(x, v) {
				return true
			}
		}
		return false
	}
	panic(fmt.Sprintf("value matcher %T is not one the translator emits", vm.GetMatchPattern()))
}

var (
	celEnvOnce sync.Once
	celEnv     *cel.Env
	celEnvErr  error
	progMu     sync.Mutex
	progCache  = map[string]cel.Program{}
)

// envoyCELEnv declares what Envoy's RBAC condition sees: the request attributes and
// the stream's metadata, both dynamic. No extension library: Envoy's RBAC filter
// evaluates with CEL's standard functions.
func envoyCELEnv() (*cel.Env, error) {
	celEnvOnce.Do(func() {
		celEnv, celEnvErr = cel.NewEnv(
			cel.Variable("request", cel.MapType(cel.StringType, cel.DynType)),
			cel.Variable("metadata", cel.MapType(cel.StringType, cel.DynType)),
		)
	})
	return celEnv, celEnvErr
}

// evalCondition evaluates an RBAC condition; an error is a non-match (Envoy).
func evalCondition(c *exprpb.Expr, req *EnvoyRequest) bool {
	env, err := envoyCELEnv()
	if err != nil {
		return false
	}
	key := c.String()
	progMu.Lock()
	prg, ok := progCache[key]
	progMu.Unlock()
	if !ok {
		ast := cel.ParsedExprToAst(&exprpb.ParsedExpr{Expr: c})
		prg, err = env.Program(ast)
		if err != nil {
			return false
		}
		progMu.Lock()
		progCache[key] = prg
		progMu.Unlock()
	}
	path, _ := splitPath(req.Path)
	headers := map[string]any{}
	for k, v := range req.Headers {
		headers[strings.ToLower(k)] = v
	}
	request := map[string]any{
		"path":     req.Path,
		"url_path": path,
		"host":     req.Host,
		"method":   req.Method,
		"headers":  headers,
		"time":     req.Time,
	}
	fm := map[string]any{}
	if req.MCP != nil {
		mcp := map[string]any{"method": req.MCP.Method}
		params := map[string]any{}
		if req.MCP.ParamsName != "" {
			params["name"] = req.MCP.ParamsName
		}
		mcp["params"] = params
		fm[mcpMetadataNamespace] = mcp
	}
	out, _, err := prg.Eval(map[string]any{"request": request, "metadata": map[string]any{"filter_metadata": fm}})
	if err != nil {
		return false
	}
	return out == types.True
}
