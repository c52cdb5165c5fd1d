package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/topology"
)

// Exit codes, the same for every command and output format.
const (
	exitOK            = 0 // allowed / no findings at the threshold
	exitFail          = 1 // denied / findings at or above --fail-on / expectations failed
	exitUsage         = 2 // usage or input error (bad flags, unparsable YAML, cluster unreachable)
	exitIndeterminate = 3 // the decision depends on an input agpol cannot know
)

const exitCodesHelp = `Exit codes:
  0  success (allowed, no findings at the threshold)
  1  denied, findings at or above --fail-on, or failed expectations
  2  usage or input error (bad flags, malformed manifest, cluster unreachable)
  3  indeterminate (the answer depends on something agpol cannot know offline)`

// outputWidth is the width text output fits (render.Width: the terminal's on a TTY,
// 100 columns when piped); tests replace it.
var outputWidth = render.Width

// outputTerminal tells whether standard output is a terminal (get fits its tables to
// the width only there); tests replace it.
var outputTerminal = render.IsTerminal

// usageError marks a command-line mistake (exit 2, with a hint to read --help).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return &usageError{fmt.Errorf(format, args...)} }

// resultError carries a non-zero exit code for a result that was already printed
// (a deny, findings, failed expectations); nothing more is printed for it.
type resultError struct{ code int }

func (e *resultError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// app holds what every command shares.
type app struct {
	streams genericiooptions.IOStreams
	config  *genericclioptions.ConfigFlags
	name    string // "agpol" or "kubectl agpol"
	// progress shows long stages on a terminal (stderr); it writes nothing elsewhere.
	progress *render.Progress
	// dataPlanes is --data-plane: GatewayClass name → data plane.
	dataPlanes map[string]string
	// runF, when set (tests), receives a command's options after Complete and Validate
	// instead of running it.
	runF func(command) error
	prof profiler // hidden --cpuprofile, --memprofile
}

func run(ctx context.Context, args []string, streams genericiooptions.IOStreams) (code int) {
	var a *app
	defer func() {
		if r := recover(); r != nil {
			if a != nil {
				a.progress.Stop()
			}
			fmt.Fprintf(streams.ErrOut, "error: internal error: %v\n\nThis is a bug in agpol; please report it with the command you ran.\n%s", r, debug.Stack())
			code = exitUsage
		}
	}()
	// client-go logs failed requests through klog (E1124 … request.go:1198) on stderr:
	// agpol reports every error itself, once, naming the server and the stage.
	klog.SetLogger(logr.Discard())
	out := render.NewCheckedWriter(streams.Out)
	streams.Out = out
	a = &app{streams: streams, name: "agpol", progress: render.NewProgress(streams.ErrOut)}
	render.TextWidth = outputWidth(streams.Out)
	if len(args) > 0 && strings.HasPrefix(filepath.Base(args[0]), "kubectl-") {
		a.name = "kubectl agpol"
	}
	root := a.newRootCmd()
	root.SetArgs(args[1:])
	cmd, err := root.ExecuteContextC(ctx)
	a.prof.stop()
	a.progress.Stop() // erase a status line before the error is printed
	if werr := out.Err(); werr != nil {
		// A reader that went away (| head) ends the output quietly; any other lost
		// output (a full disk, a closed stdout) is an error, whatever the format.
		if !errors.Is(werr, syscall.EPIPE) {
			fmt.Fprintf(streams.ErrOut, "error: writing the output: %v\n", werr)
			return exitUsage
		}
		if err == nil || errors.Is(err, syscall.EPIPE) {
			return exitOK
		}
	}
	return a.exitCode(err, cmd)
}

// exitCode maps errors to exit codes in one place and prints them; a usage error
// points to the help of the command that failed (cmd; the root when nil).
func (a *app) exitCode(err error, cmd *cobra.Command) int {
	if err == nil {
		return exitOK
	}
	var res *resultError
	if errors.As(err, &res) {
		return res.code
	}
	fmt.Fprintf(a.streams.ErrOut, "error: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) {
		path := a.name
		if cmd != nil && cmd.HasParent() {
			path = cmd.CommandPath() // "kubectl agpol get" as a plugin
		}
		fmt.Fprintf(a.streams.ErrOut, "See '%s --help' for usage.\n", path)
		return exitUsage
	}
	var ie *cluster.InputError
	if errors.As(err, &ie) {
		return exitUsage
	}
	// Everything else (cluster unreachable, unreadable input) is also trouble with the inputs.
	return exitUsage
}

func (a *app) newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "agpol",
		Short: "Explain the access policies in front of MCP tool servers on Kubernetes",
		Long: `agpol reads Gateway API, kube-agentic-networking (XAccessPolicy, XBackend) and
Kuadrant AuthPolicy objects, from YAML files or a live cluster, and tells you:

  what applies here     the effective policy and evaluation chain of a Gateway,
                        route or backend, as the data plane runs it
  would this call pass  a simulated agent request, allow/deny and why
  what is wrong         lint findings for CI

agpol only reads. It never writes to a cluster.

` + exitCodesHelp,
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: checkFlagGroups,
		CompletionOptions: cobra.CompletionOptions{
			HiddenDefaultCmd: false,
		},
	}
	if a.name != "agpol" {
		root.Use = "kubectl-agpol"
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: a.name}
	}
	root.SetIn(a.streams.In)
	root.SetOut(a.streams.Out)
	root.SetErr(a.streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	// Help fits the output's width (render.TextWidth): cobra's template, with flag descriptions wrapped.
	cobra.AddTemplateFunc("wrappedFlagUsages", func(f *pflag.FlagSet) string { return f.FlagUsagesWrapped(render.TextWidth) })
	// Long descriptions, written for 100 columns, reflow in a narrower terminal.
	cobra.AddTemplateFunc("reflow", func(s string) string { return render.Reflow(s, render.TextWidth) })
	root.SetHelpTemplate(strings.Replace(root.HelpTemplate(), "{{. | trimTrailingWhitespaces}}", "{{. | trimTrailingWhitespaces | reflow}}", 1))
	// The usage line, the list of subcommands and the examples are fitted too: a usage line
	// continues four columns in, a summary under its column, an example as a shell line
	// continued with " \".
	cobra.AddTemplateFunc("wrapUseLine", func(s string) string { return render.WrapHanging("  "+s, render.TextWidth, 4) })
	cobra.AddTemplateFunc("wrapCommandLine", func(name string, pad int, short string) string {
		return render.WrapHanging(fmt.Sprintf("  %-*s %s", pad, name, short), render.TextWidth, pad+1)
	})
	cobra.AddTemplateFunc("wrapExamples", func(s string) string { return render.WrapExamples(s, render.TextWidth) })
	cobra.AddTemplateFunc("wrapMoreHelp", func(path string) string {
		return render.WrapHanging(`Use "`+path+` [command] --help" for more information about a command.`, render.TextWidth, 0)
	})
	usage := strings.NewReplacer(
		".LocalFlags.FlagUsages", "wrappedFlagUsages .LocalFlags",
		".InheritedFlags.FlagUsages", "wrappedFlagUsages .InheritedFlags",
		"  {{.UseLine}}", "{{wrapUseLine .UseLine}}",
		"  {{rpad .Name .NamePadding }} {{.Short}}", "{{wrapCommandLine .Name .NamePadding .Short}}",
		"{{.Example}}", "{{wrapExamples .Example}}",
		`Use "{{.CommandPath}} [command] --help" for more information about a command.`, "{{wrapMoreHelp .CommandPath}}").Replace(root.UsageTemplate())
	root.SetUsageTemplate(usage) // a cobra whose template differs fails TestEveryCommandFitsWidth at 80 columns

	a.config = genericclioptions.NewConfigFlags(true)
	a.config.AddFlags(root.PersistentFlags())
	if f := root.PersistentFlags().Lookup("request-timeout"); f != nil {
		f.Usage = fmt.Sprintf("how long a live read of the cluster may take in all, as a duration (30s, 2m) or seconds; 0 means the default, %s", cluster.DefaultDeadline)
	}
	a.addProfileFlags(root)
	root.PersistentFlags().StringToStringVar(&a.dataPlanes, "data-plane", nil,
		"CLASS=PLANE: the data plane that serves the Gateways of GatewayClass CLASS, one of "+dataPlaneNames()+
			"; repeatable; wins over dataPlanes in .agpol.yaml (by default the class's controllerName decides)")

	root.AddCommand(
		a.newGetCmd(),
		a.newDescribeCmd(),
		a.newEffectiveCmd(),
		a.newExplainCmd(),
		a.newSimulateCmd(),
		a.newCanICmd(),
		a.newWhoCanCmd(),
		a.newMatrixCmd(),
		a.newDiffCmd(),
		a.newLintCmd(),
		a.newVersionCmd(),
	)
	// cobra adds `completion` lazily; make an unknown shell a usage error (exit 2), not help.
	root.InitDefaultCompletionCmd()
	if c, _, err := root.Find([]string{"completion"}); err == nil && c.Name() == "completion" {
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown shell %q for completion: use bash, zsh, fish or powershell", args[0])
			}
			return cmd.Help()
		}
	}
	for _, c := range root.Commands() {
		c.Example = strings.ReplaceAll(c.Example, "agpol ", a.name+" ")
	}
	return root
}

// dataPlaneNames lists the data planes --data-plane takes.
func dataPlaneNames() string {
	names := make([]string, len(topology.DataPlanes))
	for i, p := range topology.DataPlanes {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

// defaultNamespace is the namespace of a name given without one, and of objects read
// from files without one: -n, else "default". It is the one place commands read -n for
// that (live reads take the kubeconfig context's namespace, as kubectl does).
func (a *app) defaultNamespace() string {
	if a.config != nil && a.config.Namespace != nil && *a.config.Namespace != "" {
		return *a.config.Namespace
	}
	return "default"
}
