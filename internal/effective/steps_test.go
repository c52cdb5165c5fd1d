package effective

import (
	"fmt"
	"testing"
)

func TestChainSteps(t *testing.T) {
	tests := []struct {
		preset string
		levels int
		want   string
	}{
		{PresetReference, 2, "[{extauth 0} {extauth 1} {allow-any 0} {allow-any 1}]"},
		{PresetReference, 1, "[{extauth 0} {allow-any 0}]"},
		{"proposal-0059", 2, "[{extauth 0} {allow-each 0} {extauth 1} {allow-each 1}]"},
		{"pr-220", 2, "[{extauth 0} {allow-any 0} {extauth 1} {allow-any 1}]"},
		{"v0alpha0-legacy", 2, "[{allow-each 0} {allow-each 1} {extauth 0} {extauth 1}]"},
	}
	for _, tt := range tests {
		sem, err := Preset(tt.preset)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(chainSteps(&sem, tt.levels)); got != tt.want {
			t.Errorf("%s, %d levels: steps %s, want %s", tt.preset, tt.levels, got, tt.want)
		}
	}
}
