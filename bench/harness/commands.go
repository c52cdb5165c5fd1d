package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// commandList is a repeatable -c NAME=ARGV flag: ARGV is split on spaces.
type commandList []namedCommand

type namedCommand struct {
	name string
	argv []string
}

func (c *commandList) String() string { return fmt.Sprint(len(*c)) }

func (c *commandList) Set(v string) error {
	name, argv, ok := strings.Cut(v, "=")
	if !ok || name == "" || strings.TrimSpace(argv) == "" {
		return fmt.Errorf("want NAME=COMMAND ARGS, got %q", v)
	}
	*c = append(*c, namedCommand{name, strings.Fields(argv)})
	return nil
}

// run is one run of a whole process, measured from outside.
type run struct {
	wall, cpu time.Duration
	maxRSS    int64 // peak resident set of the process, bytes
	out       int64 // bytes written to stdout
	code      int
}

// commands runs whole processes as users run them (-c NAME=ARGV, repeatable), in
// rounds: each round runs every command once, in the order given, so a busy machine
// slows them alike. For each it prints the median wall time, CPU time (user+system of
// the process, from its rusage) and peak RSS (ru_maxrss), one line per command:
//
//	name=NAME runs=N ms=... cpu_ms=... rss_bytes=... out_bytes=... exit=...
//
// Exit codes 0, 1 and 3 (findings, denials, indeterminate answers) count as runs;
// any other ends the measurement.
func commands(args []string) error {
	fs := flag.NewFlagSet("commands", flag.ExitOnError)
	var cmds commandList
	fs.Var(&cmds, "c", "NAME=COMMAND ARGS (repeatable; arguments split on spaces)")
	runs := fs.Int("runs", 3, "rounds")
	_ = fs.Parse(args)
	if len(cmds) == 0 {
		return fmt.Errorf("no -c NAME=COMMAND")
	}
	res := make([][]run, len(cmds))
	for i := 0; i < *runs; i++ {
		var line []string
		for j, c := range cmds {
			r, err := measure(c.argv)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			res[j] = append(res[j], r)
			line = append(line, fmt.Sprintf("%s %s ms (cpu %s, %.0f MB)", c.name, ms(r.wall), ms(r.cpu), float64(r.maxRSS)/1e6))
		}
		fmt.Fprintf(os.Stderr, "commands: round %d: %s\n", i+1, strings.Join(line, ", "))
	}
	for j, c := range cmds {
		var wall, cpu []time.Duration
		var rss []int64
		for _, r := range res[j] {
			wall, cpu, rss = append(wall, r.wall), append(cpu, r.cpu), append(rss, r.maxRSS)
		}
		last := res[j][len(res[j])-1]
		fmt.Printf("name=%s runs=%d ms=%s cpu_ms=%s rss_bytes=%d out_bytes=%d exit=%d\n",
			c.name, *runs, ms(median(wall)), ms(median(cpu)), median(rss), last.out, last.code)
	}
	return nil
}

// measure runs argv with stdout counted and discarded.
func measure(argv []string) (run, error) {
	cmd, cw, stderr, el, err := runCounted(argv, append(os.Environ(), "NO_COLOR=1"))
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			return run{}, err
		}
		code = ee.ExitCode()
		if code != 1 && code != 3 {
			msg := stderr.String()
			if len(msg) > 2000 {
				msg = msg[:2000]
			}
			return run{}, fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, msg)
		}
	}
	r := run{wall: el, out: cw.n, code: code}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.cpu = cpuTime(*ru)
		r.maxRSS = ru.Maxrss * 1024 // KiB on Linux
	}
	return r, nil
}
