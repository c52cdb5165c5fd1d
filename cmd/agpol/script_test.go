package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

var updateScripts = flag.Bool("update", false, "rewrite the expected output in testdata/script/*.txtar")

// TestMain lets the test binary run as the agpol and kubectl-agpol commands of the scripts.
func TestMain(m *testing.M) {
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
