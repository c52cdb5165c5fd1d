package main

import (
	"os"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

// TestMakeBuildIsTheReleaseBuild keeps `make build` building the binary the release
// ships (issue 34): the README states the size of bin/agpol, so the Makefile's go build
// must carry goreleaser's environment, flags and stripping ldflags.
func TestMakeBuildIsTheReleaseBuild(t *testing.T) {
	data, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Builds []struct {
			ID      string   `json:"id"`
			Env     []string `json:"env"`
			Flags   []string `json:"flags"`
			Ldflags []string `json:"ldflags"`
		} `json:"builds"`
	}
	if err := sigsyaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Builds) == 0 {
		t.Fatal(".goreleaser.yaml: no builds")
	}
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	line := makeRecipeLine(string(mk), "build", "$(GO) build")
	if line == "" {
		t.Fatal("Makefile: no go build line in the build target")
	}
	for _, b := range cfg.Builds {
		for _, env := range b.Env {
			if strings.HasPrefix(env, "CGO_ENABLED=") && !strings.Contains(line, env) {
				t.Errorf("make build %q lacks %s, which goreleaser build %s sets", line, env, b.ID)
			}
		}
		for _, f := range b.Flags {
			if !strings.Contains(line, f) {
				t.Errorf("make build %q lacks %s, which goreleaser build %s passes", line, f, b.ID)
			}
		}
		for _, l := range b.Ldflags {
			if !strings.HasPrefix(l, "-X ") && !strings.Contains(line, `-ldflags "`+l+`"`) {
				t.Errorf("make build %q lacks -ldflags %q, which goreleaser build %s passes", line, l, b.ID)
			}
		}
	}
}

// makeRecipeLine is the first recipe line of target that contains want, or "".
func makeRecipeLine(makefile, target, want string) string {
	in := false
	for _, l := range strings.Split(makefile, "\n") {
		switch {
		case strings.HasPrefix(l, target+":"):
			in = true
		case in && strings.HasPrefix(l, "\t"):
			if strings.Contains(l, want) {
				return strings.TrimSpace(l)
			}
		case in && strings.TrimSpace(l) != "":
			return ""
		}
	}
	return ""
}
