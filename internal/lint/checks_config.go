package lint

func init() {
	Register(&Check{
		Code: "AGP001", Severity: SeverityWarning, Category: CategoryConfig,
		Title: "suppression without a reason",
		Explanation: `A suppression (the agpol.dev/suppress annotation, or an entry of the .agpol.yaml
config file) must say why the finding is acceptable, so that the next reader can judge
whether it still is. A suppression without a reason does not apply: the findings it
names are reported as usual.`,
		Fix: `Write the reason after a colon: agpol.dev/suppress: "AGP203: the Gateway is defined in the
platform repository". In .agpol.yaml, set reason: on the entry.`,
		DataPlanes: AppliesToAll,
		Run:        configIssues("AGP001"),
	})
	Register(&Check{
		Code: "AGP002", Severity: SeverityWarning, Category: CategoryConfig,
		Title: "suppression names an unknown check",
		Explanation: `A suppression names something that is neither a check code (AGP101) nor a category
(schema, references, admission, allow-all, loss, ambiguity). It suppresses nothing, so
a typo here would leave the finding it meant to silence in place — or, worse, hide
that the suppression is stale.`,
		Fix:        `Correct the code (agpol lint --list shows every code), or remove the entry.`,
		DataPlanes: AppliesToAll,
		Run:        configIssues("AGP002"),
	})
	Register(&Check{
		Code: "AGP003", Severity: SeverityInfo, Category: CategoryConfig,
		Title: "suppression expired",
		Explanation: `A suppression in the config file has an expires: date that has passed. From that day
on (UTC) it no longer applies, and the findings it silenced are reported again. Expiry
dates make temporary exceptions visible again instead of letting them live forever.`,
		Fix: `Fix the findings the suppression covered and delete the entry, or, if the exception is
still justified, move the date and update the reason.`,
		DataPlanes: AppliesToAll,
		Run:        configIssues("AGP003"),
	})
}

func configIssues(code string) func(*Context) []Finding {
	return func(ctx *Context) []Finding {
		var out []Finding
		for _, f := range ctx.configIssues {
			if f.Code == code {
				out = append(out, f)
			}
		}
		return out
	}
}
