package effective

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
	"github.com/agpol/agpol/internal/snapshot"
)

// MaxPoliciesPerTarget is the controller's limit of XAccessPolicies per target.
const MaxPoliciesPerTarget = 5

// Admission reasons beyond the controller's own (Accepted, LimitPerTargetExceeded, InvalidCEL).
const (
	ReasonAccepted          = "Accepted"
	ReasonLimit             = "LimitPerTargetExceeded"
	ReasonInvalidCEL        = "InvalidCEL"
	ReasonInvalidTargetKind = "InvalidTargetKind"
	ReasonPending           = "Pending"
)

// Status is one admission verdict.
type Status struct {
	Accepted bool   `json:"accepted"`
	Reason   string `json:"reason"`
	Message  string `json:"message,omitempty"`
}

// Admission is what agpol knows about whether a policy counts.
type Admission struct {
	// Status is the admission computed from the controller's rules.
	Status
	// Recorded is the status a controller wrote on the object, nil when none.
	Recorded *Status `json:"recorded,omitempty"`
	// DiffersFromRecorded is true when a recorded status exists and disagrees with the computed one.
	DiffersFromRecorded bool `json:"differsFromRecorded"`
	// Effective is the verdict the data plane follows under the semantics (recorded status when
	// present and the semantics says so, else computed), and From says which one it is.
	Effective Status `json:"effective"`
	From      string `json:"from"`
}

// Cell is the table cell for agpol get: "True" or "False(Reason)".
func (a Admission) Cell() string {
	if a.Accepted {
		return "True"
	}
	return "False(" + a.Reason + ")"
}

// EffectiveCell is the table cell of the verdict the data plane follows, with where it
// comes from: "True[recorded]", "False(Reason)[computed]".
func (a Admission) EffectiveCell() string {
	c := "True"
	if !a.Effective.Accepted {
		c = "False(" + a.Effective.Reason + ")"
	}
	return c + "[" + a.From + "]"
}

// Recorded summarises the recorded status: accepted when there is at least one ancestor and
// every ancestor has Accepted=True (pkg/helpers/accesspolicy.go). Nil without status. The
// messages are the recorded condition's, or agpol's (Pending) for an ancestor without one.
func Recorded(p *snapshot.XAccessPolicy) *Status {
	anc := p.Status.Ancestors
	if len(anc) == 0 {
		return nil
	}
	for _, a := range anc {
		c := findCondition(a.Conditions, string(v1alpha1.PolicyConditionAccepted))
		if c == nil {
			return &Status{Accepted: false, Reason: ReasonPending, Message: "ancestor " + string(a.AncestorRef.Name) + " has no Accepted condition"}
		}
		if c.Status != metav1.ConditionTrue {
			return &Status{Accepted: false, Reason: c.Reason, Message: c.Message}
		}
	}
	c := findCondition(anc[0].Conditions, string(v1alpha1.PolicyConditionAccepted))
	return &Status{Accepted: true, Reason: c.Reason, Message: c.Message}
}

func findCondition(cs []metav1.Condition, t string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

type targetID struct{ group, kind, name string }

// MoreSenior is the controller's seniority: earlier creationTimestamp, then smaller name.
func MoreSenior(a, b *snapshot.XAccessPolicy) bool {
	at, bt := a.CreationTimestamp, b.CreationTimestamp
	if !at.Equal(&bt) {
		return at.Before(&bt)
	}
	return a.Name < b.Name
}

// Admit computes the admission of every XAccessPolicy of the snapshot (docs/semantics.md#admission).
func Admit(s *snapshot.Snapshot, sem Semantics) map[*snapshot.XAccessPolicy]Admission {
	// Policies per (namespace, target id), regardless of action, acceptance or version.
	// A policy is listed once per targetRef, as the controller lists it
	// (isPolicyUnderTargetLimit): two refs to one target (sectionName is not part of
	// the id) count the policy twice toward the limit.
	byTarget := map[string]map[targetID][]*snapshot.XAccessPolicy{}
	for _, p := range s.XAccessPolicies {
		m := byTarget[p.Namespace]
		if m == nil {
			m = map[targetID][]*snapshot.XAccessPolicy{}
			byTarget[p.Namespace] = m
		}
		for _, tr := range p.Spec.TargetRefs {
			id := targetID{string(tr.Group), string(tr.Kind), string(tr.Name)}
			m[id] = append(m[id], p)
		}
	}
	out := make(map[*snapshot.XAccessPolicy]Admission, len(s.XAccessPolicies))
	for _, p := range s.XAccessPolicies {
		st := compute(p, byTarget[p.Namespace], sem)
		a := Admission{Status: st, Recorded: Recorded(p)}
		a.Effective, a.From = st, "computed"
		if a.Recorded != nil {
			a.DiffersFromRecorded = a.Recorded.Accepted != st.Accepted || (!st.Accepted && a.Recorded.Reason != st.Reason)
			if sem.Admission == AdmissionRecordedFirst {
				a.Effective, a.From = *a.Recorded, "recorded"
			}
		}
		out[p] = a
	}
	return out
}

// compute is the status the controller would write (docs/semantics.md#admission). Its
// messages are status condition messages, so they stay here as the API shows them: the
// controller's own wording where it writes one (kube-agentic-networking
// pkg/controller/accesspolicy.go: the ExternalAuth and count limits 246-305, InvalidCEL
// 366-393, accepted 311-364); InvalidTargetKind is agpol's, for a semantics that
// rejects other kinds.
func compute(p *snapshot.XAccessPolicy, targets map[targetID][]*snapshot.XAccessPolicy, sem Semantics) Status {
	if sem.TargetKinds == TargetKindsGatewayXBackend {
		for _, tr := range p.Spec.TargetRefs {
			g, k := string(tr.Group), string(tr.Kind)
			if !(g == snapshot.GatewayGroup && k == "Gateway") && !(agentic.IsGroup(g) && k == agentic.KindXBackend) {
				return Status{Reason: ReasonInvalidTargetKind,
					Message: fmt.Sprintf("targetRef %s/%s %s is neither a Gateway nor an XBackend", g, k, tr.Name)}
			}
		}
	}
	done := map[targetID]bool{}
	for _, tr := range p.Spec.TargetRefs {
		id := targetID{string(tr.Group), string(tr.Kind), string(tr.Name)}
		if done[id] {
			continue
		}
		done[id] = true
		list := targets[id]
		if sem.ExtAuthSeniority && p.Spec.Action == v1alpha1.ActionTypeExternalAuth {
			for _, o := range list {
				if o != p && o.Spec.Action == v1alpha1.ActionTypeExternalAuth && MoreSenior(o, p) {
					return Status{Reason: ReasonLimit,
						Message: "An older ExternalAuth AccessPolicy already exists for target " + id.name}
				}
			}
		}
		if len(list) > MaxPoliciesPerTarget {
			senior := 0
			for _, o := range list {
				if o != p && MoreSenior(o, p) {
					senior++
				}
			}
			if senior >= MaxPoliciesPerTarget {
				return Status{Reason: ReasonLimit,
					Message: fmt.Sprintf("Maximum number of AccessPolicies (%d) exceeded for target %s", MaxPoliciesPerTarget, id.name)}
			}
		}
	}
	for _, r := range p.Spec.Rules {
		if sem.InvalidCEL == InvalidCELSkipsRule {
			break // the rule is skipped when the chain is built
		}
		if a := r.Authorization; a != nil && a.Type == v1alpha1.AuthorizationRuleTypeCEL && a.CEL != nil {
			if _, err := CompileCEL(a.CEL.Expression); err != nil {
				return Status{Reason: ReasonInvalidCEL,
					Message: fmt.Sprintf("Failed to compile CEL expression %q: %v", a.CEL.Expression, err)}
			}
		}
	}
	return Status{Accepted: true, Reason: ReasonAccepted, Message: "AccessPolicy accepted for target"}
}
