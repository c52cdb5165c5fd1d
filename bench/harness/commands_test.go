package main

import (
	"io"
	"strings"
	"testing"
)

func TestRunRoundsOptional(t *testing.T) {
	cmds := commandList{
		{name: "ok", argv: []string{"true"}},
		{name: "bad", argv: []string{"ls", "/nonexistent-agpol-bench-dir"}, optional: true},
		{name: "ok2", argv: []string{"true"}},
	}
	var out strings.Builder
	if err := runRounds(cmds, 2, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want 3:\n%s", len(lines), out.String())
	}
	for i, want := range []string{"name=ok runs=2 ", "name=bad runs=0 skipped=1 reason=round 1: ", "name=ok2 runs=2 "} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d = %q, want prefix %q", i, lines[i], want)
		}
	}
	if !strings.Contains(lines[0], " rounds_cpu_ms=") || strings.Count(lines[0], ",") != 2 {
		t.Errorf("want two rounds' wall and CPU times: %q", lines[0])
	}
}

func TestRunRoundsRequiredFailureEnds(t *testing.T) {
	cmds := commandList{{name: "bad", argv: []string{"ls", "/nonexistent-agpol-bench-dir"}}}
	if err := runRounds(cmds, 1, io.Discard, io.Discard); err == nil || !strings.HasPrefix(err.Error(), "bad: ") {
		t.Fatalf("err = %v, want the command's failure", err)
	}
}
