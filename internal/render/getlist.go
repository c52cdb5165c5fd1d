package render

import (
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/suggest"
	"github.com/agpol/agpol/internal/topology"
)

// GetOutput is what agpol get lists and how.
type GetOutput struct {
	Out, ErrOut io.Writer
	// Kinds are the resources asked for; Selector picks their objects (its Namespace
	// "" for every namespace).
	Kinds    []string
	Selector Selector
	Wide     bool
	Computed Computed
	// Printer prints the objects themselves (kubectl's formats); nil for the tables.
	Printer   printers.ResourcePrinter
	NoHeaders bool
	// Width is the terminal's width the tables are fitted to (Table.WriteFit); 0 when
	// the output is not a terminal, where kubectl's columns are printed whole for
	// scripts to read.
	Width int
	// JSON is -o json: the List is written an object at a time, the same bytes as the
	// printer's (ShowManagedFields is its --show-managed-fields); each object as encoded
	// while it was read when it was (ListedJSONInspect, with the same ShowManagedFields).
	JSON, ShowManagedFields bool
	// ReadNamespace is the namespace a live read was limited to; FromFiles is true
	// when only files were read. Both name where nothing was found.
	ReadNamespace string
	FromFiles     bool
}

// Get writes agpol get's list of s: a warning for each kind asked for that the cluster
// does not serve, then the tables (one per kind, a blank line between them) or, with a
// printer, the one object named or a v1 List, as kubectl does. A NAME that selects
// nothing is an error; an empty list says "No resources found" on stderr.
func Get(o GetOutput, s *snapshot.Snapshot) error {
	targets := topology.IndexTargets(s)
	var items []Item
	var tables []*Table
	for _, k := range o.Kinds {
		// A kind the cluster does not serve lists empty: say why, not just "No resources found".
		for _, missing := range s.NotInstalled {
			if strings.HasPrefix(missing, k+".") {
				fmt.Fprintf(o.ErrOut, "warning: %s is not installed in the cluster (no CRD serves it)\n", missing)
			}
		}
		t, its := GetView(k, s, targets, o.Selector, o.Wide, o.Computed)
		items = append(items, its...)
		tables = append(tables, t)
	}
	name := o.Selector.Name
	if name != "" && len(items) == 0 {
		return fmt.Errorf("%s %q not found%s", strings.Join(o.Kinds, ","), name, getHint(o.Kinds, o.Selector, s))
	}
	w := o.Out
	if o.Printer != nil {
		// kubectl's shape: one object named is printed itself, anything else as a v1 List.
		if name != "" && len(items) == 1 {
			return o.Printer.PrintObj(items[0].Load(), w)
		}
		if o.JSON {
			next := 0
			return objectListJSON(w, func() ([]byte, bool, error) {
				if next == len(items) {
					return nil, false, nil
				}
				next++
				it := &items[next-1]
				if b := it.encoded(); b != nil {
					return b, true, nil
				}
				u := it.Fresh()
				if !o.ShowManagedFields {
					u.SetManagedFields(nil)
				}
				b, err := listedJSON(u.Object)
				return b, true, err
			})
		}
		list := &unstructured.UnstructuredList{Object: map[string]any{
			"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}}}
		for i := range items {
			list.Items = append(list.Items, *items[i].Load())
		}
		if list.Items == nil {
			list.Items = []unstructured.Unstructured{}
		}
		return o.Printer.PrintObj(list, w)
	}
	if len(items) == 0 {
		// kubectl's words: the namespace listed, or nothing when every namespace was.
		where := ""
		switch {
		case o.Selector.Namespace != "":
			where = " in " + o.Selector.Namespace + " namespace"
		case o.ReadNamespace != "":
			where = " in " + o.ReadNamespace + " namespace"
		case o.FromFiles:
			where = " in the input"
		}
		fmt.Fprintf(o.ErrOut, "No resources found%s.\n", where)
		return nil
	}
	for i, t := range tables {
		if len(t.Rows) == 0 {
			continue
		}
		if i > 0 && len(tables) > 1 {
			fmt.Fprintln(w)
		}
		if err := t.WriteFit(w, o.NoHeaders, o.Width); err != nil {
			return err
		}
	}
	return nil
}

// getKindNames are get's resources as suggest names their kinds.
var getKindNames = map[string]string{"gateways": "gateway", "httproutes": "httproute", "xbackends": "xbackend",
	"xaccesspolicies": "xaccesspolicy", "authpolicies": "authpolicy", "listenersets": "listenerset"}

// getHint is "; " and suggest's hint for a NAME get found none of: the same NAME in
// another namespace, the same name as another kind (and the command getting it), or
// the nearest name; "" when nothing is close.
func getHint(resources []string, sel Selector, s *snapshot.Snapshot) string {
	var kinds []string
	for _, r := range resources {
		kinds = append(kinds, getKindNames[r])
	}
	ask := func(o suggest.Object) string {
		for r, k := range getKindNames {
			if k == o.Kind {
				return "agpol get " + r + " " + o.ID()
			}
		}
		return ""
	}
	if h := suggest.Hint(suggest.Query{Kinds: kinds, Namespace: sel.Namespace, Name: sel.Name, Ask: ask}, suggest.Objects(s)); h != "" {
		return "; " + h
	}
	return ""
}
