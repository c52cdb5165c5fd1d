// Command rss runs a command and reports its peak RSS: rss ARGV... runs ARGV with this
// process's stdin, stdout and stderr, then writes "rss: maxrss_bytes=N cpu_ms=M" to
// stderr and exits with the command's exit code.
//
// It exists because a child's ru_maxrss is at least its parent's peak RSS when it was
// started (Go starts children with CLONE_VM, and Linux carries the shared memory map's
// peak over to the child at exec): measured from a large process such as bench/harness
// live, every command would report at least that process's peak. This program is small,
// so the commands it starts report their own peak.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: rss COMMAND [ARGS...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			fmt.Fprintf(os.Stderr, "rss: %v\n", err)
			os.Exit(2)
		}
		code = ee.ExitCode()
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu := ru.Utime.Nano() + ru.Stime.Nano()
		fmt.Fprintf(os.Stderr, "rss: maxrss_bytes=%d cpu_ms=%.1f\n", ru.Maxrss*1024, float64(cpu)/1e6)
	}
	os.Exit(code)
}
