package lint

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/config"
)

// suppressionFixture has three open policies in two namespaces (AGP405 on each) and
// one with a suppress annotation.
const suppressionFixture = fixtures + "/suppress.yaml"

func TestSuppressions(t *testing.T) {
	tests := []struct {
		name   string
		config string
		// want lists every AGP405 finding as "name:suppressed-kind" ("name:-" when not suppressed).
		want []string
		// wantIssues lists the AGP00x codes reported.
		wantIssues []string
	}{
		{
			name: "annotation only",
			want: []string{"a1:-", "a2:-", "b1:-", "annotated:annotation"},
		},
		{
			name:   "config glob over a namespace",
			config: "suppressions:\n- code: AGP405\n  object: XAccessPolicy/team-a/*\n  reason: team a is trusted\n",
			want:   []string{"a1:config", "a2:config", "b1:-", "annotated:annotation"},
		},
		{
			name:   "config by category, case-insensitive kind, no object",
			config: "suppressions:\n- code: allow-all\n  reason: all open on purpose\n",
			want:   []string{"a1:config", "a2:config", "b1:config", "annotated:annotation"},
		},
		{
			name:   "glob on kind in lower case",
			config: "suppressions:\n- code: AGP405\n  object: xaccesspolicy/team-b/b1\n  reason: r\n",
			want:   []string{"a1:-", "a2:-", "b1:config", "annotated:annotation"},
		},
		{
			name:   "other code does not suppress",
			config: "suppressions:\n- code: AGP401\n  reason: r\n",
			want:   []string{"a1:-", "a2:-", "b1:-", "annotated:annotation"},
		},
		{
			name:       "expired entry no longer applies",
			config:     "suppressions:\n- code: AGP405\n  reason: r\n  expires: 2026-11-22\n",
			want:       []string{"a1:-", "a2:-", "b1:-", "annotated:annotation"},
			wantIssues: []string{"AGP003"},
		},
		{
			name:   "entry expiring tomorrow applies",
			config: "suppressions:\n- code: AGP405\n  reason: r\n  expires: 2026-11-23\n",
			want:   []string{"a1:config", "a2:config", "b1:config", "annotated:annotation"},
		},
		{
			name:       "entry without reason does not apply",
			config:     "suppressions:\n- code: AGP405\n",
			want:       []string{"a1:-", "a2:-", "b1:-", "annotated:annotation"},
			wantIssues: []string{"AGP001"},
		},
		{
			name:       "unknown code is reported, known codes of the entry still apply",
			config:     "suppressions:\n- code: AGP4O5,AGP405\n  object: XAccessPolicy/team-b/*\n  reason: r\n",
			want:       []string{"a1:-", "a2:-", "b1:config", "annotated:annotation"},
			wantIssues: []string{"AGP002"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg *config.File
			if tt.config != "" {
				var err error
				if cfg, err = config.Parse("cfg.yaml", []byte(tt.config)); err != nil {
					t.Fatal(err)
				}
			}
			r := Run(loadContext(t, suppressionFixture), Options{Config: cfg})
			var got, issues []string
			suppressed := 0
			for _, f := range r.Findings {
				switch {
				case f.Code == "AGP405":
					k := "-"
					if f.Suppressed != nil {
						k = f.Suppressed.Kind
						suppressed++
						if f.Suppressed.Reason == "" || f.Suppressed.Source.File == "" {
							t.Errorf("%s: suppression without reason or source: %+v", brief(f), f.Suppressed)
						}
					}
					got = append(got, f.Object.Name+":"+k)
				case f.Category == CategoryConfig:
					issues = append(issues, f.Code)
					if f.Suppressed != nil {
						t.Errorf("a config finding was suppressed: %s", brief(f))
					}
				default:
					t.Errorf("unexpected finding %s", brief(f))
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if strings.Join(issues, " ") != strings.Join(tt.wantIssues, " ") {
				t.Errorf("config findings: got %v, want %v", issues, tt.wantIssues)
			}
			if r.Summary.Suppressed != suppressed || r.Summary.Info != len(tt.want)-suppressed+countInfo(issues) {
				t.Errorf("summary %+v with %d suppressed", r.Summary, suppressed)
			}
			if n := len(r.Visible(false)); n != len(r.Findings)-suppressed {
				t.Errorf("Visible(false) has %d findings", n)
			}
			if n := len(r.Visible(true)); n != len(r.Findings) {
				t.Errorf("Visible(true) has %d findings", n)
			}
			if r.Fails(Threshold(SeverityInfo)) != (len(r.Findings) > suppressed) {
				t.Error("Fails(info) disagrees with the unsuppressed findings")
			}
		})
	}
}

func countInfo(codes []string) int {
	n := 0
	for _, c := range codes {
		if c == "AGP003" {
			n++
		}
	}
	return n
}

func TestAnnotationSyntax(t *testing.T) {
	tests := []struct {
		value      string
		wantCodes  []string // codes the annotation suppresses
		wantIssues []string
	}{
		{"AGP405: ok", []string{"AGP405"}, nil},
		{"agp405 , AGP401: lower case and spaces", []string{"AGP405", "AGP401"}, nil},
		{"AGP405: a; allow-all: b", []string{"AGP405", "allow-all"}, nil},
		{"AGP405: reason: with a colon", []string{"AGP405"}, nil},
		{"AGP405", nil, []string{"AGP001"}},
		{"AGP405:   ", nil, []string{"AGP001"}},
		{"", nil, []string{"AGP001"}},
		{"AGP999: typo", nil, []string{"AGP002"}},
		{"AGP405: fine\nAGP401", []string{"AGP405"}, []string{"AGP001"}},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			ctx := loadContext(t, suppressionFixture)
			var target *Context = ctx
			o := target.Snapshot.XAccessPolicies[0].Origin
			s := &suppressor{byObject: map[string][]annotationSuppression{}}
			s.parseAnnotation(ctx, o, tt.value)
			var codes []string
			for _, e := range s.byObject[refOf(o.Object()).Key()] {
				codes = append(codes, e.codes...)
				if e.reason == "" {
					t.Error("entry without reason kept")
				}
			}
			var issues []string
			for _, f := range s.issues {
				issues = append(issues, f.Code)
			}
			if strings.Join(codes, ",") != strings.Join(tt.wantCodes, ",") || strings.Join(issues, ",") != strings.Join(tt.wantIssues, ",") {
				t.Errorf("codes %v issues %v, want %v %v", codes, issues, tt.wantCodes, tt.wantIssues)
			}
		})
	}
}
