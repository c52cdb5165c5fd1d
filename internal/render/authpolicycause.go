package render

import (
	"fmt"
	"strings"

	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/explain"
)

// authPolicyText is the sentence of a decision Kuadrant's AuthPolicy made on a Gateway
// another data plane serves (explain.CauseAuthPolicy*, CauseAuthorino), the same for the
// decision and its trace step; "" for another event.
func authPolicyText(event string, a *explain.AuthPolicyCause) string {
	if a == nil {
		return ""
	}
	if t := authPolicyTiedText(event, a); t != "" {
		return t
	}
	policies := strings.Join(a.Policies, ", ")
	switch event {
	case explain.CauseAuthPolicyNotFound:
		return "Kuadrant AuthPolicy " + policies + " (v1beta2): " + V1beta2FoundText(a.V1beta2)
	case explain.CauseAuthPolicyNoIdentity:
		return fmt.Sprintf("every authentication rule of Kuadrant AuthPolicy %s is skipped by its when conditions: Authorino finds no identity and the data plane answers 401", policies)
	case explain.CauseAuthPolicyAuthzFails:
		return fmt.Sprintf("authorization %s of Kuadrant AuthPolicy %s fails: the data plane answers 403", a.Rule, a.Source)
	case explain.CauseAuthPolicyUnknown:
		unknown := make([]string, len(a.Unknown))
		for i, u := range a.Unknown {
			unknown[i] = authPolicyUnknownText(u)
		}
		return fmt.Sprintf("Kuadrant AuthPolicy %s decides on this Gateway, and cannot be known offline: %s", policies, strings.Join(unknown, "; "))
	case explain.CauseAuthPolicyUnevaluated:
		return "Kuadrant AuthPolicy " + policies + " decides on this Gateway (no XAccessPolicy runs on its data plane) on the routes to this backend, and its outcome depends on the caller's credentials, which are not known: name the request's host and path instead of the backend to see what it asks"
	case explain.CauseAuthorino:
		o := a.Outcome
		if o == nil {
			return "Kuadrant AuthPolicy " + policies + ", as Authorino decides it"
		}
		code := ""
		if o.Code != 0 {
			code = fmt.Sprintf(" (HTTP %d)", o.Code)
		}
		t := fmt.Sprintf("Kuadrant AuthPolicy %s, as Authorino decides it: %s%s: %s", policies, o.Verdict, code, AuthorinoReason(o))
		if notes := authorinoNotes(o); len(notes) > 0 {
			t += "; note: " + strings.Join(notes, "; ")
		}
		return t
	}
	return ""
}

// v1beta2Reason is how the kuadrant.io/v1beta2 AuthPolicy of a request's path was found,
// or, where kuadrant.io/v1 AuthPolicies apply too (Ignored), why it is left out.
func v1beta2Reason(d *authpolicy.V1beta2Decision) string {
	if !d.Ignored {
		return V1beta2FoundText(d)
	}
	return "left out: " + V1beta2FoundText(d) + "; kuadrant.io/v1 AuthPolicies apply on this path too, and no Kuadrant release enforces both versions together: agpol decides with the kuadrant.io/v1 ones"
}

// authPolicyUnknownText names one thing an AuthPolicy's verdict depends on that cannot be
// known offline.
func authPolicyUnknownText(u explain.AuthPolicyUnknown) string {
	switch u.What {
	case explain.UnknownWhen:
		return "whether the policy's when conditions hold"
	case explain.UnknownAuthentication:
		return fmt.Sprintf("authentication %s (the request's credentials)", strings.Join(u.Rules, " or "))
	case explain.UnknownAuthorization:
		return fmt.Sprintf("authorization %s: %s", strings.Join(u.Rules, ", "), requirementPresent(u.Need, u.Why))
	}
	return u.What
}

// authPolicyCauseView is a copy of a with its sentences written where -o json shows
// them (how a v1beta2 policy was found, Found; what each unknown authorization rule
// asks, Present); a itself when it has none.
func authPolicyCauseView(a *explain.AuthPolicyCause) *explain.AuthPolicyCause {
	if a == nil {
		return nil
	}
	unknown := false
	for _, u := range a.Unknown {
		unknown = unknown || u.What == explain.UnknownAuthorization
	}
	if !unknown && a.V1beta2 == nil {
		return a
	}
	v := *a
	if a.V1beta2 != nil {
		v.Found = V1beta2FoundText(a.V1beta2)
	}
	if unknown {
		v.Unknown = make([]explain.AuthPolicyUnknown, len(a.Unknown))
		for i, u := range a.Unknown {
			if u.What == explain.UnknownAuthorization {
				u.Present = requirementPresent(u.Need, u.Why)
			}
			v.Unknown[i] = u
		}
	}
	return &v
}

// authPolicyInfoView is a copy of ap with its sentences written: its evaluations'
// (evaluationView), why Kuadrant does not program its Gateway, and how its v1beta2
// policy was found (v1beta2Reason); nil stays nil.
func authPolicyInfoView(ap *explain.AuthPolicyInfo) *explain.AuthPolicyInfo {
	if ap == nil {
		return nil
	}
	a := *ap
	a.Evaluation = evaluationView(ap.Evaluation)
	a.NotProgrammed = unprogrammedText(ap.Unprogrammed)
	if ap.V1beta2 != nil {
		d := v1beta2DecisionView(ap.V1beta2)
		d.Evaluation = evaluationView(ap.V1beta2.Evaluation)
		d.Reason = v1beta2Reason(ap.V1beta2)
		a.V1beta2 = d
	}
	if ap.Tied != nil {
		a.Tied = make([]explain.AuthPolicyTie, len(ap.Tied))
		for i, t := range ap.Tied {
			t.Evaluation = evaluationView(t.Evaluation)
			a.Tied[i] = t
		}
	}
	return &a
}
