package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/agpol/agpol/internal/parallel"
	"github.com/agpol/agpol/internal/snapshot"
)

// LoadOptions says where Load reads objects from and what it does with them.
type LoadOptions struct {
	// Files are the files, directories and "-" to read (-f); Recursive reads
	// directories recursively (-R); Stdin is "-" (os.Stdin when nil).
	Files     []string
	Recursive bool
	Stdin     io.Reader
	// Live lays Files over the live cluster (-f --live). Without Files the cluster is
	// read whatever Live says.
	Live bool
	// Getter supplies the kubeconfig (flags and context) of a live read; Deadline bounds
	// it (0: DefaultDeadline).
	Getter   genericclioptions.RESTClientGetter
	Deadline time.Duration
	// AllNamespaces reads every namespace of the cluster. Otherwise a live read is
	// limited to the kubeconfig's namespace (-n, else the context's), except that files
	// laid over the cluster without an explicit -n are laid over every namespace.
	AllNamespaces bool
	// Namespace, when set, is the namespace a live read is limited to instead of the
	// kubeconfig's, as if given with -n (a NAMESPACE/NAME argument).
	Namespace string
	// DefaultNamespace is the namespace of namespaced objects of Files that have none
	// (-n, else "default"), as kubectl apply gives them.
	DefaultNamespace string
	// SkipUndecodable, when set, receives each object that cannot be typed, and the
	// object is left out of the snapshot instead of failing the load.
	SkipUndecodable func(o RawObject, err error)
	// ClassDataPlanes is the GatewayClass → data plane mapping given by the user.
	ClassDataPlanes map[string]string
	// SnapshotOut, when set, is a file the loaded objects are written to as YAML.
	SnapshotOut string
	// Inspect is FileOptions.Inspect for Files.
	Inspect func(u *unstructured.Unstructured) any
	// Shared is FileOptions.Shared for Files: the files this load has in common with
	// another load are read once (diff's before and after).
	Shared *SharedFiles
	// Admit is FileOptions.Admit for Files: the kinds admitted, nil for every kind.
	// Objects read from the cluster are as stored and never admitted.
	Admit AdmitKinds
	// Needs, when set, defers the admission of the objects of Files of the kinds with a
	// CRD: they are typed as written, then Needs is called with the snapshot and names
	// the objects the command's answer reads (nil: every object), and only those are
	// admitted (on every core) and typed again in place. The others stay as written,
	// counted in Snapshot.Unadmitted (UnadmittedUnread set). It replaces Admit.
	Needs func(*snapshot.Snapshot) func(snapshot.Ref) bool
	// Read is FileOptions.Read for Files.
	Read func(bytes int64)
	// Stage, when set, is called as a long stage starts; it returns the function that
	// ends the stage (progress on a terminal).
	Stage func(name string) (end func())
}

// Loaded is what Load read.
type Loaded struct {
	Snapshot *snapshot.Snapshot
	// LiveNamespace is the namespace a live read was limited to: "" when every
	// namespace was read, or no cluster was.
	LiveNamespace string
}

// Load builds a snapshot from the files, the live cluster, or the files laid over the
// cluster (Overlay), as opts say: it reads the cluster (ReadLive) and the files
// (ReadFiles, with DefaultNamespace), types the objects (Build), records what the live
// read noticed (kinds not installed, warnings, a partial read) and whether the snapshot
// holds the whole cluster (Complete: every namespace read, nothing refused), and writes
// SnapshotOut. The first error stops it: a live read that fails, a malformed file (an
// *InputError naming file and line), a file that cannot be written.
func Load(ctx context.Context, opts LoadOptions) (*Loaded, error) {
	stage := opts.Stage
	if stage == nil {
		stage = func(string) func() { return func() {} }
	}
	var (
		objs      []RawObject
		positions *FilePositions
		live      *LiveResult
		origins   []string
		out       = &Loaded{}
	)
	if len(opts.Files) == 0 || opts.Live {
		if opts.Getter == nil {
			return nil, errors.New("reading the cluster: no kubeconfig flags given")
		}
		ns, explicit, err := opts.Getter.ToRawKubeConfigLoader().Namespace()
		if err != nil {
			return nil, fmt.Errorf("reading kubeconfig: %w", err)
		}
		if opts.Namespace != "" {
			ns, explicit = opts.Namespace, true
		}
		if opts.AllNamespaces || (opts.Live && len(opts.Files) > 0 && !explicit) {
			ns = ""
		}
		out.LiveNamespace = ns
		end := stage("reading the cluster")
		live, err = ReadLive(ctx, LiveOptions{Getter: opts.Getter, Namespace: ns, Deadline: opts.Deadline})
		end()
		if err != nil {
			return nil, err
		}
		objs = live.Objects
		origins = append(origins, "cluster")
	}
	if len(opts.Files) > 0 {
		end := stage("reading manifests")
		ns := opts.DefaultNamespace
		if ns == "" {
			ns = "default"
		}
		admitKinds := opts.Admit
		if opts.Needs != nil {
			admitKinds = deferredAdmission()
		}
		fileObjs, pos, err := ReadFiles(FileOptions{Filenames: opts.Files, Recursive: opts.Recursive, Stdin: opts.Stdin,
			Inspect: opts.Inspect, DefaultNamespace: ns, Shared: opts.Shared, Admit: admitKinds, Read: opts.Read})
		end()
		if err != nil {
			return nil, err
		}
		DefaultNamespace(fileObjs, ns)
		positions = pos
		objs = Overlay(objs, fileObjs)
		origins = append(origins, "files")
	}
	var resolver snapshot.PositionResolver
	if positions != nil {
		resolver = positions
	}
	buildObjs := objs
	if opts.SkipUndecodable != nil {
		buildObjs = keepDecodable(objs, opts.SkipUndecodable)
	}
	s, err := Build(buildObjs, resolver, origins...)
	if err != nil {
		return nil, err
	}
	if len(opts.ClassDataPlanes) > 0 {
		s.ClassDataPlanes = opts.ClassDataPlanes
	}
	if opts.Needs != nil && s.Unadmitted > 0 {
		end := stage("admitting what the answer reads")
		err := admitNeeded(s, buildObjs, resolver, opts.Needs(s))
		end()
		if err != nil {
			return nil, err
		}
		s.UnadmittedUnread = s.Unadmitted > 0
	}
	if live != nil {
		s.NotInstalled = live.NotInstalled
		s.Warnings = append(s.Warnings, live.Warnings...)
		s.Partial = live.Partial
		s.Complete = !live.Partial && out.LiveNamespace == ""
	}
	if opts.SnapshotOut != "" {
		if err := writeSnapshotFile(opts.SnapshotOut, objs); err != nil {
			return nil, err
		}
	}
	out.Snapshot = s
	return out, nil
}

// keepDecodable returns the objects that type cleanly, and hands the others to skip,
// in input order.
func keepDecodable(objs []RawObject, skip func(RawObject, error)) []RawObject {
	errs := make([]error, len(objs))
	parallel.For(len(objs), func(i int) { errs[i] = objs[i].Check() })
	out := make([]RawObject, 0, len(objs))
	for i, o := range objs {
		if errs[i] != nil {
			skip(o, errs[i])
			continue
		}
		out = append(out, o)
	}
	return out
}

func writeSnapshotFile(path string, objs []RawObject) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing snapshot: %w", err)
	}
	werr := WriteSnapshot(f, objs)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("writing snapshot %s: %w", path, err)
	}
	return nil
}
