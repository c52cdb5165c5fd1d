// Command harness measures agpol against its floors for bench/run.sh. Each subcommand
// prints one line of key=value figures on stdout (and progress on stderr):
//
//	harness offline -dir DIR [-runs N]      decode floor vs load+admission+all chains, interleaved
//	harness once -mode floor|pipeline -dir DIR  one run in this process: time and peak RSS
//	harness retained -dir DIR               what stays live after the pipeline, by part
//	harness decide -dir DIR -requests FILE  decisions per second on one core (simulate)
//	harness live -dir DIR -agpol BIN -kubectl BIN   see live.go
//	harness commands -runs N -c NAME=ARGV ...      whole processes in rounds: time, CPU, peak RSS
//	harness jsonschema -out DIR             the embedded CRDs' schemas, for kubeconform
//
// Runs of the two sides of a ratio are interleaved, so a noisy shared machine slows both
// alike; the figure reported is the median of the runs.
package main

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agpol/agpol/bench/stages"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/lint"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: harness offline|once|retained|scaling|decide|live|commands|jsonschema [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "offline":
		err = offline(os.Args[2:])
	case "once":
		err = once(os.Args[2:])
	case "retained":
		err = retained(os.Args[2:])
	case "scaling":
		err = scaling(os.Args[2:])
	case "decide":
		err = decide(os.Args[2:])
	case "live":
		err = live(os.Args[2:])
	case "commands":
		err = commands(os.Args[2:])
	case "jsonschema":
		err = jsonSchemas(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "harness: %v\n", err)
		os.Exit(1)
	}
}

// median is the middle of v (the upper one of an even count); v is left unsorted.
func median[T cmp.Ordered](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
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

// offline times the decode floor and the pipeline alternately, each run in a fresh
// process (as agpol runs: nothing compiled or cached by an earlier run), and reports the
// median of each side, its stages and the peak RSS of each side.
func offline(args []string) error {
	fs := flag.NewFlagSet("offline", flag.ExitOnError)
	dir := fs.String("dir", "", "manifest directory")
	runs := fs.Int("runs", 5, "runs of each side")
	_ = fs.Parse(args)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var floor, pipe []map[string]float64
	for i := 0; i < *runs; i++ {
		f, err := onceProc(self, "floor", *dir)
		if err != nil {
			return err
		}
		p, err := onceProc(self, "pipeline", *dir)
		if err != nil {
			return err
		}
		floor, pipe = append(floor, f), append(pipe, p)
		fmt.Fprintf(os.Stderr, "offline: run %d: floor %.1f ms (cpu %.1f), pipeline %.1f ms (cpu %.1f)\n", i+1, f["ms"], f["cpu_ms"], p["ms"], p["cpu_ms"])
	}
	med := func(rs []map[string]float64, k string) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = r[k]
		}
		return median(v)
	}
	f, p := med(floor, "ms"), med(pipe, "ms")
	fc, pc := med(floor, "cpu_ms"), med(pipe, "cpu_ms")
	fmt.Printf("input_bytes=%.0f objects=%.0f paths=%.0f runs=%d floor_ms=%.1f pipeline_ms=%.1f load_ms=%.1f graph_ms=%.1f admission_ms=%.1f chains_ms=%.1f ratio=%.3f"+
		" floor_cpu_ms=%.1f pipeline_cpu_ms=%.1f cpu_ratio=%.3f"+
		" floor_rss_bytes=%.0f pipeline_rss_bytes=%.0f idle_rss_bytes=%.0f pipeline_file_rss_bytes=%.0f\n",
		pipe[0]["input_bytes"], floor[0]["objects"], pipe[0]["paths"], *runs, f, p, med(pipe, "load_ms"), med(pipe, "graph_ms"), med(pipe, "admission_ms"), med(pipe, "chains_ms"), p/f, fc, pc, pc/fc,
		med(floor, "maxrss_bytes"), med(pipe, "maxrss_bytes"), med(pipe, "idle_rss_bytes"), med(pipe, "file_rss_bytes"))
	return nil
}

// scaling times the pipeline on two sizes alternately, each run in a fresh process, and
// compares the growth of its time with the growth of the number of objects.
func scaling(args []string) error {
	fs := flag.NewFlagSet("scaling", flag.ExitOnError)
	small := fs.String("small", "", "manifest directory of the smaller topology")
	large := fs.String("large", "", "manifest directory of the larger topology")
	runs := fs.Int("runs", 5, "runs of each size")
	_ = fs.Parse(args)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var ts, tl, cs, cl []float64
	var objS, objL float64
	for i := 0; i < *runs; i++ {
		a, err := onceProc(self, "pipeline", *small)
		if err != nil {
			return err
		}
		b, err := onceProc(self, "pipeline", *large)
		if err != nil {
			return err
		}
		ts, tl, cs, cl = append(ts, a["ms"]), append(tl, b["ms"]), append(cs, a["cpu_ms"]), append(cl, b["cpu_ms"])
		objS, objL = a["objects"], b["objects"]
		fmt.Fprintf(os.Stderr, "scaling: run %d: %.0f objects %.1f ms (cpu %.1f), %.0f objects %.1f ms (cpu %.1f)\n", i+1, objS, a["ms"], a["cpu_ms"], objL, b["ms"], b["cpu_ms"])
	}
	ms1, ms2, c1, c2 := median(ts), median(tl), median(cs), median(cl)
	fmt.Printf("small_objects=%.0f large_objects=%.0f object_ratio=%.3f small_ms=%.1f large_ms=%.1f time_ratio=%.3f small_cpu_ms=%.1f large_cpu_ms=%.1f cpu_time_ratio=%.3f\n",
		objS, objL, objL/objS, ms1, ms2, ms2/ms1, c1, c2, c2/c1)
	return nil
}

// onceProc runs "harness once" in a new process and parses its key=value line.
func onceProc(self, mode, dir string) (map[string]float64, error) {
	cmd := exec.Command(self, "once", "-mode", mode, "-dir", dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("harness once -mode %s: %w", mode, err)
	}
	m := map[string]float64{}
	for _, kv := range strings.Fields(string(out)) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			m[k] = f
		}
	}
	return m, nil
}

// once runs one side once in this process and reports its time, stages and peak RSS
// (and the RSS before it started: what the process costs doing nothing).
func once(args []string) error {
	fs := flag.NewFlagSet("once", flag.ExitOnError)
	dir := fs.String("dir", "", "manifest directory")
	mode := fs.String("mode", "pipeline", "floor, floor-stream, pipeline, lint or none")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile")
	memprofile := fs.String("memprofile", "", "write a heap profile of what is live at the end")
	memrate := fs.Int("memprofilerate", 0, "bytes per heap profile sample (runtime.MemProfileRate; 0 keeps Go's 512 KiB, 1 records every allocation)")
	_ = fs.Parse(args)
	if *memrate > 0 {
		runtime.MemProfileRate = *memrate
	}
	files, size, err := manifests(*dir)
	if err != nil {
		return err
	}
	var idle syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &idle)
	stop := profile(*cpuprofile)
	var keep any
	extra := ""
	t0 := time.Now()
	switch *mode {
	case "floor":
		var objs []*unstructured.Unstructured
		objs, err = stages.DecodeFloor(files)
		keep = objs
		extra = fmt.Sprintf(" objects=%d", len(objs))
	case "floor-stream":
		var n int
		n, err = stages.DecodeStream(files)
		extra = fmt.Sprintf(" objects=%d", n)
	case "pipeline":
		var s *snapshot.Snapshot
		s, err = stages.Load(files)
		if err != nil {
			break
		}
		t1 := time.Now()
		var r *stages.Result
		r, err = stages.PipelineFrom(s)
		keep = r
		if err == nil {
			extra = fmt.Sprintf(" objects=%d paths=%d load_ms=%s graph_ms=%s admission_ms=%s chains_ms=%s",
				s.Len(), r.Paths, ms(t1.Sub(t0)), ms(r.GraphTime), ms(r.EngineTime), ms(r.ChainsTime))
		}
	case "lint":
		var s *snapshot.Snapshot
		s, err = stages.Load(files)
		if err != nil {
			break
		}
		rep := lint.Run(lint.NewContext(s), lint.Options{})
		keep = rep
		extra = fmt.Sprintf(" findings=%d", len(rep.Findings))
	case "none":
	default:
		return fmt.Errorf("unknown mode %q", *mode)
	}
	el := time.Since(t0)
	stop()
	if err != nil {
		return err
	}
	if *memprofile != "" {
		if err := writeHeapProfile(*memprofile); err != nil {
			return err
		}
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	runtime.KeepAlive(keep)
	// Linux reports ru_maxrss in KiB. cpu_ms is user+system time of the work (GC
	// included, on every core), less sensitive than wall time to a busy machine.
	fmt.Printf("mode=%s input_bytes=%d ms=%s cpu_ms=%s maxrss_bytes=%d idle_rss_bytes=%d file_rss_bytes=%d gogc=%s%s\n",
		*mode, size, ms(el), ms(cpuTime(ru)-cpuTime(idle)), ru.Maxrss*1024, idle.Maxrss*1024, fileRSS(), gogc(), extra)
	return nil
}

// manifests lists the manifest files of dir (as agpol -f DIR reads them) and their total size.
func manifests(dir string) ([]string, int64, error) {
	files, err := stages.ManifestFiles(dir)
	if err != nil {
		return nil, 0, err
	}
	size, err := stages.InputBytes(files)
	return files, size, err
}

// writeHeapProfile writes what is live now (after a collection) and every allocation
// since the start, for go tool pprof -sample_index=inuse_space|alloc_space.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	runtime.GC()
	return pprof.WriteHeapProfile(f)
}

// fileRSS is the part of the resident set that maps files (the program's own code and
// read-only data, shared and reclaimable), from /proc/self/status; 0 where unknown.
// The peak RSS less this is the memory the process allocated.
func fileRSS() int64 { return statusBytes("RssFile") }

// statusBytes is a field of /proc/self/status given in kB (RssFile, RssAnon), in bytes;
// 0 where unknown.
func statusBytes(field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

func cpuTime(ru syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
	sim := explain.New(model.New(s), []effective.Semantics{effective.Reference()}, rf.TrustDomain)
	// Warm-up: compile every chain the requests use.
	res, err := sim.Explain(explain.Full, rf.Requests...)
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
		out, err := sim.Explain(explain.Full, rf.Requests...)
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

func newFlagSet(name string) *flag.FlagSet { return flag.NewFlagSet(name, flag.ExitOnError) }
