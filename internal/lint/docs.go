package lint

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/agpol/agpol/internal/config"
)

// ExplainText is what agpol lint --explain CODE prints.
func ExplainText(c *Check) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", c.Code, c.Title)
	fmt.Fprintf(&b, "severity: %s   category: %s\n\n", c.Severity, c.Category)
	b.WriteString(strings.TrimSpace(c.Explanation))
	b.WriteString("\n\nApplies to " + c.DataPlaneText() + "\n")
	b.WriteString("\nFix:\n")
	for _, l := range strings.Split(strings.TrimSpace(c.Fix), "\n") {
		b.WriteString("  " + l + "\n")
	}
	fmt.Fprintf(&b, "\nSuppress on an object with the annotation %s: \"%s: <reason>\",\nor in %s with an entry:\n  {code: %s, object: Kind/namespace/name, reason: ..., expires: YYYY-MM-DD}.\n",
		SuppressAnnotation, c.Code, config.DefaultFile, c.Code)
	return b.String()
}

// ChecksMarkdown is docs/checks.md, generated from the registry.
func ChecksMarkdown() []byte {
	var b bytes.Buffer
	b.WriteString(`# agpol lint checks

<!-- Generated from internal/lint by "go test ./internal/lint -update". Do not edit. -->

Each check has a stable code. Codes are grouped by category; ` + "`--only`" + ` and ` + "`--skip`" + ` take codes
or category names. ` + "`agpol lint --explain CODE`" + ` prints one entry of this page.

Exit status: 0 when no unsuppressed finding reaches ` + "`--fail-on`" + ` (error, warning, info or none;
default error), 1 when one does, 2 on usage or input errors — the same for every output format.

## Suppressing a finding

On the object, with a reason (entries separated by ` + "`;`" + ` or new lines):

` + "```yaml" + `
metadata:
  annotations:
    ` + SuppressAnnotation + `: "AGP203: the Gateway is defined in the platform repository"
` + "```" + `

Or in ` + "`" + config.DefaultFile + "`" + ` (read from the current directory when present, or given with ` + "`--config`" + `):

` + "```yaml" + `
suppressions:
- code: AGP405                          # a code, a category, or several comma-separated
  object: XAccessPolicy/tools/*         # glob over Kind/namespace/name; omit for every object
  reason: full access for the tools team is intended
  expires: 2027-01-01                   # optional; from that day on the suppression no longer applies
` + "```" + `

A suppression without a reason does not apply (AGP001). Suppressed findings are counted in the
summary and shown with ` + "`--show-suppressed`" + `.

## Checks

Each check applies to the data planes of its tag (the column "data planes" and the line under
each check's title). agpol tells a Gateway's data plane by its GatewayClass's controllerName;
` + "`dataPlanes`" + ` in ` + "`" + config.DefaultFile + "`" + ` (class name: agentic, istio, envoy-gateway or gateway-api) or
` + "`--data-plane CLASS=PLANE`" + ` maps other classes.

<a id="data-planes"></a>

| tag | applies to |
|---|---|
`)
	for _, tag := range []string{AppliesToAll, AppliesToAgentic, AppliesToKuadrant} {
		fmt.Fprintf(&b, "| `%s` | %s |\n", tag, reflow(dataPlaneText[tag]))
	}
	b.WriteString(`
| code | severity | category | data planes | title |
|---|---|---|---|---|
`)
	checks := Checks()
	for _, c := range checks {
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s | %s | %s |\n", c.Code, strings.ToLower(c.Code), c.Severity, c.Category, c.DataPlanes, c.Title)
	}
	for _, cat := range Categories {
		first := true
		for _, c := range checks {
			if c.Category != cat {
				continue
			}
			if first {
				fmt.Fprintf(&b, "\n## Category %s\n", cat)
				first = false
			}
			fmt.Fprintf(&b, "\n### %s\n\n**%s** · severity %s · data planes [`%s`](#data-planes)\n\n", c.Code, c.Title, c.Severity, c.DataPlanes)
			b.WriteString(semanticsLink.ReplaceAllString(reflow(c.Explanation), "[$0](semantics.md#$1)"))
			b.WriteString("\n\n**Fix:** ")
			b.WriteString(reflow(c.Fix))
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

// semanticsLink is a citation of docs/semantics.md in an explanation, linked in the docs.
var semanticsLink = regexp.MustCompile(`docs/semantics\.md#([a-z0-9-]+)`)

// reflow joins the lines of each paragraph, so Markdown renders them as written.
func reflow(s string) string {
	paras := strings.Split(strings.TrimSpace(s), "\n\n")
	for i, p := range paras {
		lines := strings.Split(p, "\n")
		for j := range lines {
			lines[j] = strings.TrimSpace(lines[j])
		}
		paras[i] = strings.Join(lines, " ")
	}
	return strings.Join(paras, "\n\n")
}
