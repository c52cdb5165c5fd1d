package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/agpol/agpol/bench/stages"
	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/snapshot"
)

// FetchKinds are the kinds of the live fetch floor (issue 8).
const FetchKinds = "gateways,httproutes,xbackends,xaccesspolicies,authpolicies"

// live starts a real kube-apiserver and etcd (envtest, binaries from hack/testenv),
// installs the CRDs, creates every object of -dir, and times, alternately and each in a
// new process: the fetch floor (kubectl get FetchKinds -A -o json), agpol describe
// gateway and agpol lint against it.
func live(args []string) error {
	fs := newFlagSet("live")
	dir := fs.String("dir", "", "manifest directory")
	agpol := fs.String("agpol", "", "agpol binary")
	kubectl := fs.String("kubectl", "kubectl", "kubectl binary")
	assets := fs.String("assets", "", "directory with kube-apiserver and etcd (default <repo>/bin)")
	repo := fs.String("repo", ".", "agpol repository (for config/crd and the gateway-api module)")
	gateway := fs.String("gateway", "infra-000/gw-000", "gateway to describe")
	runs := fs.Int("runs", 5, "timed runs of each command")
	rssBin := fs.String("rss", "", "bench/rss binary: run each command through it for its own peak RSS (a child of this large process reports at least this process's peak)")
	_ = fs.Parse(args)
	if *agpol == "" {
		return errors.New("-agpol BIN is required")
	}
	root, err := filepath.Abs(*repo)
	if err != nil {
		return err
	}
	if *assets == "" {
		*assets = filepath.Join(root, "bin")
	}
	files, err := stages.ManifestFiles(*dir)
	if err != nil {
		return err
	}
	gwCRDs, err := goListDir(root, "sigs.k8s.io/gateway-api")
	if err != nil {
		return err
	}
	logf.SetLogger(logr.Discard())
	env := &envtest.Environment{
		BinaryAssetsDirectory: *assets,
		CRDInstallOptions: envtest.CRDInstallOptions{
			Paths:              []string{filepath.Join(gwCRDs, "config", "crd", "standard"), filepath.Join(root, "config", "crd")},
			ErrorIfPathMissing: true,
		},
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	// The default service range (/24) holds fewer Services than the larger topologies have.
	env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.96.0.0/16")
	start := time.Now()
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		return fmt.Errorf("starting kube-apiserver and etcd from %s (build them with hack/testenv/ensure.sh): %w", *assets, err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "live: stopping the API server: %v\n", err)
		}
	}()
	fmt.Fprintf(os.Stderr, "live: API server up in %s\n", time.Since(start).Round(time.Millisecond))
	tmp, err := os.MkdirTemp("", "agpol-bench-live-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	kubeconfig := filepath.Join(tmp, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		return err
	}
	start = time.Now()
	n, err := seed(cfg, files)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "live: created %d objects in %s\n", n, time.Since(start).Round(time.Millisecond))

	cmdEnv := append(os.Environ(), "HOME="+tmp, "KUBECONFIG="+kubeconfig, "NO_COLOR=1")
	var pre []string
	if *rssBin != "" {
		pre = []string{*rssBin}
	}
	floor := append(pre[:len(pre):len(pre)], *kubectl, "get", FetchKinds, "-A", "-o", "json")
	describe := append(pre[:len(pre):len(pre)], *agpol, "describe", "gateway", *gateway)
	lint := append(pre[:len(pre):len(pre)], *agpol, "lint", "--fail-on", "none")
	// One untimed run of each: kubectl fills its discovery cache, as in daily use.
	var fetched int64
	for _, c := range [][]string{floor, describe, lint} {
		out, err := timed(c, cmdEnv)
		if err != nil {
			return err
		}
		if c[len(pre)] == *kubectl {
			fetched = out.bytes
		}
	}
	var tf, td, tl []time.Duration
	var rf, rd, rl []int64
	for i := 0; i < *runs; i++ {
		for _, x := range []struct {
			c   []string
			acc *[]time.Duration
			rss *[]int64
		}{{floor, &tf, &rf}, {describe, &td, &rd}, {lint, &tl, &rl}} {
			out, err := timed(x.c, cmdEnv)
			if err != nil {
				return err
			}
			*x.acc = append(*x.acc, out.wall)
			*x.rss = append(*x.rss, out.maxRSS)
		}
		fmt.Fprintf(os.Stderr, "live: run %d: kubectl %s ms, describe %s ms, lint %s ms\n", i+1, ms(tf[i]), ms(td[i]), ms(tl[i]))
	}
	f, d, l := median(tf), median(td), median(tl)
	fmt.Printf("objects=%d fetched_json_bytes=%d runs=%d fetch_ms=%s describe_ms=%s lint_ms=%s describe_ratio=%.3f lint_ratio=%.3f"+
		" fetch_rss_bytes=%d describe_rss_bytes=%d lint_rss_bytes=%d\n",
		n, fetched, *runs, ms(f), ms(d), ms(l), float64(d)/float64(f), float64(l)/float64(f), median(rf), median(rd), median(rl))
	return nil
}

type result struct {
	wall   time.Duration
	bytes  int64
	maxRSS int64 // peak resident set of the process (ru_maxrss), bytes
}

// timed runs a command with its output discarded (counted) and returns its wall time
// and peak RSS.
func timed(argv []string, env []string) (result, error) {
	cmd, cw, stderr, el, err := runCounted(argv, env)
	if err != nil {
		return result{}, fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, stderr.String())
	}
	r := result{wall: el, bytes: cw.n}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = ru.Maxrss * 1024 // KiB on Linux
	}
	// Through bench/rss: the command's own peak, from the line rss writes last.
	if i := strings.LastIndex(stderr.String(), "rss: maxrss_bytes="); i >= 0 {
		if _, err := fmt.Sscanf(stderr.String()[i:], "rss: maxrss_bytes=%d", &r.maxRSS); err != nil {
			return result{}, fmt.Errorf("%s: reading rss's report: %w", strings.Join(argv, " "), err)
		}
	}
	return r, nil
}

// runCounted runs argv with env, its stdout counted and discarded and its stderr kept,
// and returns the finished command and its wall time.
func runCounted(argv, env []string) (*exec.Cmd, *countWriter, *strings.Builder, time.Duration, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cw := &countWriter{}
	stderr := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = cw, stderr
	t0 := time.Now()
	err := cmd.Run()
	return cmd, cw, stderr, time.Since(t0), err
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)

func goListDir(root, module string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating %s (go list -m): %w", module, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// seed creates the objects agpol reads (namespaces first, then in file order) with
// several workers, and returns how many it created.
func seed(cfg *rest.Config, files []string) (int, error) {
	objs, _, err := cluster.ReadFiles(cluster.FileOptions{Filenames: files})
	if err != nil {
		return 0, err
	}
	cluster.DefaultNamespace(objs, "default")
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 2000, 4000
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return 0, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	var first, rest []cluster.RawObject
	for _, o := range objs {
		gvk := o.Object().GroupVersionKind()
		if _, ok := snapshot.LookupKind(gvk.Group, gvk.Kind); !ok {
			continue
		}
		if gvk.Kind == "Namespace" || gvk.Kind == "GatewayClass" {
			first = append(first, o)
		} else {
			rest = append(rest, o)
		}
	}
	n := 0
	for _, batch := range [][]cluster.RawObject{first, rest} {
		if err := createAll(dyn, mapper, batch, 16); err != nil {
			return n, err
		}
		n += len(batch)
	}
	return n, nil
}

func createAll(dyn dynamic.Interface, mapper meta.RESTMapper, objs []cluster.RawObject, workers int) error {
	ctx := context.Background()
	// Resolve mappings once per kind, before the workers start.
	mappings := map[string]*meta.RESTMapping{}
	for _, o := range objs {
		gvk := o.Object().GroupVersionKind()
		if _, ok := mappings[gvk.String()]; ok {
			continue
		}
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("mapping %s: %w", gvk, err)
		}
		mappings[gvk.String()] = m
	}
	work := make(chan cluster.RawObject)
	var mu sync.Mutex
	var errs []string
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range work {
				m := mappings[o.Object().GroupVersionKind().String()]
				var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
				if m.Scope.Name() == meta.RESTScopeNameNamespace {
					ri = dyn.Resource(m.Resource).Namespace(o.Object().GetNamespace())
				}
				in := o.Object().DeepCopy()
				delete(in.Object, "status")
				if _, err := ri.Create(ctx, in, metav1.CreateOptions{}); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Sprintf("%s: %s %s/%s: %v", o.Source, in.GetKind(), in.GetNamespace(), in.GetName(), err))
					mu.Unlock()
				}
			}
		}()
	}
	for _, o := range objs {
		work <- o
	}
	close(work)
	wg.Wait()
	if len(errs) > 0 {
		sort.Strings(errs)
		if len(errs) > 5 {
			errs = append(errs[:5], fmt.Sprintf("... and %d more", len(errs)-5))
		}
		return fmt.Errorf("creating objects (the API server validates them against the CRDs):\n%s", strings.Join(errs, "\n"))
	}
	return nil
}
