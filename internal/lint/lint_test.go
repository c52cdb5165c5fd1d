package lint

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/config"
	"github.com/agpol/agpol/internal/snapshot"
)

const fixtures = "../../testdata/lint"

// testNow is the clock of every test: suppressions expiring before it have expired.
var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// loadContext reads files as agpol lint does: objects that cannot be typed are left
// out of the snapshot and handed to the schema checks.
func loadContext(t *testing.T, files ...string) *Context {
	t.Helper()
	objs, pos, err := cluster.ReadFiles(cluster.FileOptions{Filenames: files})
	if err != nil {
		t.Fatal(err)
	}
	cluster.DefaultNamespace(objs, "default")
	var keep []cluster.RawObject
	var bad []Undecodable
	for _, o := range objs {
		var scratch snapshot.Snapshot
		if err := scratch.Add(o.Object(), o.Source); err != nil {
			bad = append(bad, Undecodable{Object: o.Object(), Source: o.Source, Err: err})
			continue
		}
		keep = append(keep, o)
	}
	s, err := cluster.Build(keep, pos, "files")
	if err != nil {
		t.Fatal(err)
	}
	ctx := NewContext(s)
	ctx.Undecodable = bad
	ctx.Now = testNow
	return ctx
}

// brief is "CODE Kind ns/name field @file:line" (file without its directory).
func brief(f Finding) string {
	s := f.Code + " " + f.Object.String()
	if f.FieldPath != "" {
		s += " " + f.FieldPath
	}
	return fmt.Sprintf("%s @%s:%d", s, filepath.Base(f.Source.File), f.Source.Line)
}

func briefs(fs []Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, brief(f))
	}
	return out
}

// TestChecksFireAndStayQuiet runs each check alone over its fixture
// (testdata/lint/checks/CODE.yaml, next to testdata/lint/base.yaml). Each fixture has
// objects named fires* that must be reported exactly as listed, and quiet* objects
// that must not be.
func TestChecksFireAndStayQuiet(t *testing.T) {
	want := map[string][]string{
		"AGP001": {"AGP001 XAccessPolicy tools/fires metadata.annotations[agpol.dev/suppress] @AGP001.yaml:6"},
		"AGP002": {"AGP002 XAccessPolicy tools/fires metadata.annotations[agpol.dev/suppress] @AGP002.yaml:6"},
		"AGP003": {"AGP003 Config " + fixtures + "/checks/AGP003.config suppressions @AGP003.config:2"},
		"AGP101": {
			"AGP101 XBackend tools/fires-both spec.mcp @AGP101.yaml:7",
			"AGP101 XBackend tools/fires-port-type @AGP101.yaml:13",
			"AGP101 XBackend tools/fires-port-type spec.mcp.port @AGP101.yaml:21",
			"AGP101 XAccessPolicy tools/fires-extauth-without-config spec @AGP101.yaml:28",
		},
		"AGP102": {
			"AGP102 XAccessPolicy tools/fires spec.rules[0].sourec @AGP102.yaml:14",
			"AGP102 XAccessPolicy tools/fires spec.rules[0].authorization.mcp.methods[0].tools @AGP102.yaml:21",
		},
		"AGP103": {
			"AGP103 XBackend tools/fires-legacy-group apiVersion @AGP103.yaml:1",
			"AGP103 ReferenceGrant tools/fires-unserved apiVersion @AGP103.yaml:11",
		},
		"AGP104": {
			"AGP104 HTTPRoute tools/fires spec.rules[0].matches[0].path.value @AGP104.yaml:15",
			"AGP104 HTTPRoute tools/fires-re2 spec.rules[0].matches[0].path.value @AGP104.yaml:33",
			"AGP104 HTTPRoute tools/fires-re2 spec.rules[0].matches[1].path.value @AGP104.yaml:36",
			"AGP104 HTTPRoute tools/fires-re2 spec.rules[0].matches[1].headers[0].value @AGP104.yaml:38",
			"AGP104 ListenerSet tools/fires-set spec.listeners[0].allowedRoutes.namespaces.selector @AGP104.yaml:88",
		},
		"AGP105": {
			"AGP105 XAccessPolicy tools/fires spec.rules[0].source.spiffe @AGP105.yaml:16",
			"AGP105 XAccessPolicy tools/fires spec.rules[1].source.spiffe @AGP105.yaml:20",
			"AGP105 XAccessPolicy tools/fires spec.rules[2].source.serviceAccount @AGP105.yaml:24",
		},
		"AGP106": {
			"AGP106 AuthPolicy shop/fires-selectors apiVersion @AGP106.yaml:23",
			"AGP106 AuthPolicy infra/fires-gateway apiVersion @AGP106.yaml:47",
		},
		"AGP107": {
			"AGP107 XAccessPolicy tools/fires metadata.annotations.note @AGP107.yaml:7",
			"AGP107 XAccessPolicy tools/fires spec.rules[0].name @AGP107.yaml:15",
			"AGP107 XAccessPolicy tools/fires spec.rules[0].authorization.cel.expression @AGP107.yaml:22",
			"AGP107 HTTPRoute tools/fires-route spec.hostnames[0] @AGP107.yaml:31",
			"AGP107 HTTPRoute tools/fires-route spec.rules[0].matches[0].path.value @AGP107.yaml:34",
			"AGP107 HTTPRoute tools/fires-route spec.rules[0].matches[0].headers[0].value @AGP107.yaml:36",
		},
		"AGP211": {
			"AGP211 AuthPolicy shop/fires-prefix-of-prefix spec.routeSelectors @AGP211.yaml:29",
			"AGP211 AuthPolicy shop/fires-rule-level spec.rules.authorization.only-toys.routeSelectors @AGP211.yaml:45",
			"AGP211 AuthPolicy shop/fires-hostname spec.routeSelectors @AGP211.yaml:55",
		},
		"AGP306": {
			"AGP306 AuthPolicy shop/fires-second spec.targetRef @AGP306.yaml:35",
			"AGP306 AuthPolicy shop/fires-older-unannotated spec.targetRef @AGP306.yaml:45",
		},
		"AGP307": {"AGP307 AuthPolicy shop/fires-same-host spec.targetRef @AGP307.yaml:41"},
		"AGP509": {
			"AGP509 AuthPolicy shop/fires spec.routeSelectors[0].matches[0] @AGP509.yaml:21",
			"AGP509 AuthPolicy shop/fires spec.routeSelectors[1].matches[1] @AGP509.yaml:22",
		},
		"AGP205": {
			"AGP205 HTTPRoute tools/fires-parent spec.parentRefs[0].name @AGP205.yaml:8",
			"AGP205 HTTPRoute tools/fires-backend spec.rules[0].backendRefs[0] @AGP205.yaml:25",
		},
		"AGP206": {
			"AGP206 HTTPRoute tools/fires spec.rules[0].backendRefs[0] @AGP206.yaml:45",
			"AGP206 HTTPRoute tools/fires spec.rules[1].backendRefs[0] @AGP206.yaml:49",
		},
		"AGP207": {"AGP207 HTTPRoute tools/fires spec.parentRefs[0] @AGP207.yaml:8"},
		"AGP201": {
			"AGP201 XAccessPolicy tools/fires spec.targetRefs[0] @AGP201.yaml:8",
			"AGP201 XAccessPolicy tools/fires-legacy-group spec.targetRefs[0] @AGP201.yaml:23",
			"AGP201 XAccessPolicy tools/fires-core-service spec.targetRefs[0] @AGP201.yaml:38",
		},
		"AGP202": {"AGP202 XAccessPolicy infra/fires spec.targetRefs[1] @AGP202.yaml:11"},
		"AGP203": {
			"AGP203 XAccessPolicy infra/fires-gateway spec.targetRefs[0].name @AGP203.yaml:10",
			"AGP203 XAccessPolicy tools/fires-namespace spec.targetRefs[0].name @AGP203.yaml:23",
			"AGP203 AuthPolicy tools/fires-route spec.targetRef.name @AGP203.yaml:35",
		},
		"AGP204": {
			"AGP204 AuthPolicy infra/fires-listener spec.targetRef.sectionName @AGP204.yaml:11",
			"AGP204 AuthPolicy tools/fires-rule spec.targetRef.sectionName @AGP204.yaml:26",
			"AGP204 XAccessPolicy infra/fires-xap spec.targetRefs[0].sectionName @AGP204.yaml:87",
		},
		"AGP208": {"AGP208 HTTPRoute tools/fires spec.rules[0].backendRefs[0] @AGP208.yaml:39"},
		"AGP507": {"AGP507 XAccessPolicy tools/fires spec.externalAuth @AGP507.yaml:32"},
		"AGP508": {"AGP508 HTTPRoute tools/fires spec.rules[0].matches[0].queryParams[1].type @AGP508.yaml:15"},
		"AGP301": {
			"AGP301 XAccessPolicy tools/fires spec.rules[0].authorization.cel.expression @AGP301.yaml:17",
			"AGP301 XAccessPolicy tools/fires spec.rules[1].authorization.cel.expression @AGP301.yaml:22",
			"AGP301 XAccessPolicy tools/fires spec.rules[2].authorization.cel.expression @AGP301.yaml:27",
		},
		"AGP302": {"AGP302 XAccessPolicy tools/fires-6 spec.targetRefs @AGP302.yaml:89"},
		"AGP303": {"AGP303 XAccessPolicy infra/fires-younger spec.targetRefs @AGP303.yaml:25"},
		"AGP304": {"AGP304 XAccessPolicy tools/fires status.ancestors @AGP304.yaml:20"},
		"AGP305": {"AGP305 XAccessPolicy tools/fires spec.rules[1].authorization.cel.expression @AGP305.yaml:22"},
		"AGP401": {
			"AGP401 XAccessPolicy tools/fires spec.rules[0].source @AGP401.yaml:14",
			"AGP401 XAccessPolicy tools/fires spec.rules[1].source @AGP401.yaml:17",
			"AGP401 XAccessPolicy tools/fires spec.rules[2].source @AGP401.yaml:20",
		},
		"AGP402": {"AGP402 XAccessPolicy tools/fires spec.rules[0].authorization.methods @AGP402.yaml:17"},
		"AGP403": {"AGP403 XAccessPolicy tools/fires spec.rules[0].authorization.hosts @AGP403.yaml:17"},
		"AGP404": {"AGP404 XAccessPolicy infra/fires spec.targetRefs[0].sectionName @AGP404.yaml:11"},
		"AGP405": {"AGP405 XAccessPolicy tools/fires spec.rules[0] @AGP405.yaml:13"},
		"AGP406": {"AGP406 XAccessPolicy tools/fires spec.rules[0].authorization @AGP406.yaml:15"},
		"AGP407": {
			"AGP407 XAccessPolicy tools/fires spec.rules[0] @AGP407.yaml:13",
			"AGP407 XAccessPolicy tools/fires spec.rules[1] @AGP407.yaml:14",
		},
		"AGP408": {"AGP408 XBackend open/fires metadata.name @AGP408.yaml:4"},
		"AGP503": {"AGP503 XAccessPolicy tools/fires spec.rules @AGP503.yaml:13"},
		"AGP504": {"AGP504 AuthPolicy tools/fires-route spec @AGP504.yaml:26"},
		"AGP505": {"AGP505 AuthPolicy tools/fires-route spec @AGP505.yaml:26"},
		"AGP506": {"AGP506 XAccessPolicy tools/fires spec.rules[2].source @AGP506.yaml:34"},
		"AGP602": {"AGP602 HTTPRoute tools/fires-rules spec.rules @AGP602.yaml:15"},
		"AGP601": {"AGP601 XAccessPolicy infra/fires spec.rules[1].authorization.mcp.methods[0].params @AGP601.yaml:58"},
		"AGP210": {"AGP210 XAccessPolicy infra/fires spec.targetRefs[0] @AGP210.yaml:21"},
		"AGP212": {"AGP212 AuthPolicy infra/fires spec.targetRef @AGP212.yaml:8"},
		"AGP213": {"AGP213 AuthPolicy shop/fires spec.defaults.rules.authentication.app-keys.apiKey @AGP213.yaml:32"},
		"AGP214": {
			"AGP214 ListenerSet tools/fires spec.parentRef @AGP214.yaml:21",
			"AGP214 ListenerSet infra/fires-missing spec.parentRef @AGP214.yaml:29",
			"AGP214 ListenerSet infra/fires-reference spec.parentRef @AGP214.yaml:37",
		},
		"AGP215": {
			"AGP215 ListenerSet tools/fires spec.listeners[1] @AGP215.yaml:33",
			"AGP215 ListenerSet tools/fires spec.listeners[2] @AGP215.yaml:34",
		},
		"AGP209": {"AGP209 XAccessPolicy tools/fires spec.rules[0].source.serviceAccount @AGP209.yaml:21"},
		"AGP409": {
			"AGP409 XAccessPolicy infra/fires-alone spec @AGP409.yaml:6",
			"AGP409 XAccessPolicy tools/fires-with-others spec @AGP409.yaml:16",
		},
		"AGP410": {"AGP410 HTTPRoute tools/fires spec.rules[0].matches[1].method @AGP410.yaml:14"},
		"AGP501": {"AGP501 XAccessPolicy tools/fires apiVersion @AGP501.yaml:1"},
		"AGP502": {"AGP502 XAccessPolicy tools/fires-older spec.rules[0].name @AGP502.yaml:14"},
	}
	for _, c := range Checks() {
		t.Run(c.Code, func(t *testing.T) {
			w, ok := want[c.Code]
			if !ok {
				t.Fatalf("check %s has no case in this test (add testdata/lint/checks/%s.yaml and its expected findings)", c.Code, c.Code)
			}
			ctx := loadContext(t, fixtures+"/base.yaml", fixtures+"/checks/"+c.Code+".yaml")
			var cfg *config.File
			if cf := fixtures + "/checks/" + c.Code + ".config"; fileExists(cf) {
				var err error
				if cfg, err = config.Load(cf); err != nil {
					t.Fatal(err)
				}
			}
			r := Run(ctx, Options{Checks: []*Check{c}, Config: cfg})
			got := briefs(r.Findings)
			if strings.Join(got, "\n") != strings.Join(w, "\n") {
				t.Errorf("findings:\n got  %s\n want %s", strings.Join(got, "\n      "), strings.Join(w, "\n      "))
			}
			for _, f := range r.Findings {
				if !strings.HasPrefix(f.Object.Name, "fires") && f.Object.Kind != "Config" {
					t.Errorf("%s: an object not named fires* was reported", brief(f))
				}
				if (f.Message == "" && f.Quoted == nil) || f.Severity != c.Severity || f.Category != c.Category || f.Title != c.Title || f.Fix == "" {
					t.Errorf("%s: finding not filled in from its check: %+v", brief(f), f)
				}
			}
		})
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestUpstreamExamples: every upstream valid example passes the schema checks, every
// invalid one is rejected (AGP101), each file on its own.
func TestUpstreamExamples(t *testing.T) {
	schemaOnly, err := Selector{Only: []string{"schema"}}.Select()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"valid", "invalid"} {
		files, _ := filepath.Glob(filepath.Join(fixtures, "upstream", dir, "*.yaml"))
		if len(files) == 0 {
			t.Fatalf("no upstream %s examples", dir)
		}
		for _, f := range files {
			r := Run(loadContext(t, f), Options{Checks: schemaOnly})
			rejected := slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Code == "AGP101" })
			if dir == "valid" && len(r.Findings) > 0 {
				t.Errorf("%s: want no schema findings, got %v", f, briefs(r.Findings))
			}
			if dir == "invalid" && !rejected {
				t.Errorf("%s: want AGP101, got %v", f, briefs(r.Findings))
			}
		}
	}
}

// TestExamplesFindings pins what lint says about the shipped example scenario.
func TestExamplesFindings(t *testing.T) {
	r := Run(loadContext(t, "../../testdata/examples"), Options{})
	want := []string{
		"AGP402 XAccessPolicy tools/calc-arithmetic spec.rules[2].authorization.methods @40-access-policies.yaml:150",
		"AGP501 XAccessPolicy tools/calc-legacy apiVersion @40-access-policies.yaml:153",
		// The v0alpha0 tools list is dropped when the API server stores the object at v1alpha1.
		"AGP102 XAccessPolicy tools/calc-legacy spec.rules[0].authorization.tools @40-access-policies.yaml:173",
		"AGP212 AuthPolicy infra/edge-jwt spec.targetRef @50-auth-policies.yaml:10",
		"AGP212 AuthPolicy pay/ledger-scopes spec.targetRef @50-auth-policies.yaml:30",
	}
	if got := briefs(r.Findings); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if !r.Fails(Threshold(SeverityError)) || r.Summary != (Summary{Errors: 4, Warnings: 1}) {
		t.Errorf("summary %+v", r.Summary)
	}
}

func TestSelector(t *testing.T) {
	tests := []struct {
		only, skip []string
		want       []string // codes kept; nil means "every check" is not asserted
		wantErr    string
		check      func(t *testing.T, got []*Check)
	}{
		{only: []string{"AGP101"}, want: []string{"AGP101"}},
		{only: []string{"agp101,agp202"}, want: []string{"AGP101", "AGP202"}},
		{only: []string{"schema"}, want: []string{"AGP101", "AGP102", "AGP103", "AGP104", "AGP105", "AGP106", "AGP107"}},
		{only: []string{"schema"}, skip: []string{"AGP102"}, want: []string{"AGP101", "AGP103", "AGP104", "AGP105", "AGP106", "AGP107"}},
		{skip: []string{"allow-all", "loss"}, check: func(t *testing.T, got []*Check) {
			for _, c := range got {
				if c.Category == CategoryAllowAll || c.Category == CategoryLoss {
					t.Errorf("%s kept", c.Code)
				}
			}
			if len(got) == 0 {
				t.Error("nothing kept")
			}
		}},
		{only: []string{"AGP999"}, wantErr: `--only: unknown check or category "AGP999"`},
		{skip: []string{"allowall"}, wantErr: `--skip: unknown check or category "allowall"`},
		{only: []string{"AGP101"}, skip: []string{"agp101"}, wantErr: "--only AGP101 and --skip AGP101 contradict each other"},
		{only: []string{"AGP101"}, skip: []string{"schema"}, wantErr: "--only AGP101 with --skip schema leaves no check to run"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.only, "+")+"-"+strings.Join(tt.skip, "+"), func(t *testing.T) {
			got, err := Selector{Only: tt.only, Skip: tt.skip}.Select()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("want error %q, got %v", tt.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, got)
				return
			}
			var codes []string
			for _, c := range got {
				codes = append(codes, c.Code)
			}
			if strings.Join(codes, ",") != strings.Join(tt.want, ",") {
				t.Errorf("got %v, want %v", codes, tt.want)
			}
		})
	}
}

func TestThreshold(t *testing.T) {
	tests := []struct {
		threshold string
		sev       Severity
		want      bool
	}{
		{"error", SeverityError, true},
		{"error", SeverityWarning, false},
		{"warning", SeverityError, true},
		{"warning", SeverityWarning, true},
		{"warning", SeverityInfo, false},
		{"info", SeverityInfo, true},
		{"none", SeverityError, false},
		{"ERROR", SeverityError, true},
	}
	for _, tt := range tests {
		th, err := ParseThreshold(tt.threshold)
		if err != nil {
			t.Fatal(err)
		}
		if got := th.Reached(tt.sev); got != tt.want {
			t.Errorf("%s reached by %s: got %v", tt.threshold, tt.sev, got)
		}
	}
	if _, err := ParseThreshold("fatal"); err == nil {
		t.Error("fatal accepted")
	}
}

func TestRegistry(t *testing.T) {
	checks := Checks()
	if len(checks) < 20 {
		t.Fatalf("only %d checks registered", len(checks))
	}
	for i, c := range checks {
		if i > 0 && checks[i-1].Code >= c.Code {
			t.Errorf("checks not sorted: %s before %s", checks[i-1].Code, c.Code)
		}
		if err := validCheck(c); err != nil {
			t.Errorf("%s: %v", c.Code, err)
		}
	}
	bad := []*Check{
		{Code: "AGP1", Severity: SeverityError, Category: CategorySchema, Title: "t", Explanation: "e", Fix: "f", Run: func(*Context) []Finding { return nil }},
		{Code: "AGP199", Severity: "fatal", Category: CategorySchema, Title: "t", Explanation: "e", Fix: "f", Run: func(*Context) []Finding { return nil }},
		{Code: "AGP199", Severity: SeverityError, Category: CategoryLoss, Title: "t", Explanation: "e", Fix: "f", Run: func(*Context) []Finding { return nil }},
		{Code: "AGP199", Severity: SeverityError, Category: CategorySchema, Title: "t.", Explanation: "e", Fix: "f", Run: func(*Context) []Finding { return nil }},
		{Code: "AGP199", Severity: SeverityError, Category: CategorySchema, Title: "t", Explanation: "e", Fix: "", Run: func(*Context) []Finding { return nil }},
		{Code: "AGP199", Severity: SeverityError, Category: CategorySchema, Title: "t", Explanation: "e", Fix: "f"},
	}
	for _, c := range bad {
		if validCheck(c) == nil {
			t.Errorf("accepted malformed check %+v", c)
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("registering a duplicate code did not panic")
			}
		}()
		Register(checks[0])
	}()
}

func TestSortFindingsIsDeterministic(t *testing.T) {
	fs := []Finding{
		{Code: "AGP2", Source: snapshot.Source{Cluster: "c"}, Object: ObjectRef{Kind: "K", Name: "b"}},
		{Code: "AGP3", Source: snapshot.Source{File: "b.yaml", Line: 1}},
		{Code: "AGP2", Source: snapshot.Source{File: "a.yaml", Line: 9}},
		{Code: "AGP1", Source: snapshot.Source{File: "a.yaml", Line: 9}},
		{Code: "AGP1", Source: snapshot.Source{File: "a.yaml", Line: 2, Column: 5}},
		{Code: "AGP2", Source: snapshot.Source{Cluster: "c"}, Object: ObjectRef{Kind: "K", Name: "a"}},
	}
	SortFindings(fs)
	var got []string
	for _, f := range fs {
		got = append(got, fmt.Sprintf("%s:%d %s %s", f.Source.File, f.Source.Line, f.Code, f.Object.Name))
	}
	want := []string{"a.yaml:2 AGP1 ", "a.yaml:9 AGP1 ", "a.yaml:9 AGP2 ", "b.yaml:1 AGP3 ", ":0 AGP2 a", ":0 AGP2 b"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q", got)
	}
}

// TestLiveLegacyPolicy: a v0alpha0-written policy read from a cluster at v1alpha1 (no
// action) is validated as the API server did (v0alpha0), and reported as never enforced.
func TestLiveLegacyPolicy(t *testing.T) {
	objs, _, err := cluster.ReadFiles(cluster.FileOptions{Filenames: []string{fixtures + "/base.yaml", fixtures + "/live-legacy.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range objs {
		objs[i].Source = snapshot.Source{Cluster: "kind-test", Item: -1}
	}
	s, err := cluster.Build(objs, nil, "cluster")
	if err != nil {
		t.Fatal(err)
	}
	ctx := NewContext(s)
	r := Run(ctx, Options{})
	got := briefs(r.Findings)
	// The legacy policy is never enforced, so the backend it seems to protect is open.
	want := []string{"AGP408 XBackend tools/calc metadata.name @.:0", "AGP501 XAccessPolicy tools/written-at-v0alpha0 spec @.:0"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %v, want %v", got, want)
	}
	if len(r.Findings) == 2 && (r.Findings[1].Location() != "cluster:kind-test" || !strings.Contains(r.Findings[1].Message, "written at v0alpha0")) {
		t.Errorf("finding %+v", r.Findings[1])
	}
}

// TestLiveObjectsNotRevalidated: objects read from a cluster are not validated again
// against the embedded CRDs unless RevalidateLive is set, and then they are exactly as
// the same objects read from files. What does not need validation is reported either
// way: objects agpol cannot read, and the legacy group.
func TestLiveObjectsNotRevalidated(t *testing.T) {
	files := []string{fixtures + "/base.yaml", fixtures + "/checks/AGP101.yaml", fixtures + "/checks/AGP102.yaml", fixtures + "/checks/AGP103.yaml"}
	schemaOnly, err := Selector{Only: []string{"schema"}}.Select()
	if err != nil {
		t.Fatal(err)
	}
	// what is "CODE Kind ns/name field" for each finding, without its location.
	what := func(r *Report) []string {
		var out []string
		for _, f := range r.Findings {
			out = append(out, strings.TrimSpace(f.Code+" "+f.Object.String()+" "+f.FieldPath))
		}
		slices.Sort(out)
		return out
	}
	fromFiles := what(Run(loadContext(t, files...), Options{Checks: schemaOnly}))

	live := func(revalidate bool) *Report {
		objs, _, err := cluster.ReadFiles(cluster.FileOptions{Filenames: files})
		if err != nil {
			t.Fatal(err)
		}
		var keep []cluster.RawObject
		var bad []Undecodable
		for i := range objs {
			objs[i].Source = snapshot.Source{Cluster: "kind-test", Item: -1}
			var scratch snapshot.Snapshot
			if err := scratch.Add(objs[i].Object(), objs[i].Source); err != nil {
				bad = append(bad, Undecodable{Object: objs[i].Object(), Source: objs[i].Source, Err: err})
				continue
			}
			keep = append(keep, objs[i])
		}
		s, err := cluster.Build(keep, nil, "cluster")
		if err != nil {
			t.Fatal(err)
		}
		ctx := NewContext(s)
		ctx.Undecodable = bad
		ctx.RevalidateLive = revalidate
		return Run(ctx, Options{Checks: schemaOnly})
	}

	r := live(false)
	want := []string{
		"AGP101 XBackend tools/fires-port-type", // cannot be read
		"AGP103 XBackend tools/fires-legacy-group apiVersion",
	}
	if got := what(r); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("default: got %q, want %q", got, want)
	}
	// Every object of a CRD kind but the v0alpha0 XAccessPolicies was left alone.
	objs, _, _ := cluster.ReadFiles(cluster.FileOptions{Filenames: files})
	crdObjects := 0
	for _, o := range objs {
		gvk := o.Object().GroupVersionKind()
		if gvk.Group != "" && (gvk.Kind != "XAccessPolicy" || gvk.Version != "v0alpha0") {
			crdObjects++
		}
	}
	if r.NotRevalidated != crdObjects {
		t.Errorf("default: NotRevalidated %d, want %d", r.NotRevalidated, crdObjects)
	}

	r = live(true)
	if got := what(r); strings.Join(got, "\n") != strings.Join(fromFiles, "\n") {
		t.Errorf("RevalidateLive: got %q, want the findings of the same files %q", got, fromFiles)
	}
	if r.NotRevalidated != 0 {
		t.Errorf("RevalidateLive: NotRevalidated %d", r.NotRevalidated)
	}
}

// TestSnapshotBuiltInCode: objects without a raw form or a source (built by other
// stages' tests) are linted without panics.
func TestSnapshotBuiltInCode(t *testing.T) {
	ctx := loadContext(t, "../../testdata/examples")
	for _, p := range ctx.Snapshot.XAccessPolicies {
		p.Origin = snapshot.Origin{}
	}
	for _, g := range ctx.Snapshot.Gateways {
		g.Origin = snapshot.Origin{}
	}
	r := Run(ctx, Options{})
	if len(r.Findings) == 0 {
		t.Error("no findings: the policies' semantic checks should still run")
	}
}

// TestAgenticChecksScope: the checks specific to the agentic reference data plane report
// on the route of the agentic Gateway only, not on the same route of an Istio Gateway
// (Kuadrant's guides).
func TestAgenticChecksScope(t *testing.T) {
	var checks []*Check
	for _, code := range []string{"AGP410", "AGP206"} {
		c, ok := LookupCheck(code)
		if !ok {
			t.Fatalf("no check %s", code)
		}
		checks = append(checks, c)
	}
	r := Run(loadContext(t, "../../testdata/lint/scope/istio-gateway.yaml"), Options{Checks: checks})
	want := []string{
		"AGP410 HTTPRoute toystore/tools spec.rules[0].matches[0].method @istio-gateway.yaml:46",
		"AGP206 HTTPRoute toystore/tools spec.rules[0].backendRefs[0] @istio-gateway.yaml:47",
	}
	if got := briefs(r.Findings); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %v\nwant %v", got, want)
	}
}
