package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestOutputLost: every command, in every format, reports output it could not write (a
// full disk, a closed stdout) with exit 2, so a CI step never passes with an empty
// comment; a reader that went away (a closed pipe, `| head`) ends it quietly.
func TestOutputLost(t *testing.T) {
	t.Chdir("../..")
	t.Setenv("KUBECONFIG", "none")
	ex := []string{"-f", "testdata/examples"}
	explain := append([]string{"explain", "--gateway", "infra/edge", "--from", "sa:agents/support", "--host", "ledger.mcp.example.com", "--tool", "balance"}, ex...)
	commands := []struct {
		args    []string
		formats []string
	}{
		{explain, []string{"text", "json", "yaml"}},
		{append([]string{"simulate", "--requests", "testdata/requests.yaml"}, ex...), []string{"text", "json", "yaml", "junit"}},
		{append([]string{"can-i", "--list", "--from", "sa:agents/billing"}, ex...), []string{"text", "json", "yaml"}},
		{append([]string{"who-can", "--tool", "balance", "--backend", "pay/ledger"}, ex...), []string{"text", "json", "yaml"}},
		{append([]string{"matrix"}, ex...), []string{"table", "text", "markdown", "csv", "json", "yaml"}},
		{[]string{"diff", "--before", "testdata/examples/40-access-policies.yaml", "--after", "testdata/examples"}, []string{"text", "markdown", "json", "yaml"}},
		{append([]string{"lint"}, ex...), []string{"text", "json", "sarif", "junit", "github"}},
		{[]string{"lint", "--explain", "AGP405"}, []string{""}},
		{[]string{"lint", "--list"}, []string{""}},
		{append([]string{"get", "xap", "-A"}, ex...), []string{"table", "wide", "json", "yaml", "name"}},
		{append([]string{"get", "gateways", "-A"}, ex...), []string{"dot", "mermaid"}},
		{append([]string{"describe", "gateway", "infra/edge"}, ex...), []string{"text", "json", "yaml"}},
		{append([]string{"effective", "authpolicy", "--target", "gateway/infra/edge"}, ex...), []string{"text", "json", "yaml"}},
		{[]string{"version"}, []string{"text", "json", "yaml"}},
		{[]string{"completion", "bash"}, []string{""}},
		{[]string{"help"}, []string{""}},
	}
	runTo := func(out *os.File, args []string) (int, string) {
		var errOut bytes.Buffer
		streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &errOut}
		return run(context.Background(), append([]string{"agpol"}, args...), streams), errOut.String()
	}
	for _, c := range commands {
		for _, format := range c.formats {
			args := c.args
			if format != "" {
				args = append(append([]string{}, args...), "-o", format)
			}
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				var buf bytes.Buffer
				streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &buf, ErrOut: &bytes.Buffer{}}
				want := run(context.Background(), append([]string{"agpol"}, args...), streams)
				if buf.Len() == 0 || want > exitFail {
					t.Fatalf("to a buffer: exit %d, %d bytes", want, buf.Len())
				}

				full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
				if err != nil {
					t.Skip(err)
				}
				defer full.Close()
				if code, errOut := runTo(full, args); code != exitUsage || !strings.Contains(errOut, "no space left on device") {
					t.Errorf("to /dev/full: exit %d, stderr %q; want exit 2 with the error", code, errOut)
				}

				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				w.Close() // a closed stdout
				if code, errOut := runTo(w, args); code != exitUsage || !strings.Contains(errOut, "closed") {
					t.Errorf("to a closed stdout: exit %d, stderr %q; want exit 2 with the error", code, errOut)
				}
				r.Close()

				r, w, err = os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				r.Close() // the reader went away
				code, errOut := runTo(w, args)
				w.Close()
				if (code != exitOK && code != want) || strings.Contains(errOut, "error") {
					t.Errorf("to a closed pipe: exit %d, stderr %q; want a quiet end (exit %d or 0)", code, errOut, want)
				}
			})
		}
	}
}
