package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agpol/agpol/internal/render"
)

// enumValue is a flag that takes one of a fixed set of values: a wrong value is a usage
// error when the flag is parsed, help lists the values, and completion offers them.
type enumValue struct {
	value   *string
	allowed []string
	// what names the value in the error ("output format").
	what string
}

func (e *enumValue) String() string { return *e.value }
func (e *enumValue) Type() string   { return "string" }
func (e *enumValue) Set(v string) error {
	for _, a := range e.allowed {
		if v == a {
			*e.value = v
			return nil
		}
	}
	return fmt.Errorf("unknown %s %q: use %s", e.what, v, strings.Join(e.allowed, ", "))
}

// addEnumFlag adds flag name (shorthand short, "" for none) to cmd, set to def.
func addEnumFlag(cmd *cobra.Command, p *string, name, short, def, what, usage string, allowed []string) {
	*p = def
	cmd.Flags().VarP(&enumValue{value: p, allowed: allowed, what: what}, name, short,
		usage+": "+strings.Join(allowed, ", "))
	_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(allowed, cobra.ShellCompDirectiveNoFileComp))
}

// addOutputFlag adds -o/--output with the given formats; the first is the default.
func addOutputFlag(cmd *cobra.Command, p *string, formats ...string) {
	addEnumFlag(cmd, p, "output", "o", formats[0], "output format", "output format", formats)
}

// colorModes are the values of --color.
var colorModes = []string{string(render.ColorAuto), string(render.ColorAlways), string(render.ColorNever)}

// addColorFlag adds --color: the flag, then NO_COLOR, then whether the output is a terminal.
func addColorFlag(cmd *cobra.Command, p *string) {
	addEnumFlag(cmd, p, "color", "", string(render.ColorAuto), "--color value",
		"colour (always/never win over NO_COLOR, which wins over the terminal)", colorModes)
}
