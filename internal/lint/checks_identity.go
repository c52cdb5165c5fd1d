package lint

import (
	"fmt"

	"github.com/agpol/agpol/internal/explain"
)

func init() {
	Register(&Check{
		Code: "AGP105", Severity: SeverityWarning, Category: CategorySchema,
		Title: "rule names a caller identity no caller can have",
		Explanation: `A rule's source names a SPIFFE ID that is not a valid SPIFFE ID (a ".." or "."
segment, a query or fragment, spaces, an upper-case trust domain, a trailing slash), or a
ServiceAccount whose namespace is not a DNS-1123 label or whose name is not a DNS-1123
subdomain. The CRD accepts the string, but no workload can present such an identity: an
Allow rule naming it admits nobody, and a Deny rule naming it never denies the caller its
author meant.`,
		Fix: `Write the identity as the workloads present it: spiffe://<trust-domain>/<path> with a
lower-case trust domain and plain path segments, or the ServiceAccount's real namespace
and name.`,
		DataPlanes: AppliesToAgentic,
		Run:        runInvalidIdentity,
	})
}

func runInvalidIdentity(ctx *Context) []Finding {
	var out []Finding
	for _, p := range ctx.Snapshot.XAccessPolicies {
		for i := range p.Spec.Rules {
			r := &p.Spec.Rules[i]
			var field string
			var err error
			switch {
			case r.Source.SPIFFE != nil:
				field = fmt.Sprintf("spec.rules[%d].source.spiffe", i)
				err = explain.ValidSPIFFEID(string(*r.Source.SPIFFE))
			case r.Source.ServiceAccount != nil:
				field = fmt.Sprintf("spec.rules[%d].source.serviceAccount", i)
				ns := r.Source.ServiceAccount.Namespace
				if ns == "" {
					ns = p.Namespace
				}
				if e := explain.ValidServiceAccount(ns, r.Source.ServiceAccount.Name); e != nil {
					err = fmt.Errorf("invalid ServiceAccount: %v", e)
				}
			}
			if err == nil {
				continue
			}
			f := ctx.Blame(p.Origin, field)
			f.Message = fmt.Sprintf("rule %q: %v: no caller can present it", r.Name, err)
			out = append(out, f)
		}
	}
	return out
}
