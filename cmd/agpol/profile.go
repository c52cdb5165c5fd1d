package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// profiler is the hidden --cpuprofile and --memprofile flags: a whole command's
// profiles, for go tool pprof (bench/README.md).
type profiler struct {
	cpu, mem string
	cpuFile  *os.File
}

// addProfileFlags adds the hidden flags to root and starts the CPU profile before
// the command runs, after root's own PersistentPreRunE; a.prof.stop writes the profiles
// when it has returned.
func (a *app) addProfileFlags(root *cobra.Command) {
	p := &a.prof
	root.PersistentFlags().StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the command to this file")
	root.PersistentFlags().StringVar(&p.mem, "memprofile", "", "write a heap profile (allocations) of the command to this file when it ends")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	_ = root.PersistentFlags().MarkHidden("memprofile")
	check := root.PersistentPreRunE
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if check != nil {
			if err := check(cmd, args); err != nil {
				return err
			}
		}
		if p.mem != "" {
			runtime.MemProfileRate = 64 << 10
		}
		if p.cpu == "" {
			return nil
		}
		f, err := os.Create(p.cpu)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		p.cpuFile = f
		return nil
	}
}

// stop ends the CPU profile and writes the heap profile, if asked for.
func (p *profiler) stop() {
	if p.cpuFile != nil {
		pprof.StopCPUProfile()
		p.cpuFile.Close()
		p.cpuFile = nil
	}
	if p.mem != "" {
		if f, err := os.Create(p.mem); err == nil {
			_ = pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
		p.mem = ""
	}
}
