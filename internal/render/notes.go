package render

import (
	"fmt"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/effective"
)

// The sentences of effective's notes: why a level leaves a policy out (IgnoredText),
// what a rule's source or authorization stands for where it names nothing
// (PrincipalNote, PermissionNote), why the translator drops a rule (DroppedText), and
// why a data plane has no ext_authz filter for a backend's ExternalAuth
// (NoExtAuthFilterText). effective gives each as a code and the names its sentence
// needs; describe, explain and get print these sentences.

// IgnoredText is why a level leaves a policy out (effective.Ignored), e.g. "sectionName
// "https": applies only to listener https".
func IgnoredText(ig *effective.Ignored) string {
	switch ig.Why {
	case effective.IgnoredNotAccepted:
		return fmt.Sprintf("not accepted (%s, %s): %s", ig.Code, ig.From, ig.Message)
	case effective.IgnoredNoSections:
		return fmt.Sprintf("sectionName %q: %s has no sections, the policy does not attach", ig.SectionName, ig.TargetKind)
	case effective.IgnoredNoListener:
		return fmt.Sprintf("sectionName %q names no listener of the gateway, the policy does not attach", ig.SectionName)
	case effective.IgnoredOtherListener:
		return fmt.Sprintf("sectionName %q: applies only to listener %s", ig.SectionName, ig.SectionName)
	case effective.IgnoredLegacyNoAction:
		return "v0alpha0 object: stored without spec.action, never enforced"
	case effective.IgnoredExtAuthNotFirst:
		return "not the first ExternalAuth policy on the target (only " + ig.UsedExtAuth + " is used)"
	case effective.IgnoredUnknownAction:
		return fmt.Sprintf("action %q is neither Allow nor ExternalAuth", ig.Action)
	}
	return "left out: " + ig.Why // a code this function does not know yet: still shown
}

// PrincipalNote is what a rule's source stands for where it names no caller
// (effective.Principal.Why), e.g. "source omitted: any caller"; "" when it names one.
func PrincipalNote(p *effective.Principal) string {
	var s string
	switch p.Why {
	case "":
		return ""
	case effective.SourceOmitted:
		return "source omitted: any caller"
	case effective.SourceTypeWithoutField:
		s = fmt.Sprintf("source type %q without its field", p.SourceType)
	case effective.SourceFieldWithoutType:
		s = "source field without type"
	case effective.SourceOtherKindField:
		s = fmt.Sprintf("source type %q with the other kind's field", p.SourceType)
	default:
		s = "source: " + p.Why // a code this function does not know yet: still shown
	}
	if p.None {
		return s + ": matches nobody"
	}
	return s + ": matches any caller"
}

// PermissionNote is what a rule's authorization stands for where it lists nothing it
// matches as written (effective.Permission.Why), e.g. "authorization omitted: any
// request"; "" otherwise.
func PermissionNote(p *effective.Permission) string {
	var s string
	switch p.Why {
	case "":
		return ""
	case effective.PermissionBuiltin:
		return "built-in allowance"
	case effective.PermissionEmptyMethods:
		return "methods: [] lists no MCP method: matches nothing"
	case effective.PermissionLegacyExtAuth:
		return "ExternalAuth rule: tools/call, then the authorizer"
	case effective.PermissionAuthorizationOmitted:
		s = "authorization omitted"
	case effective.PermissionNoMCPMethod:
		s = "no MCP method listed"
	case effective.PermissionCELWithoutExpression:
		s = "CEL rule without expression"
	case effective.PermissionUnknownType:
		s = fmt.Sprintf("authorization type %q", p.AuthorizationType)
	case effective.PermissionToolsDropped:
		s = "no tool list: the cluster stores v1alpha1, which drops authorization.tools " +
			"(kube-agentic-networking #271), so the tools written, if any, are lost; assumed the legacy translator " +
			"reads this cluster's objects and sees an empty tool list too"
	case effective.PermissionEmptyToolList:
		s = "empty tool list"
	default:
		s = "authorization: " + p.Why // a code this function does not know yet: still shown
	}
	// The empty authorization's meaning under the semantics (effective's emptyPermission).
	if p.NotToolsCall {
		return s + ": everything but tools/call"
	}
	return s + ": any request"
}

// DroppedText is why the translator drops a rule (effective.Rule.CELError); "" when it
// keeps it.
func DroppedText(r *effective.Rule) string {
	if r.CELError == "" {
		return ""
	}
	return "CEL does not compile, the translator drops the rule: " + r.CELError
}

// NoExtAuthFilterText is why the data plane has no ext_authz filter for a backend's
// ExternalAuth config on a gateway (effective.NoExtAuthFilter); "" for nil.
func NoExtAuthFilterText(n *effective.NoExtAuthFilter) string {
	if n == nil {
		return ""
	}
	return fmt.Sprintf("no ext_authz filter on gateway %s/%s for this config: no HTTPRoute of the gateway references XBackend %s/%s with group %s",
		n.Gateway.Namespace, n.Gateway.Name, n.Backend.Namespace, n.Backend.Name, agentic.GroupName)
}

// The copies -o json|yaml prints: effective's chains, levels and rules are shared (the
// engine caches them), so render writes their notes into copies, made only where there
// is a note to write, each once per document (noteViews).

// noteViews makes the copies of one document, so a rule, policy, level or chain shared
// by several paths is copied once and the copies are shared alike.
type noteViews struct {
	rules    map[*effective.Rule]*effective.Rule
	policies map[*effective.Policy]*effective.Policy
	levels   map[*effective.Level]*effective.Level
}

func newNoteViews() *noteViews {
	return &noteViews{rules: map[*effective.Rule]*effective.Rule{}, policies: map[*effective.Policy]*effective.Policy{},
		levels: map[*effective.Level]*effective.Level{}}
}

// rule is r, or a copy with its notes written when it has any.
func (nv *noteViews) rule(r *effective.Rule) *effective.Rule {
	if r == nil || (r.Principal.Why == "" && r.Permission.Why == "" && r.CELError == "") {
		return r
	}
	if c, ok := nv.rules[r]; ok {
		return c
	}
	c := *r
	c.Principal.Note = PrincipalNote(&r.Principal)
	c.Permission.Note = PermissionNote(&r.Permission)
	c.Skipped = DroppedText(r)
	nv.rules[r] = &c
	return &c
}

// ruleList is rs, or a copy in which the rules with notes are copied (changed).
func (nv *noteViews) ruleList(rs []*effective.Rule) (out []*effective.Rule, changed bool) {
	for i, r := range rs {
		if v := nv.rule(r); v != r {
			if !changed {
				out, changed = append(make([]*effective.Rule, 0, len(rs)), rs[:i]...), true
			}
			out = append(out, v)
		} else if changed {
			out = append(out, r)
		}
	}
	if !changed {
		return rs, false
	}
	return out, true
}

// policy is p, or a copy whose rules with notes are copied.
func (nv *noteViews) policy(p *effective.Policy) *effective.Policy {
	if p == nil {
		return nil
	}
	if c, ok := nv.policies[p]; ok {
		return c
	}
	c := p
	if rules, changed := nv.ruleList(p.Rules); changed {
		v := *p
		v.Rules = rules
		c = &v
	}
	nv.policies[p] = c
	return c
}

// policyList is ps, or a copy in which the policies with notes are copied (changed).
func (nv *noteViews) policyList(ps []*effective.Policy) (out []*effective.Policy, changed bool) {
	for i, p := range ps {
		if v := nv.policy(p); v != p {
			if !changed {
				out, changed = append(make([]*effective.Policy, 0, len(ps)), ps[:i]...), true
			}
			out = append(out, v)
		} else if changed {
			out = append(out, p)
		}
	}
	if !changed {
		return ps, false
	}
	return out, true
}

// level is l, or a copy with its notes written (the ext_authz note, the ignored
// policies' reasons, its rules').
func (nv *noteViews) level(l *effective.Level) *effective.Level {
	if l == nil {
		return nil
	}
	if c, ok := nv.levels[l]; ok {
		return c
	}
	v := *l
	changed := false
	if l.NoFilter != nil {
		v.ExtAuthNote, changed = NoExtAuthFilterText(l.NoFilter), true
	}
	if len(l.Ignored) > 0 {
		v.Ignored = make([]effective.Ignored, len(l.Ignored))
		for i := range l.Ignored {
			v.Ignored[i] = l.Ignored[i]
			v.Ignored[i].Reason = IgnoredText(&l.Ignored[i])
		}
		changed = true
	}
	if p := nv.policy(l.ExtAuth); p != l.ExtAuth {
		v.ExtAuth, changed = p, true
	}
	var c [3]bool
	v.Allow, c[0] = nv.policyList(l.Allow)
	v.Merged, c[1] = nv.ruleList(l.Merged)
	v.LegacyExt, c[2] = nv.ruleList(l.LegacyExt)
	out := l
	if changed || c[0] || c[1] || c[2] {
		out = &v
	}
	nv.levels[l] = out
	return out
}

// chain is c, or a copy with its notes written: the other data plane's sentence
// (NotEnforced) and its levels'. The copy is for encoding only: its Levels and Steps
// are c's.
func (nv *noteViews) chain(c *effective.Chain) *effective.Chain {
	if c == nil {
		return nil
	}
	gw, be := nv.level(c.Gateway), nv.level(c.Backend)
	if c.OtherDataPlane == nil && gw == c.Gateway && be == c.Backend {
		return c
	}
	v := *c
	v.Gateway, v.Backend = gw, be
	if c.OtherDataPlane != nil {
		v.NotEnforced = OtherDataPlaneText(c.OtherDataPlane)
	}
	return &v
}

// permissionView is p, or a copy with its note written (explain's steps).
func permissionView(p *effective.Permission) *effective.Permission {
	if p == nil || p.Why == "" {
		return p
	}
	c := *p
	c.Note = PermissionNote(p)
	return &c
}
