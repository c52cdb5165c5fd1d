package authpolicy

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/tidwall/gjson"

	kuadrantv1 "github.com/agpol/agpol/internal/apis/kuadrant/v1"
)

// pattern evaluates an Authorino selector/operator/value pattern as Authorino's jsonexp
// does (pkg/jsonexp/expressions.go: gjson selector, the value compared as a string) when
// the selector names a request attribute agpol knows, or auth.* once the identity is
// known; anything else is unknown.
func (c *conditionEvaluator) pattern(p kuadrantv1.PatternExpression) Check {
	ch := Check{Expression: strings.TrimSpace(p.Selector + " " + p.Operator + " " + p.Value), Result: Unknown}
	var got gjson.Result
	if s := strings.TrimPrefix(p.Selector, "context."); c.auth != nil && strings.HasPrefix(s, "auth.") {
		for _, u := range c.authUnknown {
			if s == u || strings.HasPrefix(s, u+".") || strings.HasPrefix(s, u+"|") {
				ch.Why = []Why{{Code: CheckAuthUnknown, Attr: u}}
				c.missing[u] = true
				return ch
			}
		}
		got = gjson.Get(c.authJSON, strings.TrimPrefix(s, "auth."))
	} else {
		val, ok, attr := c.selector(p.Selector)
		if !ok {
			ch.Why = []Why{{Code: CheckAttrUnknown, Attr: attr}}
			c.missing[attr] = true
			return ch
		}
		got = gjson.Result{Type: gjson.String, Str: val}
	}
	switch p.Operator {
	case "eq":
		ch.Result = triOf(got.String() == p.Value)
	case "neq":
		ch.Result = triOf(got.String() != p.Value)
	case "incl", "excl":
		found := false
		for _, item := range got.Array() {
			if item.String() == p.Value {
				found = true
			}
		}
		ch.Result = triOf(found == (p.Operator == "incl"))
	case "matches":
		re, err := regexp.Compile(p.Value)
		if err != nil {
			ch.Why = []Why{{Code: CheckBadRegexp, Err: err.Error()}}
			return ch
		}
		ch.Result = triOf(re.MatchString(got.String()))
	default:
		ch.Why = []Why{{Code: CheckBadOperator, Value: p.Operator}}
	}
	return ch
}

func triOf(b bool) Tri {
	if b {
		return True
	}
	return False
}

// selector resolves an Authorino selector to a known request value.
func (c *conditionEvaluator) selector(sel string) (string, bool, string) {
	if strings.ContainsAny(sel, "@|#*?") {
		return "", false, sel
	}
	s := strings.TrimPrefix(sel, "context.")
	s = strings.Replace(s, "request.http.", "request.", 1)
	r := c.req
	switch {
	case s == "request.method" && r.Method != "":
		return r.Method, true, sel
	case (s == "request.path" || s == "request.url_path") && r.Path != "":
		if s == "request.url_path" {
			if u, err := url.Parse(r.Path); err == nil {
				return u.Path, true, sel
			}
		}
		return r.Path, true, sel
	case s == "request.host" && r.Host != "":
		return r.Host, true, sel
	case strings.HasPrefix(s, "request.headers.") && r.Headers != nil:
		name := strings.TrimPrefix(s, "request.headers.")
		for k, v := range r.Headers {
			if strings.EqualFold(k, name) {
				return v, true, sel
			}
		}
		return "", true, sel
	case s == "source.address" && r.SourceAddress != "":
		return r.SourceAddress, true, sel
	}
	return "", false, sel
}
