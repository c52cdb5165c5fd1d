package render

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/effective/authpolicy"
)

// TestUntranslatedText writes the sentence of every authpolicy.Untranslated code: a code
// without a sentence here (the "untranslated: CODE" fallback) fails.
func TestUntranslatedText(t *testing.T) {
	want := map[string]struct {
		u    authpolicy.Untranslated
		text string
	}{
		authpolicy.UntranslatedSelectsNothing: {authpolicy.Untranslated{Field: "authorization.admins.routeSelectors"},
			"authorization.admins.routeSelectors select nothing (no condition to translate)"},
		authpolicy.UntranslatedModifiers: {authpolicy.Untranslated{Field: "when", Arg: "request.path.@extract"},
			`when: selector "request.path.@extract" uses Authorino JSON path modifiers, which have no CEL form`},
		authpolicy.UntranslatedNoAttribute: {authpolicy.Untranslated{Field: "when", Arg: "context.foo"},
			`when: selector "context.foo" names no well-known attribute`},
		authpolicy.UntranslatedNoPattern: {authpolicy.Untranslated{Field: "when", Arg: "admins"}, "when: no named pattern admins"},
		authpolicy.UntranslatedOperator:  {authpolicy.Untranslated{Field: "routeSelectors", Arg: "gt"}, `routeSelectors: operator "gt" has no CEL form`},
		authpolicy.UntranslatedTooDeep:   {authpolicy.Untranslated{Field: "when"}, "when: conditions nested too deeply"},
	}
	for _, code := range authpolicy.UntranslatedCodes {
		w, ok := want[code]
		if !ok {
			t.Errorf("code %q: no case in this test", code)
			continue
		}
		w.u.Code = code
		got := UntranslatedText(w.u)
		if strings.Contains(got, "untranslated: ") {
			t.Errorf("code %q has no sentence in render", code)
		} else if got != w.text {
			t.Errorf("code %q: %q, want %q", code, got, w.text)
		}
	}
	if len(want) != len(authpolicy.UntranslatedCodes) {
		t.Errorf("%d cases, %d codes", len(want), len(authpolicy.UntranslatedCodes))
	}
}

// TestChangeText writes the sentence of every authpolicy.Change code: a code without a
// sentence here (the "changes: CODE" fallback) fails.
func TestChangeText(t *testing.T) {
	want := map[string]struct {
		c    authpolicy.Change
		text string
	}{
		authpolicy.ChangeOnePerRule:      {authpolicy.Change{Rules: 3}, "one v1 policy per selected rule (3): a v1 targetRef names one section"},
		authpolicy.ChangeDynamicMetadata: {authpolicy.Change{}, "response.success.dynamicMetadata is response.success.filters at v1"},
		authpolicy.ChangeCompetes: {authpolicy.Change{Policy: "app/first"},
			"at v1 several policies on one target are legal: this one, not enforced today, would become an atomic default competing with app/first (the newer wins)"},
		authpolicy.ChangeHostsUnclaimed: {authpolicy.Change{},
			"at v1 hostnames are not claimed: this policy would be enforced on its own routes for the hosts an older policy holds today"},
	}
	for _, code := range authpolicy.ChangeCodes {
		w, ok := want[code]
		if !ok {
			t.Errorf("code %q: no case in this test", code)
			continue
		}
		w.c.Code = code
		got := ChangeText(w.c)
		if strings.HasPrefix(got, "changes: ") {
			t.Errorf("code %q has no sentence in render", code)
		} else if got != w.text {
			t.Errorf("code %q: %q, want %q", code, got, w.text)
		}
	}
	if len(want) != len(authpolicy.ChangeCodes) {
		t.Errorf("%d cases, %d codes", len(want), len(authpolicy.ChangeCodes))
	}
}

// TestMigrationView: -o json's view carries the sentences, and the migration it copies
// is left as effective made it; lint AGP106's paragraph quotes the same sentences.
func TestMigrationView(t *testing.T) {
	m := &authpolicy.V1Migration{
		Targets:          []authpolicy.V1Target{{Kind: "HTTPRoute", Name: "r"}},
		When:             []string{`request.headers["x"] == 'a'`},
		UntranslatedWhys: []authpolicy.Untranslated{{Code: authpolicy.UntranslatedSelectsNothing, Field: "routeSelectors"}},
		ChangeWhys:       []authpolicy.Change{{Code: authpolicy.ChangeDynamicMetadata}},
	}
	v := migrationView(m)
	if len(v.Untranslated) != 1 || v.Untranslated[0] != "routeSelectors select nothing (no condition to translate)" ||
		len(v.Changes) != 1 || v.Changes[0] != "response.success.dynamicMetadata is response.success.filters at v1" {
		t.Errorf("view: %q, %q", v.Untranslated, v.Changes)
	}
	if m.Untranslated != nil || m.Changes != nil {
		t.Errorf("the view edited the migration: %q, %q", m.Untranslated, m.Changes)
	}
	want := `targetRef HTTPRoute/r; when: [{predicate: 'request.headers["x"] == ''a'''}]; patterns and rules as they are; ` +
		"no v1 form: routeSelectors select nothing (no condition to translate); changes: response.success.dynamicMetadata is response.success.filters at v1"
	if got := MigrationParagraph(m); got != want {
		t.Errorf("paragraph\n got %q\nwant %q", got, want)
	}
	if migrationView(nil) != nil {
		t.Error("nil migration: a view")
	}
}

// TestSelectionText: why a routeSelectors list fails the policy, and why its selection
// was not computed.
func TestSelectionText(t *testing.T) {
	for m, want := range map[*authpolicy.SelectorMiss]string{
		nil:                   "",
		{}:                    `selects no rule: the operator fails the policy ("cannot match any route rules")`,
		{CatchAll: true}:      "selects only rules without matches, under all the route's hostnames: the operator builds no condition from them and fails the policy",
		{OutsideTarget: true}: "a hostname is not within the target's hostnames: the operator fails the policy",
	} {
		if got := SelectorMissText(m); got != want {
			t.Errorf("%+v: %q, want %q", m, got, want)
		}
	}
	if got := NoSelectionText(&authpolicy.NoSelection{Condition: "HTTPRoute app/r not found"}); got != "no route to select from: HTTPRoute app/r not found" {
		t.Errorf("not computed: %q", got)
	}
	if NoSelectionText(nil) != "" {
		t.Error("nil: a sentence")
	}
}
