package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/describe"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/snapshot"
)

type describeOptions struct {
	a           *app
	load        loadFlags
	semantics   string
	trustDomain string
	color       string
	output      render.Format

	// Completed: the kind, the semantics, and the object named ([namespace, name];
	// nil without NAME: every object of the kind in namespace, "" for every namespace).
	kind      string
	sem       effective.Semantics
	name      []string
	namespace string
	// need names the objects the views read, set by the load (nil: every object).
	need func(snapshot.Ref) bool
}

func (o *describeOptions) Complete(_ *cobra.Command, args []string) error {
	var ok bool
	if o.kind, ok = describeKind(args[0]); !ok {
		return usagef("cannot describe %q: use gateway, httproute, xbackend, xaccesspolicy or authpolicy", args[0])
	}
	var err error
	if o.sem, err = effective.Preset(o.semantics); err != nil {
		return usagef("%v", err)
	}
	o.namespace = o.a.defaultNamespace()
	o.load.namespace = o.namespace
	o.load.wholeCluster = true
	o.name = nil
	if len(args) == 2 {
		ns, name := o.namespace, args[1]
		if n, nm, ok := strings.Cut(name, "/"); ok {
			ns, name = n, nm
		}
		o.name = []string{ns, name}
	}
	if o.name == nil && o.load.allNamespaces {
		o.namespace = ""
	}
	// Only the objects the views read are admitted (describe.Needs), and the views are
	// built on them; an AuthPolicy's view reads every path, so every object is.
	o.load.needs, o.need = nil, nil
	if o.kind != describe.KindAuthPolicy {
		kind, name, ns := o.kind, o.name, o.namespace
		o.load.needs = func(s *snapshot.Snapshot) func(snapshot.Ref) bool {
			o.need = describe.Needs(s, kind, name, ns)
			return o.need
		}
	}
	return nil
}

func (o *describeOptions) Validate() error {
	if o.name != nil && o.load.allNamespaces {
		return usagef("a NAME cannot be given with -A")
	}
	return o.load.validate()
}

func (o *describeOptions) Run(ctx context.Context) error {
	a := o.a
	m, err := a.load(ctx, &o.load)
	if err != nil {
		return err
	}
	views, err := describe.ListReading(m, o.need, o.sem, o.trustDomain, o.kind, o.name, o.namespace)
	if err != nil {
		return err
	}
	return render.Describe(render.DescribeOutput{
		Out: a.streams.Out, ErrOut: a.streams.ErrOut, Format: o.output, Color: render.ColorMode(o.color),
		Named: o.name != nil, Namespace: o.namespace,
	}, views)
}

// describeKind maps what a user types to the kind describe names it.
func describeKind(arg string) (string, bool) {
	switch strings.ToLower(arg) {
	case "gateway", "gateways", "gw", "gtw":
		return describe.KindGateway, true
	case "httproute", "httproutes", "route", "routes":
		return describe.KindHTTPRoute, true
	case "xbackend", "xbackends", "xb", "backend", "backends":
		return describe.KindXBackend, true
	case "xaccesspolicy", "xaccesspolicies", "xap", "accesspolicy", "accesspolicies":
		return describe.KindXAccessPolicy, true
	case "authpolicy", "authpolicies":
		return describe.KindAuthPolicy, true
	}
	return "", false
}

func (a *app) newDescribeCmd() *cobra.Command {
	o := &describeOptions{a: a}
	cmd := &cobra.Command{
		Use:   "describe gateway|httproute|xbackend|xaccesspolicy|authpolicy [NAME]",
		Short: "Show what applies to a gateway, route or backend, and where a policy applies",
		Long: `Show agpol's view of one object, or, without NAME, of every object of the kind in the
namespace (-n, default "default"; -A: every namespace), as kubectl describe does.

  gateway, httproute, xbackend: for a Gateway, the data plane that serves it (and why)
    and its listeners (port, protocol, hostname, TLS and mTLS, attached routes,
    programmed or why not); the XAccessPolicies attached (admitted or rejected, and why;
    enforced or not, and why); a Gateway's gateway level once, then for each path
    through the object (listener, route rule, backend) the evaluation chain as the data
    plane runs it, the gateway level named, not repeated; the effective Kuadrant
    AuthPolicy per listener or route rule.
  xaccesspolicy (xap, accesspolicy): its admission (computed, and the recorded status),
    whether it is enforced, each target (with the data plane of a Gateway and the
    count against the controller's limit of 5 policies per target) and each path
    through it, with whether the policy runs there and why not; its rules with
    file:line; the rules a same-named rule of another policy replaces.
  authpolicy: its target, mode (defaults/overrides, atomic/merge), computed
    enforcement and condition, its rules with file:line and the policies that displace
    them, the paths where it is effective or displaced, and whose rules it displaces.

-o json|yaml prints the same view as an agpol.dev/v1alpha1 Description (one object) or
DescriptionList (without NAME); see docs/commands.md.

NAME is NAME (in -n NAMESPACE, default "default") or NAMESPACE/NAME.`,
		Example: `  agpol describe gateway infra/edge -f testdata/examples
  agpol describe gateways -A -f testdata/examples
  agpol describe xap calc-arithmetic -n tools -f testdata/examples
  agpol describe authpolicy infra/edge-jwt -f testdata/examples -o yaml
  agpol describe xbackend ledger -n pay -f testdata/examples \
      --semantics proposal-0059`,
		Args: kindArgs(a, "describe", "describe gateway infra/edge -f DIR"),
		ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return []string{"gateway", "httproute", "xbackend", "xaccesspolicy", "authpolicy"}, cobra.ShellCompDirectiveNoFileComp
			}
			if len(args) > 1 { // one NAME at most
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return describeNames(args[0], o.load.files, o.load.recursive, toComplete), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: a.runE(o),
	}
	o.load.addFlags(cmd)
	cmd.Flags().Lookup("all-namespaces").Usage = "without NAME: describe the objects of every namespace"
	addEnumFlag(cmd, &o.semantics, "semantics", "", effective.PresetReference, "semantics preset", "semantics preset", effective.PresetNames())
	cmd.Flags().StringVar(&o.trustDomain, "trust-domain", effective.DefaultTrustDomain, "SPIFFE trust domain of ServiceAccount identities")
	addColorFlag(cmd, &o.color)
	addOutputFlag(cmd, &o.output, "text", "json", "yaml")
	return cmd
}

// describeNames completes NAME as NAMESPACE/NAME from the -f files; nothing without -f
// (completion does not read the cluster) or when the files do not load.
func describeNames(kindArg string, files []string, recursive bool, prefix string) []string {
	kind, ok := describeKind(kindArg)
	if !ok || len(files) == 0 {
		return nil
	}
	s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: files, Recursive: recursive})
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range describe.Names(s, kind, "") {
		if id := n[0] + "/" + n[1]; strings.HasPrefix(id, prefix) {
			out = append(out, id)
		}
	}
	return out
}
