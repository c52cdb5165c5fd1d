package config

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, data, wantErr string
	}{
		{"unknown key", "suppressions:\n- code: AGP101\n  reason: r\n  expiry: 2027-01-01\n", "field expiry not found"},
		{"bad date", "suppressions:\n- code: AGP101\n  reason: r\n  expires: 01/01/2027\n", `cfg.yaml:2: expires "01/01/2027" is not a date like 2027-01-01`},
		{"bad glob", "suppressions:\n- code: AGP101\n  reason: r\n  object: \"XAccessPolicy/[a\"\n", "cfg.yaml:2: object"},
		{"no code", "suppressions:\n- reason: r\n", "cfg.yaml:2: suppression has no code"},
		{"not yaml", "suppressions: [\n", "cfg.yaml:"},
		{"top-level typo", "supressions: []\n", "field supressions not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("cfg.yaml", []byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("want error containing %q, got %v", tt.wantErr, err)
			}
		})
	}
	cfg, err := Parse("cfg.yaml", nil)
	if err != nil || len(cfg.Suppressions) != 0 {
		t.Errorf("empty config: %v %v", cfg, err)
	}
}

// TestParseLinear: a config at the size limit, every byte of it entries (each of which
// a message may name by line), parses in time linear in its size: the lines are found
// in one pass, not one parse of the file per entry.
func TestParseLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("suppressions:\n")
	for i := 0; b.Len() < MaxBytes/2; i++ {
		fmt.Fprintf(&b, "- {code: AGP405, reason: r, object: XAccessPolicy/ns/p%d}\n", i)
	}
	b.WriteString("dataPlanes:\n")
	n := 0
	for ; b.Len() < MaxBytes-64; n++ {
		fmt.Fprintf(&b, "  class-%d: agentic\n", n)
	}
	done := make(chan error, 1)
	go func() {
		cfg, err := Parse("cfg.yaml", []byte(b.String()))
		if err == nil && len(cfg.DataPlanes) != n {
			err = fmt.Errorf("%d data planes, want %d", len(cfg.DataPlanes), n)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("a %d-byte config (%d classes) did not parse within 15s", b.Len(), n)
	}
}
