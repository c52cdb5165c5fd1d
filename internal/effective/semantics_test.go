package effective

import (
	"reflect"
	"sort"
	"testing"
)

// Each preset differs from the reference exactly where docs/semantics.md#proposals and #v0alpha0 say.
func TestPresetsDifferOnlyWhereTheSpecSays(t *testing.T) {
	want := map[string][]string{
		PresetReference:    nil,
		PresetProposal:     {"allowCombine", "extAuthPlacement", "targetKinds"},
		PresetPR220:        {"allowCombine", "extAuthPlacement"},
		PresetLegacy:       {"allowCombine", "baseMethods", "emptyAuthorization", "extAuthPlacement", "extAuthSeniority", "policyOrder", "targetKinds", "v0alpha0"},
		PresetPR293:        {"emptyMethods", "ruleCollision"},
		PresetPR293Methods: {"emptyMethods"},
		PresetPR293Keys:    {"ruleCollision"},
		PresetPR236:        {"admission", "invalidCEL"},
	}
	for _, name := range PresetNames() {
		p, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range Diff(Reference(), p) {
			got = append(got, d.Field)
		}
		sort.Strings(got)
		if !reflect.DeepEqual(got, want[name]) {
			t.Errorf("%s differs on %v, want %v", name, got, want[name])
		}
		if p.Name != name {
			t.Errorf("preset %s has name %s", name, p.Name)
		}
	}
}

func TestParsePresets(t *testing.T) {
	all, err := ParsePresets("all")
	if err != nil || len(all) != len(PresetNames()) || len(all) != 8 || all[0].Name != PresetReference {
		t.Fatalf("all: %v %v", all, err)
	}
	two, err := ParsePresets("pr-220,reference,pr220")
	if err != nil || len(two) != 2 || two[0].Name != PresetPR220 {
		t.Fatalf("list: %v %v", two, err)
	}
	if _, err := ParsePresets("nope"); err == nil {
		t.Error("unknown preset accepted")
	}
}

func TestCELAllowList(t *testing.T) {
	for expr, ok := range map[string]bool{
		"request.mcp.tool_name == 'a'":           true,
		"request.headers['x'] == 'a'":            true,
		"request.time.getHours() > 1":            true,
		"'request.secret' == 'a'":                false, // the regex also scans string literals
		"request.mcp.arguments.x == 1":           false,
		"metadata.filter_metadata['a'].b == 'c'": true,
		"source.principal == 'a'":                false, // undeclared
		"request.path.startsWith('/a') &&":       false, // syntax
	} {
		_, err := CompileCEL(expr)
		if (err == nil) != ok {
			t.Errorf("%s: err=%v, want ok=%v", expr, err, ok)
		}
	}
}
