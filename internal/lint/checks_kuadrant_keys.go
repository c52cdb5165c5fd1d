package lint

import (
	"fmt"
	"strings"
)

func init() {
	Register(&Check{
		Code: "AGP213", Severity: SeverityError, Category: CategoryReferences,
		Title: "AuthPolicy API keys kept where Authorino never looks",
		Explanation: `kuadrant-operator writes the Authorino AuthConfig of every AuthPolicy into Kuadrant's
namespace (the Kuadrant CR's, kuadrant-system by default), not the policy's. An apiKey
rule without allNamespaces: true makes Authorino look for API key Secrets only in the
AuthConfig's namespace (Authorino v0.25.0 controllers/auth_config_controller.go:351-360,
pkg/evaluators/identity/api_key.go:51-55). The Secrets this rule selects are all in
other namespaces (typically the app's): no key is ever found, every request that needs
the rule is answered 401, and the policy still reports Enforced. See
docs/kuadrant-identities.md.`,
		Fix: `Create the API key Secrets in Kuadrant's namespace, or set allNamespaces: true on the
rule (Authorino must run cluster-wide, as Kuadrant deploys it).`,
		DataPlanes: AppliesToKuadrant,
		Run:        runKeysOutOfScope,
	})
}

func runKeysOutOfScope(ctx *Context) []Finding {
	res := ctx.Model.AuthPolicy()
	var out []Finding
	for _, pr := range res.Policies {
		p := pr.Policy
		if p == nil || p.Object == nil || ctx.Rejected(p.Object.Origin) {
			continue
		}
		for _, k := range res.Env.KeysOutOfScope(p) {
			f := ctx.Blame(p.Object.Origin, k.Field)
			where := "Kuadrant's namespace " + k.Namespace
			if k.Assumed {
				where += " (no Kuadrant CR in the input: the default assumed)"
			}
			f.Message = fmt.Sprintf("apiKey rule %s looks for keys only in %s, and the Secrets it selects are elsewhere (%s): every request is 401 while the policy reports Enforced", k.Rule, where, strings.Join(k.Secrets, ", "))
			out = append(out, f)
		}
	}
	return out
}
