// Command harness measures agpol against its floors for bench/run.sh. Each subcommand
// prints one line of key=value figures on stdout (and progress on stderr):
//
//	harness offline -dir DIR [-runs N]      decode floor vs load+admission+all chains, interleaved
//	harness rss -mode floor|pipeline -dir DIR   peak RSS of one such run in this process
//	harness decide -dir DIR -requests FILE  decisions per second on one core (simulate)
//	harness live -dir DIR -agpol BIN -kubectl BIN   see live.go
//
// Timings of the two sides of a ratio are interleaved in one process, so a noisy shared
// machine slows both alike; the figure reported is the median of the runs.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"syscall"
	"time"

	"github.com/agpol/agpol/bench/stages"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: harness offline|rss|decide|live [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "offline":
		err = offline(os.Args[2:])
	case "rss":
		err = rss(os.Args[2:])
	case "decide":
		err = decide(os.Args[2:])
	case "live":
		err = live(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "harness: %v\n", err)
		os.Exit(1)
	}
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/1e6) }

func profile(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// offline times the decode floor and the pipeline alternately, with a GC before each run
// so neither pays for the other's garbage.
func offline(args []string) error {
	fs := flag.NewFlagSet("offline", flag.ExitOnError)
	dir := fs.String("dir", "", "manifest directory")
	runs := fs.Int("runs", 5, "runs of each side")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the pipeline runs")
	_ = fs.Parse(args)
	files, err := stages.ManifestFiles(*dir)
	if err != nil {
		return err
	}
	size, err := stages.InputBytes(files)
	if err != nil {
		return err
	}
	var floor, pipe, load, graph, engine, chains []time.Duration
	objects, paths := 0, 0
	for i := 0; i < *runs; i++ {
		runtime.GC()
		t0 := time.Now()
		objs, err := stages.DecodeFloor(files)
		if err != nil {
			return err
		}
		floor = append(floor, time.Since(t0))
		objects = len(objs)
		objs = nil
		runtime.GC()

		stop := profile(*cpuprofile)
		t0 = time.Now()
		s, err := stages.Load(files)
		if err != nil {
			stop()
			return err
		}
		t1 := time.Now()
		res, err := stages.PipelineFrom(s)
		stop()
		if err != nil {
			return err
		}
		total := time.Since(t0)
		pipe = append(pipe, total)
		load = append(load, t1.Sub(t0))
		graph = append(graph, res.GraphTime)
		engine = append(engine, res.EngineTime)
		chains = append(chains, res.ChainsTime)
		paths = res.Paths
		*cpuprofile = "" // profile the first run only
		fmt.Fprintf(os.Stderr, "offline: run %d: floor %s ms, pipeline %s ms\n", i+1, ms(floor[i]), ms(total))
	}
	f, p := median(floor), median(pipe)
	fmt.Printf("input_bytes=%d objects=%d paths=%d runs=%d floor_ms=%s pipeline_ms=%s load_ms=%s graph_ms=%s admission_ms=%s chains_ms=%s ratio=%.3f\n",
		size, objects, paths, *runs, ms(f), ms(p), ms(median(load)), ms(median(graph)), ms(median(engine)), ms(median(chains)), float64(p)/float64(f))
	return nil
}

// rss runs one side once and reports the process's peak resident set.
func rss(args []string) error {
	fs := flag.NewFlagSet("rss", flag.ExitOnError)
	dir := fs.String("dir", "", "manifest directory")
	mode := fs.String("mode", "pipeline", "floor or pipeline")
	_ = fs.Parse(args)
	files, err := stages.ManifestFiles(*dir)
	if err != nil {
		return err
	}
	size, err := stages.InputBytes(files)
	if err != nil {
		return err
	}
	var before syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	var keep any
	switch *mode {
	case "floor":
		keep, err = stages.DecodeFloor(files)
	case "pipeline":
		keep, err = stages.Pipeline(files)
	case "none":
	default:
		return fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		return err
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	runtime.KeepAlive(keep)
	// Linux reports ru_maxrss in KiB.
	fmt.Printf("mode=%s input_bytes=%d maxrss_bytes=%d baseline_rss_bytes=%d heap_inuse_bytes=%d total_alloc_bytes=%d gogc=%s\n",
		*mode, size, ru.Maxrss*1024, before.Maxrss*1024, ms.HeapInuse, ms.TotalAlloc, gogc())
	return nil
}

func gogc() string {
	if v := os.Getenv("GOGC"); v != "" {
		return v
	}
	return fmt.Sprint(debug.SetGCPercent(-1))
}

// decide measures simulate's throughput on one core: the requests are decided over and
// over (chains compiled once, on first use) for at least -seconds.
func decide(args []string) error {
	fs := flag.NewFlagSet("decide", flag.ExitOnError)
	dir := fs.String("dir", "", "manifest directory")
	reqFile := fs.String("requests", "", "request file")
	seconds := fs.Float64("seconds", 3, "measure for at least this long")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile")
	_ = fs.Parse(args)
	runtime.GOMAXPROCS(1)
	files, err := stages.ManifestFiles(*dir)
	if err != nil {
		return err
	}
	s, err := stages.Load(files)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(*reqFile)
	if err != nil {
		return err
	}
	rf, err := explain.ParseRequestFile(*reqFile, data, "default")
	if err != nil {
		return err
	}
	sim := explain.New(s, []effective.Semantics{effective.Reference()}, rf.TrustDomain)
	// Warm-up: compile every chain the requests use.
	res, err := sim.Simulate(rf.Requests)
	if err != nil {
		return err
	}
	verdicts := map[string]int{}
	for _, r := range res {
		verdicts[r.Verdict]++
	}
	stop := profile(*cpuprofile)
	n, passes := 0, 0
	start := time.Now()
	for time.Since(start).Seconds() < *seconds {
		out, err := sim.Simulate(rf.Requests)
		if err != nil {
			stop()
			return err
		}
		n += len(out)
		passes++
	}
	el := time.Since(start)
	stop()
	fmt.Printf("requests=%d decisions=%d passes=%d seconds=%.2f decisions_per_sec_core=%.0f ns_per_decision=%.0f allow=%d deny=%d indeterminate=%d\n",
		len(rf.Requests), n, passes, el.Seconds(), float64(n)/el.Seconds(), float64(el.Nanoseconds())/float64(n),
		verdicts[explain.Allow], verdicts[explain.Deny], verdicts[explain.Indeterminate])
	return nil
}
