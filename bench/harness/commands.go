package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// commandList is what the repeatable -c and -optional NAME=ARGV flags fill, in the
// order given: ARGV is split on spaces.
type commandList []namedCommand

type namedCommand struct {
	name     string
	argv     []string
	optional bool   // a failure drops the command instead of ending the measurement
	skipped  string // why an optional command was dropped
}

// commandFlag is one of the two flags that append to a commandList.
type commandFlag struct {
	list     *commandList
	optional bool
}

func (c commandFlag) String() string {
	if c.list == nil {
		return "0"
	}
	return fmt.Sprint(len(*c.list))
}

func (c commandFlag) Set(v string) error {
	name, argv, ok := strings.Cut(v, "=")
	if !ok || name == "" || strings.TrimSpace(argv) == "" {
		return fmt.Errorf("want NAME=COMMAND ARGS, got %q", v)
	}
	*c.list = append(*c.list, namedCommand{name: name, argv: strings.Fields(argv), optional: c.optional})
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
// the process, from its rusage) and peak RSS (ru_maxrss), and each round's wall and CPU
// time in round order (to pair two commands round by round, or see the rounds' spread),
// one line per command:
//
//	name=NAME runs=N ms=... cpu_ms=... rss_bytes=... out_bytes=... exit=... rounds_ms=W1,W2 rounds_cpu_ms=C1,C2
//
// Exit codes 0, 1 and 3 (findings, denials, indeterminate answers) count as runs;
// any other ends the measurement, except for a command given with -optional: that one
// is dropped from later rounds and its line says why, to the end of the line:
//
//	name=NAME runs=0 skipped=1 reason=...
func commands(args []string) error {
	fs := flag.NewFlagSet("commands", flag.ExitOnError)
	var cmds commandList
	fs.Var(commandFlag{&cmds, false}, "c", "NAME=COMMAND ARGS (repeatable; arguments split on spaces)")
	fs.Var(commandFlag{&cmds, true}, "optional", "NAME=COMMAND ARGS, as -c, but a failure drops the command instead of ending the measurement")
	runs := fs.Int("runs", 3, "rounds")
	_ = fs.Parse(args)
	if len(cmds) == 0 {
		return fmt.Errorf("no -c NAME=COMMAND")
	}
	return runRounds(cmds, *runs, os.Stdout, os.Stderr)
}

// runRounds measures cmds in runs rounds and writes one line per command to w, the
// rounds as they end to progress.
func runRounds(cmds commandList, runs int, w, progress io.Writer) error {
	res := make([][]run, len(cmds))
	for i := 0; i < runs; i++ {
		var line []string
		for j := range cmds {
			c := &cmds[j]
			if c.skipped != "" {
				continue
			}
			r, err := measure(c.argv)
			if err != nil {
				if !c.optional {
					return fmt.Errorf("%s: %w", c.name, err)
				}
				c.skipped = strings.Join(strings.Fields(fmt.Sprintf("round %d: %v", i+1, err)), " ")
				line = append(line, fmt.Sprintf("%s failed (dropped)", c.name))
				continue
			}
			res[j] = append(res[j], r)
			line = append(line, fmt.Sprintf("%s %s ms (cpu %s, %.0f MB)", c.name, ms(r.wall), ms(r.cpu), float64(r.maxRSS)/1e6))
		}
		fmt.Fprintf(progress, "commands: round %d: %s\n", i+1, strings.Join(line, ", "))
	}
	for j, c := range cmds {
		if c.skipped != "" {
			reason := c.skipped
			if len(reason) > 300 {
				reason = reason[:300] + "..."
			}
			fmt.Fprintf(w, "name=%s runs=0 skipped=1 reason=%s\n", c.name, reason)
			continue
		}
		var wall, cpu []time.Duration
		var rss []int64
		var roundsWall, roundsCPU []string
		for _, r := range res[j] {
			wall, cpu, rss = append(wall, r.wall), append(cpu, r.cpu), append(rss, r.maxRSS)
			roundsWall, roundsCPU = append(roundsWall, ms(r.wall)), append(roundsCPU, ms(r.cpu))
		}
		last := res[j][len(res[j])-1]
		fmt.Fprintf(w, "name=%s runs=%d ms=%s cpu_ms=%s rss_bytes=%d out_bytes=%d exit=%d rounds_ms=%s rounds_cpu_ms=%s\n",
			c.name, runs, ms(median(wall)), ms(median(cpu)), median(rss), last.out, last.code,
			strings.Join(roundsWall, ","), strings.Join(roundsCPU, ","))
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
