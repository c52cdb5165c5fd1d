package main

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	kubectlget "k8s.io/kubectl/pkg/cmd/get"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/snapshot"
)

// getKinds maps every accepted TYPE spelling to its canonical resource.
var getKinds = map[string]string{
	"gateways": "gateways", "gateway": "gateways", "gtw": "gateways", "gw": "gateways",
	"httproutes": "httproutes", "httproute": "httproutes", "routes": "httproutes", "route": "httproutes",
	"xbackends": "xbackends", "xbackend": "xbackends", "xb": "xbackends", "backends": "xbackends", "backend": "xbackends",
	"xaccesspolicies": "xaccesspolicies", "xaccesspolicy": "xaccesspolicies", "xap": "xaccesspolicies",
	"accesspolicies": "xaccesspolicies", "accesspolicy": "xaccesspolicies",
	"authpolicies": "authpolicies", "authpolicy": "authpolicies",
	// lset is the ListenerSet CRD's shortName (gateway-api apis/v1/listenerset_types.go:25).
	"listenersets": "listenersets", "listenerset": "listenersets", "lset": "listenersets",
}

// getFormats are the -o formats of agpol get beyond the object printers: the topology
// drawn as a graph (graph.go).
// ns is -n (or the NS of NS/NAME), "" without.
var getFormats = map[string]func(a *app, m *model.Model, kinds []string, name string, sel render.Selector, ns string) error{
	render.GraphDOT: func(a *app, m *model.Model, kinds []string, name string, sel render.Selector, ns string) error {
		return a.runGraph(m, kinds, name, sel, ns, render.GraphDOT)
	},
	render.GraphMermaid: func(a *app, m *model.Model, kinds []string, name string, sel render.Selector, ns string) error {
		return a.runGraph(m, kinds, name, sel, ns, render.GraphMermaid)
	},
}

type getOptions struct {
	a         *app
	load      loadFlags
	selectors selectorFlags
	// print holds -o, --no-headers and the template flags; the tables ("" or table, and
	// wide) and the graphs (dot, mermaid) are agpol's, every other format is kubectl's
	// printer of the objects themselves.
	print *kubectlget.PrintFlags
	// color is accepted for consistency: get's tables are kubectl's, not coloured.
	color string

	// Completed: the resources of TYPE, the NAME (without its namespace), the
	// selectors, the namespace -n or NS/NAME gives ("" without either), and the printer
	// of kubectl's formats (nil for agpol's tables and graphs).
	kinds     []string
	name      string
	sel       render.Selector
	namespace string
	printer   printers.ResourcePrinter
}

func (o *getOptions) Complete(_ *cobra.Command, args []string) error {
	o.kinds = nil
	for _, t := range strings.Split(args[0], ",") {
		k, ok := getKinds[strings.ToLower(t)]
		if !ok {
			return usagef("unknown type %q: use gateways, httproutes, xbackends, xaccesspolicies, authpolicies or listenersets", t)
		}
		o.kinds = append(o.kinds, k)
	}
	var err error
	if o.sel.Labels, o.sel.Fields, err = o.selectors.parse(); err != nil {
		return err
	}
	if c := o.a.config; c != nil && c.Namespace != nil {
		o.namespace = *c.Namespace
	}
	o.name = ""
	if len(args) == 2 {
		o.name = args[1]
		// NS/NAME, as describe and explain take it, is the same as -n NS NAME.
		if ns, n, ok := strings.Cut(o.name, "/"); ok && ns != "" && n != "" {
			o.namespace, o.name = ns, n
			o.load.liveNamespace = ns
			o.load.allNamespaces = false
		}
	}
	o.load.namespace = o.namespace
	if o.load.namespace == "" {
		o.load.namespace = "default"
	}
	o.printer, o.load.admit, o.load.inspect = nil, nil, nil
	if _, graph := getFormats[o.output()]; graph {
		return nil
	}
	switch o.output() {
	case "", "table", "wide":
		return nil
	}
	p, err := o.print.ToPrinter()
	if err != nil {
		if genericclioptions.IsNoCompatiblePrinterError(err) {
			return usagef("unable to match a printer suitable for the output format %q, allowed formats are: %s", o.output(), strings.Join(o.formats(), ","))
		}
		return usagef("%v", err)
	}
	o.printer = p
	if slices.Contains(o.kinds, "listenersets") {
		// Printed with the status agpol computes from their Gateways: every kind is
		// admitted, as for the tables.
		return nil
	}
	// kubectl's printers print the objects as read and nothing is decided: no object
	// is admitted (LoadNotes says how many were not checked).
	o.load.admit = cluster.AdmitKinds{}
	if o.name == "" && strings.ToLower(o.output()) == "json" {
		// The List's items are encoded as the files are read, in parallel (render.Get
		// writes them as they are).
		sel := o.sel
		sel.Namespace = o.filterNamespace()
		o.load.inspect = render.ListedJSONInspect(o.printedKinds(), sel, !o.print.JSONYamlPrintFlags.ShowManagedFields)
	}
	return nil
}

// printedKinds are the kinds of TYPE.
func (o *getOptions) printedKinds() map[schema.GroupKind]bool {
	out := map[schema.GroupKind]bool{}
	for _, k := range snapshot.KnownKinds {
		if slices.Contains(o.kinds, k.Resource) {
			out[k.GroupKind()] = true
		}
	}
	return out
}

func (o *getOptions) Validate() error {
	if o.name != "" && o.selectors.given() {
		return usagef("name cannot be provided when a selector is specified")
	}
	return o.load.validate()
}

func (o *getOptions) Run(ctx context.Context) error {
	a := o.a
	m, err := a.load(ctx, &o.load)
	if err != nil {
		return err
	}
	if err := o.load.refusePartial(m.Snapshot, func(res string) bool { return slices.Contains(o.kinds, res) }); err != nil {
		return err
	}
	if graph, ok := getFormats[o.output()]; ok {
		return graph(a, m, o.kinds, o.name, o.sel, o.namespace)
	}
	return a.runGet(o, m)
}

// filterNamespace is the namespace get lists: "" (every namespace) with -A or without -n.
func (o *getOptions) filterNamespace() string {
	if o.load.allNamespaces {
		return ""
	}
	return o.namespace
}

// output is -o.
func (o *getOptions) output() string { return *o.print.OutputFormat }

func (a *app) newGetCmd() *cobra.Command {
	o := &getOptions{a: a, print: kubectlget.NewGetPrintFlags()}
	cmd := &cobra.Command{
		Use:   "get TYPE[,TYPE...] [NAME]",
		Short: "List gateways, routes, backends and policies",
		Long: `List Gateways, HTTPRoutes, XBackends, XAccessPolicies and AuthPolicies, from files (-f)
or the live cluster, with the policies attached to each target and the status recorded on
each policy.

TYPE is one of (short names in brackets):
  gateways (gateway, gtw, gw)
  httproutes (httproute, routes, route)
  xbackends (xbackend, xb, backends)
  xaccesspolicies (xaccesspolicy, xap, accesspolicies)
  authpolicies (authpolicy)
  listenersets (listenerset, lset)
Several types can be given comma-separated.

-l/--selector and --field-selector select objects as kubectl does (the field selector takes
metadata.name and metadata.namespace, as the API server does for custom resources).

For XAccessPolicies, ACCEPTED is the admission the data plane follows and where it comes
from: [recorded] is the status a controller wrote, [computed] agpol's computation when
there is none. ENFORCED is what the data plane does with the policy, computed over the
whole input: True, or False(Reason) / Partial(Reason) when it is not enforced (on some
targets): NoAction (a v0alpha0 object, stored without spec.action), an admission reason,
TargetNotFound, OtherDataPlane (only kube-agentic-networking enforces XAccessPolicies),
NotRouted (no route reaches the XBackend), and Unknown(NotRead) when a live read of one
namespace cannot tell. For ListenerSets, ACCEPTED is whether the parent Gateway takes
the ListenerSet's listeners: True, or False(NotAllowed|ParentNotFound|NotSupported);
LISTENERS marks a listener that conflicts with an earlier one (Conflicted); a Gateway's
LISTENERS adds its ListenerSets' listeners, marked the same or with why the Gateway does
not take them. -o json|yaml print a ListenerSet without a recorded status with the one
agpol computes (its messages say so).
-o dot|mermaid labels the policies with the same cells.`,
		Example: `  # The access policies of the shipped examples: admission, enforcement,
  # file and line
  agpol get xaccesspolicies -A -f testdata/examples -o wide

  # Gateways and backends in every namespace of the current cluster
  agpol get gateways,xbackends -A

  # One policy, wide
  agpol get xap calc-allow -n shop -f manifests/ -o wide

  # Policies labelled team=pay in every namespace; every policy but one
  agpol get xap -A -l team=pay
  agpol get xap -A --field-selector metadata.name!=calc-allow`,
		Args: kindArgs(a, "get", "get xaccesspolicies -A -f DIR"),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return []string{"gateways", "httproutes", "xbackends", "xaccesspolicies", "authpolicies", "listenersets"}, cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: a.runE(o),
	}
	o.load.addFlags(cmd)
	o.load.addAllowPartial(cmd)
	o.selectors.addFlags(cmd)
	o.print.JSONYamlPrintFlags.AddFlags(cmd)
	o.print.TemplateFlags.AddFlags(cmd)
	if f := cmd.Flags().Lookup("template"); f != nil {
		// kubectl's text, with a link short enough for an 80-column --help.
		f.Usage = "Template string or path to template file to use when -o=go-template, -o=go-template-file. " +
			"The template format is golang templates [https://pkg.go.dev/text/template]."
	}
	cmd.Flags().StringVarP(o.print.OutputFormat, "output", "o", "",
		"output format: table (the default), wide, dot or mermaid (gateways: the topology as a graph), or kubectl's "+
			strings.Join(o.print.AllowedFormats()[:len(o.print.AllowedFormats())-1], ", ")+" of the objects themselves")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(o.formats(), cobra.ShellCompDirectiveNoFileComp))
	cmd.Flags().BoolVar(o.print.NoHeaders, "no-headers", false, "omit table headers (tables and custom-columns)")
	addPlainColorFlag(cmd, &o.color, "get's tables are kubectl's and not coloured")
	return cmd
}

// formats are the -o values of agpol get.
func (o *getOptions) formats() []string {
	out := []string{"table", "wide"}
	for _, f := range o.print.AllowedFormats() {
		if f != "wide" {
			out = append(out, f)
		}
	}
	graphs := make([]string, 0, len(getFormats))
	for f := range getFormats {
		graphs = append(graphs, f)
	}
	sort.Strings(graphs)
	return append(out, graphs...)
}

func (a *app) runGet(o *getOptions, m *model.Model) error {
	s := m.Snapshot
	computed := render.Computed{}
	switch {
	case o.printer == nil:
		computed = render.ComputedFrom(m.Statuses())
	case slices.Contains(o.kinds, "listenersets"):
		// kubectl's printers print the objects, not agpol's columns; a ListenerSet
		// without a recorded status is printed with the one agpol computes.
		computed = render.ComputedFrom(m.ListenerSetStatuses())
	}
	sel := o.sel
	sel.Namespace, sel.Name = o.filterNamespace(), o.name
	return render.Get(render.GetOutput{
		Out: a.streams.Out, ErrOut: a.streams.ErrOut,
		Kinds: o.kinds, Selector: sel, Wide: o.output() == "wide", Computed: computed,
		Printer: o.printer, NoHeaders: *o.print.NoHeaders, Width: o.tableWidth(a),
		JSON: strings.ToLower(o.output()) == "json", ShowManagedFields: o.print.JSONYamlPrintFlags.ShowManagedFields,
		ReadNamespace: o.load.readNamespace, FromFiles: len(o.load.files) > 0 && !o.load.live,
	}, s)
}

// tableWidth is the width get's tables fit: the terminal's (not with -o wide, wide by
// design as kubectl's); 0, no limit, when the output is not a terminal.
func (o *getOptions) tableWidth(a *app) int {
	if o.output() == "wide" || !outputTerminal(a.streams.Out) {
		return 0
	}
	return render.TextWidth
}
