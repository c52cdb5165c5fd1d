package main

import (
	"context"

	"github.com/spf13/cobra"
)

// command is the options of one command, in kubectl's shape: Complete fills in what the
// flags and arguments leave implicit (the namespace, resolved once; NS/NAME; the side
// files a command reads), Validate checks the combination without reading any input,
// and Run makes one package call and one render call.
type command interface {
	Complete(cmd *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runE is the RunE of a command: Complete, Validate, then Run; a.runF, when set (tests),
// receives the options instead of Run.
func (a *app) runE(o command) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(cmd, args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		if a.runF != nil {
			return a.runF(o)
		}
		return o.Run(cmd.Context())
	}
}

// checkFlagGroups runs cobra's checks of required flags and flag groups (mutually
// exclusive, required together) before cobra does, so that a failure is a usage error
// (exit 2, with the hint to read --help) like every other.
func checkFlagGroups(cmd *cobra.Command, _ []string) error {
	if err := cmd.ValidateRequiredFlags(); err != nil {
		return &usageError{err}
	}
	if err := cmd.ValidateFlagGroups(); err != nil {
		return &usageError{err}
	}
	return nil
}
