package render

import "github.com/agpol/agpol/internal/effective/authpolicy"

// LostText is why a rule lost in the fold of AuthPolicies on a path (authpolicy.Lost.Code;
// docs/semantics.md#kuadrant-merge): effective authpolicy and describe print it.
func LostText(code string) string {
	switch code {
	case authpolicy.LostAtomicDefaultsKeptLower:
		return "atomic defaults kept the lower policy"
	case authpolicy.LostAtomicDefaultsFilled:
		return "atomic defaults replaced a lower policy without rules"
	case authpolicy.LostAtomicOverridesReplaced:
		return "atomic overrides replaced it"
	case authpolicy.LostMergeDefaultsKeptLower:
		return "merge kept the lower rule of the same name"
	case authpolicy.LostMergeOverridesReplaced:
		return "merge overrides replaced the rule of the same name"
	}
	return "lost: " + code // a code this function does not know yet: still shown
}

// lostView is a copy of ls with each Reason written, for -o json; nil stays nil.
func lostView(ls []authpolicy.Lost) []authpolicy.Lost {
	if ls == nil {
		return nil
	}
	out := make([]authpolicy.Lost, len(ls))
	for i, l := range ls {
		l.Reason = LostText(l.Code)
		out[i] = l
	}
	return out
}
