package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/agpol/agpol/internal/render"
)

// enumValue is a flag that takes one of a fixed set of values: a wrong value is a usage
// error when the flag is parsed, help lists the values, and completion offers them. T
// is the value's type: a string, or a typed value such as render.Format, so that the
// value is chosen once, when the flag is parsed.
type enumValue[T ~string] struct {
	value   *T
	allowed []T
	// what names the value in the error ("output format").
	what string
}

func (e *enumValue[T]) String() string { return string(*e.value) }
func (e *enumValue[T]) Type() string   { return "string" }
func (e *enumValue[T]) Set(v string) error {
	for _, a := range e.allowed {
		if v == string(a) {
			*e.value = a
			return nil
		}
	}
	return fmt.Errorf("unknown %s %q: use %s", e.what, v, joinValues(e.allowed))
}

func joinValues[T ~string](values []T) string {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// addEnumFlag adds flag name (shorthand short, "" for none) to cmd, set to def.
func addEnumFlag[T ~string](cmd *cobra.Command, p *T, name, short string, def T, what, usage string, allowed []T) {
	*p = def
	cmd.Flags().VarP(&enumValue[T]{value: p, allowed: allowed, what: what}, name, short,
		usage+": "+joinValues(allowed))
	completions := strings.Split(joinValues(allowed), ", ")
	_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(completions, cobra.ShellCompDirectiveNoFileComp))
}

// addOutputFlag adds -o/--output with the given formats; the first is the default. The
// format is typed when the flag is parsed: the command hands it to its render function.
func addOutputFlag(cmd *cobra.Command, p *render.Format, formats ...render.Format) {
	addEnumFlag(cmd, p, "output", "o", formats[0], "output format", "output format", formats)
}

// colorModes are the values of --color.
var colorModes = []string{string(render.ColorAuto), string(render.ColorAlways), string(render.ColorNever)}

// addColorFlag adds --color: the flag, then NO_COLOR, then whether the output is a terminal.
func addColorFlag(cmd *cobra.Command, p *string) {
	addEnumFlag(cmd, p, "color", "", string(render.ColorAuto), "--color value",
		"colour (always/never win over NO_COLOR, which wins over the terminal)", colorModes)
}

// addPlainColorFlag adds --color to a command whose output has nothing to colour: every
// command that prints text takes the flag (and checks its value), and this one says why
// it changes nothing.
func addPlainColorFlag(cmd *cobra.Command, p *string, why string) {
	addColorFlag(cmd, p)
	cmd.Flags().Lookup("color").Usage = "accepted for consistency; " + why + ": " + strings.Join(colorModes, ", ")
}

// selectorFlags are kubectl's -l/--selector and --field-selector.
type selectorFlags struct {
	labels string
	fields string
}

func (f *selectorFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.labels, "selector", "l", "",
		"selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin' and 'key' (e.g. -l key1=value1,key2=value2)")
	cmd.Flags().StringVar(&f.fields, "field-selector", "",
		"selector (field query) to filter on, supports '=', '==' and '!=' on metadata.name and metadata.namespace (e.g. --field-selector metadata.name=calc)")
}

// selectableFields are the fields the API server can select custom resources by.
var selectableFields = []string{"metadata.name", "metadata.namespace"}

// parse is the selectors, nil when not given; a malformed one is a usage error with
// kubectl's (the API server's) message.
func (f *selectorFlags) parse() (labels.Selector, fields.Selector, error) {
	var ls labels.Selector
	var fs fields.Selector
	if f.labels != "" {
		s, err := labels.Parse(f.labels)
		if err != nil {
			return nil, nil, usagef("%v", err)
		}
		ls = s
	}
	if f.fields != "" {
		s, err := fields.ParseSelector(f.fields)
		if err != nil {
			return nil, nil, usagef("%v", err)
		}
		for _, r := range s.Requirements() {
			if !slices.Contains(selectableFields, r.Field) {
				return nil, nil, usagef("field label not supported: %s", r.Field)
			}
		}
		fs = s
	}
	return ls, fs, nil
}

// given reports whether a selector was given.
func (f *selectorFlags) given() bool { return f.labels != "" || f.fields != "" }

// kindArgs checks the arguments of get and describe, TYPE [NAME], saying what to type
// when the type is missing, as kubectl does.
func kindArgs(a *app, verb, example string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return usagef("You must specify the type of resource to %s: one of gateways, httproutes, xbackends, xaccesspolicies, authpolicies (for example: %s %s)", verb, a.name, example)
		case len(args) > 2:
			return usagef("%s takes a TYPE and at most one NAME, got %d arguments: %s", verb, len(args), strings.Join(args, " "))
		}
		return nil
	}
}
