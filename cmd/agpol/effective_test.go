package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"
)

// update rewrites the golden files of cmd/agpol (go test ./cmd/agpol -run NAME -update);
// the testscripts have their own flag, -update-scripts, so one does not rewrite the other.
var update = flag.Bool("update", false, "rewrite the golden files of cmd/agpol (testscripts: -update-scripts)")

func updateGolden() bool { return *update }

// runAgpolForAuthPolicy runs the CLI in-process from the repository root.
func runAgpolForAuthPolicy(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code = run(context.Background(), append([]string{"agpol"}, args...), streams)
	return out.String(), errOut.String(), code
}

// authPolicyCaseExpect is testdata/authpolicy/cases/*/expect.yaml.
type authPolicyCaseExpect struct {
	Policies map[string]string `json:"policies"`
	Queries  []struct {
		Args  string `json:"args"`
		Paths []struct {
			Path      string            `json:"path"`
			Effective map[string]string `json:"effective"`
		} `json:"paths"`
	} `json:"queries"`
}

type authPolicyJSON struct {
	Paths []struct {
		Gateway   *string                              `json:"gateway"`
		Listener  *string                              `json:"listener"`
		Route     *string                              `json:"route"`
		Rule      *string                              `json:"rule"`
		Effective map[string]map[string]map[string]any `json:"effective"`
	} `json:"paths"`
	Policies []struct {
		Policy          string              `json:"policy"`
		Enforcement     string              `json:"enforcement"`
		OverriddenBy    []string            `json:"overriddenBy"`
		OverriddenRules map[string][]string `json:"overriddenRules"`
	} `json:"policies"`
}

// TestAuthPolicyCases runs every case of testdata/authpolicy/cases (the upstream test
// outcomes of kuadrant-operator v1.5.2's own tests, re-expressed) through
// `agpol effective authpolicy -o json` and compares the public JSON contract with the
// hand-written expectations; it also checks the text view against a golden file.
func TestAuthPolicyCases(t *testing.T) {
	t.Chdir("../..")
	dirs, err := filepath.Glob("testdata/authpolicy/cases/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, "expect.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var want authPolicyCaseExpect
			if err := yaml.UnmarshalStrict(raw, &want); err != nil {
				t.Fatalf("expect.yaml: %v", err)
			}
			input := filepath.Join(dir, "input.yaml")
			var text strings.Builder
			for i, q := range want.Queries {
				args := append([]string{"effective", "authpolicy", "-f", input}, strings.Fields(q.Args)...)
				out, errOut, code := runAgpolForAuthPolicy(t, append(args, "-o", "json")...)
				if code != 0 {
					t.Fatalf("%s: exit %d: %s", q.Args, code, errOut)
				}
				var got authPolicyJSON
				if err := json.Unmarshal([]byte(out), &got); err != nil {
					t.Fatalf("%s: %v\n%s", q.Args, err, out)
				}
				if len(got.Paths) != len(q.Paths) {
					t.Fatalf("%s: %d paths, want %d:\n%s", q.Args, len(got.Paths), len(q.Paths), out)
				}
				for j, wp := range q.Paths {
					gp := got.Paths[j]
					var parts []string
					for _, s := range []*string{gp.Gateway, gp.Listener, gp.Route, gp.Rule} {
						if s != nil {
							parts = append(parts, *s)
						}
					}
					if id := strings.Join(parts, "|"); id != wp.Path {
						t.Errorf("%s: path %d is %s, want %s", q.Args, j, id, wp.Path)
					}
					eff := map[string]string{}
					for g, rules := range gp.Effective {
						if len(rules) == 0 {
							t.Errorf("%s: empty group %q is not left out", q.Args, g)
						}
						for name, r := range rules {
							src, _ := r["source"].(string)
							eff[g+"/"+name] = src
						}
					}
					if wp.Effective == nil {
						wp.Effective = map[string]string{}
					}
					if !reflect.DeepEqual(eff, wp.Effective) {
						t.Errorf("%s: path %s effective =\n  %v\nwant\n  %v", q.Args, wp.Path, eff, wp.Effective)
					}
				}
				if i == 0 {
					pols := map[string]string{}
					for _, p := range got.Policies {
						if p.OverriddenBy == nil {
							t.Errorf("%s: overriddenBy is null, want a list", p.Policy)
						}
						s := p.Enforcement
						by := p.OverriddenBy
						if p.Enforcement != "Overridden" {
							if len(p.OverriddenBy) > 0 {
								t.Errorf("%s: %s with overriddenBy %v, want [] (only Overridden names its displacers)", p.Policy, p.Enforcement, p.OverriddenBy)
							}
							by = displacers(p.Policy, p.OverriddenRules)
						}
						if len(by) > 0 {
							s += " by " + strings.Join(by, ",")
						}
						pols[p.Policy] = s
					}
					if !reflect.DeepEqual(pols, want.Policies) {
						t.Errorf("policies =\n  %v\nwant\n  %v", pols, want.Policies)
					}
				}
				tout, errOut, code := runAgpolForAuthPolicy(t, args...)
				if code != 0 {
					t.Fatalf("%s (text): exit %d: %s", q.Args, code, errOut)
				}
				text.WriteString("$ agpol " + strings.Join(args, " ") + "\n" + tout + "\n")
			}
			checkGolden(t, filepath.Join(dir, "text.golden"), text.String())
		})
	}
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if updateGolden() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run with -update to rewrite):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// TestAuthPolicyExamples runs the shipped payments example and the upstream Kuadrant
// examples (testdata/authpolicy/upstream) through the command, text and JSON.
func TestAuthPolicyExamples(t *testing.T) {
	t.Chdir("../..")
	cases := []struct {
		name string
		args []string
	}{
		{"examples-ledger", []string{"--target", "httproute/pay/ledger", "-f", "testdata/examples"}},
		{"examples-tools-calc", []string{"--target", "httproute/tools/tools#calc", "-f", "testdata/examples"}},
		{"examples-gateway", []string{"--target", "gateway/infra/edge", "-f", "testdata/examples"}},
		{"upstream-toystore", []string{"--target", "httproute/default/toystore", "-f", "testdata/authpolicy/upstream"}},
		{"upstream-gateway", []string{"--target", "gateway/gateway-system/kuadrant-ingressgateway#http", "-f", "testdata/authpolicy/upstream"}},
		{"upstream-httpbin", []string{"--target", "httproute/default/httpbin-route", "-f", "testdata/authpolicy/upstream"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var all strings.Builder
			for _, o := range []string{"text", "json"} {
				args := append([]string{"effective", "authpolicy"}, c.args...)
				args = append(args, "-o", o)
				out, errOut, code := runAgpolForAuthPolicy(t, args...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				all.WriteString("$ agpol " + strings.Join(args, " ") + "\n" + out + "\n")
			}
			checkGolden(t, filepath.Join("testdata/authpolicy/golden", c.name+".golden"), all.String())
		})
	}
}

func TestAuthPolicyGetEnforcement(t *testing.T) {
	t.Chdir("../..")
	out, errOut, code := runAgpolForAuthPolicy(t, "get", "authpolicies", "-A", "-f", "testdata/authpolicy/cases/t11-rule-policy-under-merged-override/input.yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"PartiallyEnforced(by app/rule-auth,gateway-system/gw-auth)", "Enforced"} {
		if !strings.Contains(out, want) {
			t.Errorf("get authpolicies does not show %q:\n%s", want, out)
		}
	}
	out, _, code = runAgpolForAuthPolicy(t, "get", "authpolicies", "-A", "--no-headers", "-f", "testdata/authpolicy/cases/t09-target-not-found/input.yaml")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l) // NAMESPACE NAME TARGET MODE ACCEPTED ENFORCED AGE
		got = append(got, f[0]+"/"+f[1]+"="+f[5])
	}
	sort.Strings(got)
	want := []string{"app/bad-rule=TargetNotFound", "app/missing=TargetNotFound", "elsewhere/other-ns=TargetNotFound", "gateway-system/bad-listener=TargetNotFound"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("get -o json enforcement = %v, want %v", got, want)
	}
}

func TestAuthPolicyTargetErrors(t *testing.T) {
	t.Chdir("../..")
	const in = "testdata/authpolicy/cases/t11-rule-policy-under-merged-override/input.yaml"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{}, "--target is required"},
		{[]string{"--target", "service/app/x"}, `unknown kind "service"`},
		{[]string{"--target", "httproute/app/nope"}, "httproute app/nope: not found"},
		{[]string{"--target", "httproute/app/toystore#nope"}, `has no rule "nope" (rules: get-rule, post-rule)`},
		{[]string{"--target", "gateway/gateway-system/gw#nope"}, `has no listener "nope"`},
		{[]string{"--target", "gateway/gateway-system/gw", "--listener", "http"}, "--target gateway/gateway-system/gw#http"},
		{[]string{"--target", "a/b/c/d"}, "use KIND/NS/NAME"},
		{[]string{"--target", "httproute/app/toystore", "-o", "wide"}, `unknown output format "wide"`},
	}
	for _, c := range cases {
		args := append([]string{"effective", "authpolicy", "-f", in}, c.args...)
		_, errOut, code := runAgpolForAuthPolicy(t, args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, errOut, c.want)
		}
	}
	// NAME alone with -n, and KIND/NAME.
	for _, args := range [][]string{{"--target", "toystore", "-n", "app"}, {"--target", "httproute/toystore", "-n", "app"}} {
		out, errOut, code := runAgpolForAuthPolicy(t, append([]string{"effective", "authpolicy", "-f", in, "-o", "json"}, args...)...)
		if code != 0 || !strings.Contains(out, `"route": "app/toystore"`) {
			t.Errorf("%v: exit %d %s\n%s", args, code, errOut, out)
		}
	}
}

// displacers is the sorted union of the policies that displaced any rule of policy.
func displacers(policy string, rules map[string][]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, ps := range rules {
		for _, p := range ps {
			if p != policy && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}
