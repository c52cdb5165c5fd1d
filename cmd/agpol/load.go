package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/config"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// loadFlags are the input flags every reading command shares.
type loadFlags struct {
	files         []string
	recursive     bool
	live          bool
	allNamespaces bool
	snapshotOut   string
	// wholeCluster makes live loading list every namespace even without -A: commands
	// that compute decisions need the whole topology, not one namespace of it.
	wholeCluster bool
	// allowPartial accepts a live read that could not read some kinds (lint, get).
	allowPartial bool
	// skipUndecodable, when set, receives each object that cannot be typed, and the
	// object is left out of the snapshot instead of failing the load (lint reports it).
	skipUndecodable func(o cluster.RawObject, err error)
	// inspect, when set, sees each object read from a file as read (lint validates it
	// there, cluster.FileOptions.Inspect).
	inspect func(u *unstructured.Unstructured) any
	// shared, when set, reads the files this load has in common with another load once
	// (diff's two inputs, cluster.SharedFiles).
	shared *cluster.SharedFiles
	// admit, when not nil, names the kinds whose objects read from files are admitted
	// (cluster.LoadOptions.Admit): a command sets it when it neither prints nor decides
	// the other kinds.
	admit cluster.AdmitKinds
	// needs, when set, defers admission until the objects the answer reads are known
	// (cluster.LoadOptions.Needs): a command that reads part of the input (describe)
	// admits only that part.
	needs func(*snapshot.Snapshot) func(snapshot.Ref) bool
	// reportsDropped is set by a command that reports each field the API server would
	// drop (lint: AGP102); other commands print one warning that they were left out.
	reportsDropped bool
	// readNamespace is set by load to the namespace a live read was limited to ("" when
	// it read every namespace, or read no cluster).
	readNamespace string
	// namespace is the namespace of objects read from files without one, resolved by the
	// command's Complete (-n, else "default"); liveNamespace, when set, limits a live read
	// to that namespace instead of the kubeconfig's (get NS/NAME).
	namespace, liveNamespace string
	// config is the configuration a command read itself (lint's --config); without it,
	// load reads .agpol.yaml from the current directory when there is one.
	config *config.File
}

// addFlags adds the input flags and -A, for the commands that list one namespace
// unless -A is given (get, describe).
func (l *loadFlags) addFlags(cmd *cobra.Command) {
	l.addInputFlags(cmd)
	cmd.Flags().BoolVarP(&l.allNamespaces, "all-namespaces", "A", false, "list across all namespaces (live)")
}

// addInputFlags adds the input flags without -A, for the commands that read every
// namespace anyway (wholeCluster): -A would do nothing there.
func (l *loadFlags) addInputFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringSliceVarP(&l.files, "filename", "f", nil, "file, directory or - (stdin) to read manifests from; repeatable. Without -f agpol reads the live cluster")
	f.BoolVarP(&l.recursive, "recursive", "R", false, "read directories given with -f recursively")
	f.BoolVar(&l.live, "live", false, "with -f: lay the files over the live cluster state (what-if apply)")
	f.StringVar(&l.snapshotOut, "snapshot-out", "", "write the loaded objects as YAML to this file, to replay them offline with -f")
}

// load builds the snapshot from files, the live cluster, or both (cluster.Load), prints
// on stderr what loading noticed, and returns the snapshot's model: what later stages
// derive from it (the graph, the AuthPolicy results) is built there once.
func (a *app) load(ctx context.Context, l *loadFlags) (*model.Model, error) {
	if err := l.validate(); err != nil {
		return nil, err
	}
	ns := l.namespace
	if ns == "" { // shell completion reads without Complete
		ns = a.defaultNamespace()
	}
	planes, err := a.classDataPlanes(l.config)
	if err != nil {
		return nil, err
	}
	opts := cluster.LoadOptions{
		Files: l.files, Recursive: l.recursive, Stdin: a.streams.In, Live: l.live,
		Getter: a.config, AllNamespaces: l.allNamespaces || l.wholeCluster,
		Namespace: l.liveNamespace, DefaultNamespace: ns, SkipUndecodable: l.skipUndecodable,
		ClassDataPlanes: planes, SnapshotOut: l.snapshotOut, Stage: a.progress.Stage, Inspect: l.inspect,
		Shared: l.shared, Admit: l.admit, Needs: l.needs, Read: installedGC.inputRead,
	}
	if len(l.files) == 0 || l.live {
		if opts.Deadline, err = a.liveDeadline(); err != nil {
			return nil, err
		}
	}
	res, err := cluster.Load(ctx, opts)
	if err != nil {
		if len(l.files) == 0 && !a.clusterConfigured() {
			return nil, fmt.Errorf("%w\nNo kubeconfig names a cluster: to read manifests instead, give them with -f FILE|DIR (lint also takes directories as arguments: %s lint DIR)", err, a.name)
		}
		return nil, err
	}
	l.readNamespace = res.LiveNamespace
	render.LoadNotes(a.streams.ErrOut, res.Snapshot, l.reportsDropped)
	return model.New(res.Snapshot), nil
}

// validate checks the input flags: --live needs -f.
func (l *loadFlags) validate() error {
	if l.live && len(l.files) == 0 {
		return usagef("--live lays files over the cluster: give the files with -f")
	}
	return nil
}

// classDataPlanes is the GatewayClass → data plane mapping: the config file's
// dataPlanes, then --data-plane, which wins.
func (a *app) classDataPlanes(cfg *config.File) (map[string]string, error) {
	if cfg == nil {
		var err error
		if cfg, err = loadConfig(config.DefaultFile, false); err != nil {
			return nil, err
		}
	}
	out := map[string]string{}
	if cfg != nil {
		maps.Copy(out, cfg.DataPlanes)
	}
	for class, plane := range a.dataPlanes {
		if _, err := topology.ParseDataPlane(plane); err != nil {
			return nil, usagef("--data-plane %s=%s: %v", class, plane, err)
		}
		out[class] = plane
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// sourceName names what load reads, for messages: the files given, the cluster, or both.
func (l *loadFlags) sourceName() string {
	files := strings.Join(l.files, ", ")
	switch {
	case len(l.files) == 0:
		return "the cluster"
	case l.live:
		return files + " and the cluster"
	}
	return files
}

// addAllowPartial adds --allow-partial, for the commands that refuse a partial read.
func (l *loadFlags) addAllowPartial(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&l.allowPartial, "allow-partial", false, "accept a live read that could not list some kinds (RBAC): answer from what could be read instead of exiting 2")
}

// refusePartial is the error (exit 2) of a command that needs the kinds for which
// needs is true (nil: every kind) when the live read could not read some of them,
// unless --allow-partial was given. It names each kind and the refusal.
func (l *loadFlags) refusePartial(s *snapshot.Snapshot, needs func(resource string) bool) error {
	if !s.Partial || l.allowPartial {
		return nil
	}
	var msgs []string
	seen := map[string]bool{}
	for _, w := range s.Warnings {
		if w.Kind == "" {
			continue
		}
		res, _, _ := strings.Cut(w.Kind, ".")
		if needs != nil && !needs(res) {
			continue
		}
		if !seen[w.Message] {
			seen[w.Message] = true
			msgs = append(msgs, w.Message)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &cluster.InputError{Err: fmt.Errorf("incomplete read of the cluster: %s (--allow-partial answers from what could be read)", strings.Join(msgs, "; "))}
}

// liveDeadline is the deadline of a live read: --request-timeout when given (a
// duration such as 30s, or a number of seconds, as kubectl takes it), else
// defaultLiveDeadline.
func (a *app) liveDeadline() (time.Duration, error) {
	v := "0"
	if a.config.Timeout != nil && *a.config.Timeout != "" {
		v = *a.config.Timeout
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		v += "s"
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, usagef("invalid --request-timeout %q: use a duration such as 30s, or 0 for the default (%s)", *a.config.Timeout, defaultLiveDeadline)
	}
	if d == 0 {
		d = defaultLiveDeadline
	}
	return d, nil
}

// defaultLiveDeadline bounds a live read without --request-timeout (tests shorten it).
var defaultLiveDeadline = cluster.DefaultDeadline

// clusterConfigured reports whether anything names a cluster to read: a kubeconfig
// with a context, --server, or the environment of a pod (in-cluster configuration).
func (a *app) clusterConfigured() bool {
	if a.config.APIServer != nil && *a.config.APIServer != "" {
		return true
	}
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return true
	}
	raw, err := a.config.ToRawKubeConfigLoader().RawConfig()
	return err != nil || len(raw.Contexts) > 0
}
