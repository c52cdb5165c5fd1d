package render

import (
	"io"

	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/snapshot"
)

// EffectiveAuthPolicy writes the view of `agpol effective authpolicy`: a report for
// json and yaml, else the text of the paths and then of the v1beta2 policies.
func EffectiveAuthPolicy(w io.Writer, format Format, s *snapshot.Snapshot, v *authpolicy.TargetView) error {
	if format.Document() {
		rep := NewAuthPolicyReport(v.Paths, v.Result)
		for _, tp := range v.V1beta2 {
			tp.Policy = v1beta2PolicyView(tp.Policy)
			rep.V1beta2 = append(rep.V1beta2, tp)
		}
		return Report(w, format, rep, CompletenessOf(s))
	}
	if err := AuthPolicyText(w, v.Paths, v.Result); err != nil || len(v.V1beta2) == 0 {
		return err
	}
	return V1beta2Text(w, v.V1beta2)
}
