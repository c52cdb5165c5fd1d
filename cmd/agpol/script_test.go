package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	sigsyaml "sigs.k8s.io/yaml"
)

var updateScripts = flag.Bool("update-scripts", false, "rewrite the expected output in testdata/script/*.txtar (golden files have -update)")

// TestMain lets the test binary run as the agpol and kubectl-agpol commands of the scripts.
func TestMain(m *testing.M) {
	if os.Getenv(cacheEnv) == "" {
		// No test writes to the user's lint cache (internal/lint tests the cache).
		os.Setenv(cacheEnv, "off")
	}
	main := func() {
		streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
		os.Exit(run(context.Background(), os.Args, streams))
	}
	testscript.Main(m, map[string]func(){"agpol": main, "kubectl-agpol": main})
}

// TestScripts runs the whole-command scripts in testdata/script: each .txtar carries its
// own manifests and the exact output and exit code expected of agpol.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       *updateScripts,
		Setup: func(env *testscript.Env) error {
			// No kubeconfig anywhere: live reads must fail cleanly, never reach a real cluster.
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("KUBECONFIG", "")
			env.Setenv("NO_COLOR", "1")
			env.Setenv("TERM", "dumb")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitCode,
		},
	})
}

// cmdExitCode runs "exitcode N command args..." and fails unless the command exits
// with exactly N. Its stdout and stderr are kept for the commands that follow.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: running %s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

// TestEveryCommandHelp runs --help for every command the root knows, including those
// other files register, as agpol and as kubectl-agpol: each must exit 0 and show its
// usage line under the name it was run as.
func TestEveryCommandHelp(t *testing.T) {
	a := &app{streams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}, name: "agpol"}
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			walk(sub, append(append([]string{}, path...), sub.Name()))
		}
	}
	walk(a.newRootCmd(), nil)
	if len(paths) < 5 {
		t.Fatalf("only %d commands found: %v", len(paths), paths)
	}
	for _, bin := range []string{"agpol", "kubectl-agpol"} {
		display := strings.Replace(bin, "-", " ", 1)
		for _, p := range paths {
			t.Run(bin+" "+strings.Join(p, " "), func(t *testing.T) {
				var out, errOut bytes.Buffer
				streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
				args := append(append([]string{"/usr/local/bin/" + bin}, p...), "--help")
				if code := run(context.Background(), args, streams); code != 0 {
					t.Fatalf("exit code %d, stderr:\n%s", code, errOut.String())
				}
				usage := "Usage:\n  " + strings.TrimSpace(display+" "+strings.Join(p, " "))
				if !strings.Contains(out.String(), usage) {
					t.Errorf("help does not contain %q:\n%s", usage, out.String())
				}
				if errOut.Len() > 0 {
					t.Errorf("stderr not empty: %s", errOut.String())
				}
			})
		}
	}
}

// TestGoreleaserConfig checks .goreleaser.yaml without running goreleaser: both binaries
// are built from this command, the -X flags name variables internal/version really has
// (so a rename breaks this test, not the release), and the krew archive ships the
// completion helper kubectl looks for.
func TestGoreleaserConfig(t *testing.T) {
	data, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Version int `json:"version"`
		Builds  []struct {
			ID      string   `json:"id"`
			Main    string   `json:"main"`
			Binary  string   `json:"binary"`
			Env     []string `json:"env"`
			Flags   []string `json:"flags"`
			Ldflags []string `json:"ldflags"`
			Goos    []string `json:"goos"`
			Goarch  []string `json:"goarch"`
			ModTime string   `json:"mod_timestamp"`
		} `json:"builds"`
		Archives []struct {
			ID    string   `json:"id"`
			IDs   []string `json:"ids"`
			Files []any    `json:"files"`
		} `json:"archives"`
		Krews []struct {
			IDs []string `json:"ids"`
		} `json:"krews"`
	}
	if err := sigsyaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Version != 2 {
		t.Errorf("version: %d, want 2", cfg.Version)
	}
	// The archives ship LICENSE*: the repository has one, Apache-2.0 like its upstreams.
	if lic, err := os.ReadFile("../../LICENSE"); err != nil || !strings.Contains(string(lic), "Apache License") || !strings.Contains(string(lic), "Version 2.0") {
		t.Errorf("LICENSE: want the Apache License 2.0 (%v)", err)
	}

	// The package-level variables of internal/version, read from its source.
	fset := token.NewFileSet()
	src, err := parser.ParseFile(fset, "../../internal/version/version.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]bool{}
	for _, d := range src.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					vars[n.Name] = true
				}
			}
		}
	}
	const pkg = "github.com/agpol/agpol/internal/version."

	binaries := map[string]string{}
	for _, b := range cfg.Builds {
		binaries[b.Binary] = b.ID
		if b.Main != "./cmd/agpol" {
			t.Errorf("build %s: main %q, want ./cmd/agpol", b.ID, b.Main)
		}
		if !slices.Contains(b.Env, "CGO_ENABLED=0") || !slices.Contains(b.Flags, "-trimpath") || b.ModTime == "" {
			t.Errorf("build %s: want CGO_ENABLED=0, -trimpath and mod_timestamp for reproducible builds", b.ID)
		}
		for _, os := range []string{"linux", "darwin", "windows"} {
			if !slices.Contains(b.Goos, os) {
				t.Errorf("build %s: no %s", b.ID, os)
			}
		}
		for _, arch := range []string{"amd64", "arm64"} {
			if !slices.Contains(b.Goarch, arch) {
				t.Errorf("build %s: no %s", b.ID, arch)
			}
		}
		set := map[string]bool{}
		for _, f := range strings.Fields(strings.Join(b.Ldflags, " ")) {
			name, ok := strings.CutPrefix(f, pkg)
			if !ok {
				if strings.Contains(f, "=") {
					t.Errorf("build %s: -X %s is not a variable of internal/version", b.ID, f)
				}
				continue
			}
			name, _, _ = strings.Cut(name, "=")
			if !vars[name] {
				t.Errorf("build %s: -X sets %s%s, which internal/version does not declare (it has %v)", b.ID, pkg, name, vars)
			}
			set[name] = true
		}
		for _, want := range []string{"version", "commit", "date"} {
			if !set[want] {
				t.Errorf("build %s: ldflags do not set %s%s", b.ID, pkg, want)
			}
		}
	}
	if binaries["agpol"] == "" || binaries["kubectl-agpol"] == "" {
		t.Fatalf("binaries %v, want agpol and kubectl-agpol", binaries)
	}

	krewArchive := false
	for _, a := range cfg.Archives {
		if !slices.Contains(a.IDs, binaries["kubectl-agpol"]) {
			continue
		}
		krewArchive = true
		if !strings.Contains(fmt.Sprint(a.Files), "hack/kubectl_complete-agpol") {
			t.Errorf("archive %s does not ship hack/kubectl_complete-agpol", a.ID)
		}
	}
	if !krewArchive {
		t.Error("no archive holds the kubectl-agpol binary")
	}
	if len(cfg.Krews) != 1 || !slices.Contains(cfg.Krews[0].IDs, binaries["kubectl-agpol"]) {
		t.Errorf("krews: %+v, want one manifest for the kubectl-agpol build", cfg.Krews)
	}
	helper, err := os.ReadFile("../../hack/kubectl_complete-agpol")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(helper), "#!/bin/sh\n") || !strings.Contains(string(helper), "exec kubectl-agpol __complete \"$@\"") {
		t.Errorf("hack/kubectl_complete-agpol:\n%s", helper)
	}
	if st, err := os.Stat("../../hack/kubectl_complete-agpol"); err == nil && st.Mode()&0o111 == 0 {
		t.Error("hack/kubectl_complete-agpol is not executable")
	}
}
