package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/apis/agentic/v0alpha0"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/version"
)

// DefaultChunkSize is the page size of list requests when LiveOptions.ChunkSize is 0.
const DefaultChunkSize = 500

// DefaultDeadline bounds a whole live read when LiveOptions.Deadline is 0, so that a
// server that stops answering (a list never answered, a page stalling mid-body) is an
// error, not a hang.
const DefaultDeadline = 60 * time.Second

// maxFallbackNamespaces bounds the per-namespace retry of a forbidden all-namespaces
// list: beyond it agpol warns instead of sending one list per namespace and kind.
const maxFallbackNamespaces = 64

// LiveOptions says what to read from a cluster.
type LiveOptions struct {
	// Getter supplies the REST config (kubeconfig flags: --kubeconfig, --context,
	// --request-timeout, impersonation, ...) and the context name.
	Getter genericclioptions.RESTClientGetter
	// Namespace limits the read to one namespace: namespaced kinds are listed in it and
	// its Namespace object is fetched by name. Cluster-scoped kinds (GatewayClass, all
	// Namespaces) are read only when Namespace is "", which lists every namespace.
	Namespace string
	// ChunkSize is the page size of list requests (0: DefaultChunkSize).
	ChunkSize int64
	// Deadline bounds the whole read (discovery and every page of every list); 0 is
	// DefaultDeadline. Each request is also bounded by it unless the kubeconfig flags
	// set a shorter --request-timeout.
	Deadline time.Duration
	// WrapTransport, when set, wraps the HTTP transport outside agpol's read-only guard,
	// so it sees every request agpol attempts (tests count requests with it).
	WrapTransport func(http.RoundTripper) http.RoundTripper
}

// LiveResult is what a live read returned.
type LiveResult struct {
	// Objects are the listed objects, kinds in snapshot.KnownKinds order, each with
	// apiVersion and kind set and metadata.managedFields removed.
	Objects []RawObject
	// NotInstalled names kinds the cluster does not serve, as "resource.group"
	// (e.g. "authpolicies.kuadrant.io"), each once.
	NotInstalled []string
	// Warnings are reads that were refused (RBAC) or failed for one group, and kinds
	// served only at versions agpol does not read.
	Warnings []snapshot.Warning
	// Partial is true when some objects could not be read, so answers may be incomplete.
	Partial bool
	// Context is the kubeconfig context name when known.
	Context string
	// Server is the API server URL.
	Server string
}

// ReadLive lists every kind agpol reads from the cluster, and the input-only kinds as
// optional ones (a refusal is a warning that does not make the read partial). Discovery
// decides which kinds are served and at which version; lists are paginated. Only GET
// requests are sent: the transport refuses any other method, and lets a request for
// Secrets through only when it asks for their metadata alone (PartialObjectMetadata). An unreachable server, bad
// credentials or an unexpected API error is an error; a kind not installed or a list RBAC
// forbids is recorded in the result instead. XAccessPolicies written at v0alpha0 (stored as
// v1alpha1 without an action) are re-read at v0alpha0, so they get the same typed form as
// the manifest read from a file.
func ReadLive(ctx context.Context, opts LiveOptions) (*LiveResult, error) {
	if opts.Getter == nil {
		return nil, errors.New("reading the cluster: no kubeconfig flags given")
	}
	base, err := opts.Getter.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig: %w", err)
	}
	cfg := readOnlyConfig(base)
	deadline := opts.Deadline
	if deadline <= 0 {
		deadline = DefaultDeadline
	}
	if cfg.Timeout <= 0 || cfg.Timeout > deadline {
		cfg.Timeout = deadline // discovery takes no context: bound its requests
	}
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	if opts.WrapTransport != nil {
		cfg.Wrap(opts.WrapTransport)
	}
	res := &LiveResult{Context: contextName(opts.Getter), Server: cfg.Host}
	where, describe := res.Context, fmt.Sprintf("at %s", cfg.Host)
	if where == "" {
		where = serverHost(cfg.Host)
	} else {
		describe = fmt.Sprintf("of context %q at %s", where, cfg.Host)
	}

	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster %s: %w", describe, err)
	}
	_, lists, err := dc.ServerGroupsAndResources()
	var failed map[schema.GroupVersion]error
	if err != nil {
		var gdf *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &gdf) {
			if isTimeout(err) {
				return nil, fmt.Errorf("cannot reach the cluster %s: no answer within %s while discovering the served kinds (--request-timeout sets the limit): %w", describe, cfg.Timeout, err)
			}
			return nil, fmt.Errorf("cannot reach the cluster %s: %w", describe, err)
		}
		failed = gdf.Groups
	}
	plan := planKinds(snapshot.KnownKinds, lists, failed)
	plan.addOptional(planKinds(snapshot.InputOnlyKinds, lists, failed))
	res.NotInstalled = plan.notInstalled
	res.Warnings = append(res.Warnings, plan.warnings...)
	res.Partial = plan.partial

	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster %s: %w", describe, err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster %s: %w", describe, err)
	}
	r := &liveReader{
		dyn:    dyn,
		meta:   meta,
		chunk:  opts.ChunkSize,
		source: snapshot.Source{Cluster: where, Item: -1},
		res:    res,
	}
	if r.chunk <= 0 {
		r.chunk = DefaultChunkSize
	}

	// Namespaces first: an all-namespaces list RBAC forbids is retried per visible namespace.
	byKind := make(map[int][]unstructured.Unstructured, len(plan.served))
	order := make([]int, 0, len(plan.served))
	for i, sk := range plan.served {
		if sk.kind.Group == "" && sk.kind.Kind == "Namespace" {
			order = append([]int{i}, order...)
		} else {
			order = append(order, i)
		}
	}
	for _, i := range order {
		sk := plan.served[i]
		items, err := r.read(ctx, sk, opts.Namespace)
		if err != nil {
			if ctx.Err() != nil || isTimeout(err) {
				return nil, fmt.Errorf("reading the cluster %s: no answer within %s: %w (--request-timeout sets the limit)", describe, deadline, err)
			}
			return nil, err
		}
		if sk.legacy != nil {
			r.legacyViews(ctx, sk, items)
		}
		byKind[i] = items
	}
	for i := range plan.served {
		for j := range byKind[i] {
			u := &byKind[i][j]
			res.Objects = append(res.Objects, NewRawObject(u, r.source))
		}
	}
	return res, nil
}

// servedKind is a known kind and the group/version/resource it is listed at.
type servedKind struct {
	kind snapshot.KnownKind
	gvr  schema.GroupVersionResource
	// legacy is the v0alpha0 resource of XAccessPolicy when the server also serves it.
	legacy *schema.GroupVersionResource
	// optional is set for snapshot.InputOnlyKinds: a refused read of one is a warning
	// that does not make the read partial.
	optional bool
}

// name is how messages name the kind: "resource.group", or "resource" for core kinds.
func (s servedKind) name() string { return resourceName(s.gvr.Resource, s.gvr.Group) }

func resourceName(resource, group string) string {
	if group == "" {
		return resource
	}
	return resource + "." + group
}

// kindPlan is what discovery decided.
type kindPlan struct {
	served       []servedKind
	notInstalled []string
	warnings     []snapshot.Warning
	partial      bool
}

// planKinds picks, for every known kind, the first of its versions the server serves (the
// agentic kinds also under the legacy group, when the current group is not served).
// failed are the group versions whose discovery failed; a kind that may live there is a
// warning and makes the read partial, not "not installed".
func planKinds(kinds []snapshot.KnownKind, lists []*metav1.APIResourceList, failed map[schema.GroupVersion]error) kindPlan {
	served := map[schema.GroupVersion]map[string]bool{}
	for _, l := range lists {
		if l == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || (len(r.Verbs) > 0 && !hasVerb(r.Verbs, "list")) {
				continue // subresource, or not listable
			}
			if served[gv] == nil {
				served[gv] = map[string]bool{}
			}
			served[gv][r.Name] = true
		}
	}
	var p kindPlan
	for _, k := range kinds {
		groups := []string{k.Group}
		if agentic.IsGroup(k.Group) {
			groups = []string{agentic.GroupName, agentic.LegacyGroupName}
		}
		var (
			pick       *servedKind
			otherVers  []string
			failedVers []string
		)
		for _, g := range groups {
			for _, v := range k.Versions {
				gv := schema.GroupVersion{Group: g, Version: v}
				if served[gv][k.Resource] {
					pick = &servedKind{kind: k, gvr: gv.WithResource(k.Resource)}
					break
				}
				if _, ok := failed[gv]; ok {
					failedVers = append(failedVers, gv.String())
				}
			}
			if pick != nil {
				break
			}
			for gv, rs := range served {
				if gv.Group == g && rs[k.Resource] {
					otherVers = append(otherVers, gv.String())
				}
			}
		}
		switch {
		case pick != nil:
			if k.Kind == agentic.KindXAccessPolicy && pick.gvr.Version != v0alpha0.Version {
				gv := schema.GroupVersion{Group: pick.gvr.Group, Version: v0alpha0.Version}
				if served[gv][k.Resource] {
					legacy := gv.WithResource(k.Resource)
					pick.legacy = &legacy
				}
			}
			p.served = append(p.served, *pick)
		case len(failedVers) > 0:
			sort.Strings(failedVers)
			p.partial = true
			p.warnings = append(p.warnings, snapshot.Warning{
				Kind:    resourceName(k.Resource, k.Group),
				Message: fmt.Sprintf("cannot discover %s: the server failed to list %s", resourceName(k.Resource, k.Group), strings.Join(failedVers, ", ")),
			})
		case len(otherVers) > 0:
			sort.Strings(otherVers)
			p.partial = true
			p.warnings = append(p.warnings, snapshot.Warning{
				Kind: resourceName(k.Resource, k.Group),
				Message: fmt.Sprintf("%s is served only at %s; agpol reads %s", resourceName(k.Resource, k.Group),
					strings.Join(otherVers, ", "), strings.Join(k.Versions, ", ")),
			})
		default:
			p.notInstalled = append(p.notInstalled, resourceName(k.Resource, k.Group))
		}
	}
	return p
}

func hasVerb(verbs []string, v string) bool {
	for _, x := range verbs {
		if x == v {
			return true
		}
	}
	return false
}

// liveReader lists kinds and records refusals in res.
type liveReader struct {
	dyn    dynamic.Interface
	meta   metadata.Interface
	chunk  int64
	source snapshot.Source
	res    *LiveResult
	// visible are the namespaces listed (all-namespaces reads only); nil when unknown.
	visible []string
}

// read returns the objects of one kind: in ns, or everywhere when ns is "".
func (r *liveReader) read(ctx context.Context, sk servedKind, ns string) ([]unstructured.Unstructured, error) {
	if !sk.kind.Namespaced {
		if ns != "" {
			if sk.kind.Group == "" && sk.kind.Kind == "Namespace" {
				return r.getNamespace(ctx, sk, ns)
			}
			return nil, nil // cluster-scoped kinds are read only without a namespace
		}
		items, err := r.list(ctx, sk, "")
		switch {
		case apierrors.IsForbidden(err):
			r.forbidden(sk, "", fmt.Sprintf("cannot list %s: forbidden", sk.name()))
			return nil, nil
		case err != nil:
			return nil, err
		}
		if sk.kind.Group == "" && sk.kind.Kind == "Namespace" {
			r.visible = make([]string, 0, len(items))
			for i := range items {
				r.visible = append(r.visible, items[i].GetName())
			}
		}
		return items, nil
	}

	items, err := r.list(ctx, sk, ns)
	switch {
	case err == nil:
		return items, nil
	case !apierrors.IsForbidden(err):
		return nil, err
	case ns != "":
		r.forbidden(sk, ns, fmt.Sprintf("cannot list %s in namespace %q: forbidden", sk.name(), ns))
		return nil, nil
	case r.visible == nil || len(r.visible) > maxFallbackNamespaces:
		r.forbidden(sk, "", fmt.Sprintf("cannot list %s in all namespaces: forbidden", sk.name()))
		return nil, nil
	}
	// RBAC may grant the kind namespace by namespace: list each visible namespace.
	var denied, deniedNS []string
	items = nil
	for _, n := range r.visible {
		got, err := r.list(ctx, sk, n)
		switch {
		case apierrors.IsForbidden(err):
			denied, deniedNS = append(denied, strconv.Quote(n)), append(deniedNS, n)
		case err != nil:
			return nil, err
		default:
			items = append(items, got...)
		}
	}
	if len(denied) > 0 {
		where := "namespaces " + strings.Join(denied, ", ")
		if len(denied) == 1 {
			where = "namespace " + denied[0]
		}
		r.forbidden(sk, "", fmt.Sprintf("cannot list %s in %s: forbidden", sk.name(), where))
		r.res.Warnings[len(r.res.Warnings)-1].Namespaces = deniedNS // which namespaces, as data
	}
	return items, nil
}

// legacyViews re-reads, at v0alpha0, the XAccessPolicies that have no action at v1alpha1.
// The CRD converts by relabelling only, and v1alpha1 requires an action, so those were
// written at v0alpha0: read at that version they get the same typed form (v1alpha1 view
// plus Legacy) as the same manifest read from a file. When the GET fails the v1alpha1
// object, which is what the controller sees, is kept.
func (r *liveReader) legacyViews(ctx context.Context, sk servedKind, items []unstructured.Unstructured) {
	for i := range items {
		if action, _, _ := unstructured.NestedString(items[i].Object, "spec", "action"); action != "" {
			continue
		}
		u, err := r.dyn.Resource(*sk.legacy).Namespace(items[i].GetNamespace()).Get(ctx, items[i].GetName(), metav1.GetOptions{})
		if err != nil {
			continue
		}
		clean(u, servedKind{kind: sk.kind, gvr: *sk.legacy})
		items[i] = *u
	}
}

// getNamespace fetches the one Namespace object a namespaced read needs.
func (r *liveReader) getNamespace(ctx context.Context, sk servedKind, ns string) ([]unstructured.Unstructured, error) {
	u, err := r.dyn.Resource(sk.gvr).Get(ctx, ns, metav1.GetOptions{})
	switch {
	case apierrors.IsForbidden(err):
		r.forbidden(sk, ns, fmt.Sprintf("cannot get namespace %q: forbidden", ns))
		return nil, nil
	case apierrors.IsNotFound(err):
		r.res.Warnings = append(r.res.Warnings, snapshot.Warning{
			Kind: sk.name(), Namespace: ns, Source: r.source.String(),
			Message: fmt.Sprintf("namespace %q not found", ns),
		})
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("getting namespace %q: %w", ns, err)
	}
	clean(u, sk)
	return []unstructured.Unstructured{*u}, nil
}

func (r *liveReader) forbidden(sk servedKind, ns, msg string) {
	if sk.optional {
		r.res.Warnings = append(r.res.Warnings, snapshot.Warning{
			Kind: sk.name(), Namespace: ns, Source: r.source.String(), Message: msg + optionalUnread(sk.name()),
		})
		return
	}
	r.res.Partial = true
	r.res.Warnings = append(r.res.Warnings, snapshot.Warning{
		Kind: sk.name(), Namespace: ns, Source: r.source.String(), Message: msg,
	})
}

// list reads every page of one kind in one namespace ("" = all, or cluster-scoped).
func (r *liveReader) list(ctx context.Context, sk servedKind, ns string) ([]unstructured.Unstructured, error) {
	var ri lister = r.dyn.Resource(sk.gvr)
	if sk.kind.Namespaced && ns != "" {
		ri = r.dyn.Resource(sk.gvr).Namespace(ns)
	}
	if isSecrets(sk) {
		ri = r.secretsLister(sk, ns)
	}
	opts := metav1.ListOptions{Limit: r.chunk}
	var items []unstructured.Unstructured
	for page := 1; ; page++ {
		l, err := ri.List(ctx, opts)
		if err != nil && page > 1 && !apierrors.IsForbidden(err) && !apierrors.IsResourceExpired(err) {
			err = fmt.Errorf("page %d: %w", page, err)
		}
		if err != nil {
			if apierrors.IsResourceExpired(err) && opts.Continue != "" {
				// The continue token expired between pages: read the whole list in one request.
				items, opts, page = nil, metav1.ListOptions{}, 0
				continue
			}
			if apierrors.IsForbidden(err) {
				return nil, err
			}
			if ns != "" && sk.kind.Namespaced {
				return nil, fmt.Errorf("listing %s in namespace %q: %w", sk.name(), ns, err)
			}
			return nil, fmt.Errorf("listing %s: %w", sk.name(), err)
		}
		for i := range l.Items {
			clean(&l.Items[i], sk)
		}
		items = append(items, l.Items...)
		if l.GetContinue() == "" {
			return items, nil
		}
		opts.Continue = l.GetContinue()
	}
}

// clean sets apiVersion and kind (typed lists leave them off items) and drops managedFields.
func clean(u *unstructured.Unstructured, sk servedKind) {
	if u.GetAPIVersion() == "" {
		u.SetAPIVersion(sk.gvr.GroupVersion().String())
	}
	if u.GetKind() == "" {
		u.SetKind(sk.kind.Kind)
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
}

// contextName returns the kubeconfig context in use, or "" when there is none.
func contextName(g genericclioptions.RESTClientGetter) string {
	if cf, ok := g.(*genericclioptions.ConfigFlags); ok && cf.Context != nil && *cf.Context != "" {
		return *cf.Context
	}
	loader := g.ToRawKubeConfigLoader()
	if loader == nil {
		return ""
	}
	raw, err := loader.RawConfig()
	if err != nil {
		return ""
	}
	return raw.CurrentContext
}

func serverHost(host string) string {
	if u, err := url.Parse(host); err == nil && u.Host != "" {
		return u.Host
	}
	return host
}

// readOnlyConfig copies cfg and guards its transport so that nothing but reads leave agpol.
func readOnlyConfig(base *rest.Config) *rest.Config {
	cfg := rest.CopyConfig(base)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &readOnlyTransport{next: rt} })
	if cfg.UserAgent == "" {
		cfg.UserAgent = "agpol/" + version.Get().Version
	}
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	return cfg
}

// ErrReadOnly is returned for any request agpol refuses to send.
var ErrReadOnly = errors.New("agpol only reads from clusters")

// readOnlyTransport refuses every request that is not GET or HEAD, and any request for
// Secrets that does not ask for metadata only, before it reaches the network.
type readOnlyTransport struct{ next http.RoundTripper }

// WrappedRoundTripper lets client-go reach the transport below (to cancel a request
// that timed out) instead of logging that it cannot.
func (t *readOnlyTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

func (t *readOnlyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return nil, fmt.Errorf("%w: refusing %s %s", ErrReadOnly, req.Method, req.URL.Path)
	}
	if isSecretsPath(req.URL.Path) {
		accept, ok := metadataOnlyAccept(req.Header.Get("Accept"))
		if !ok {
			return nil, fmt.Errorf("%w: refusing to read Secrets but as metadata (%s)", ErrReadOnly, req.URL.Path)
		}
		req = req.Clone(req.Context())
		req.Header.Set("Accept", accept)
	}
	return t.next.RoundTrip(req)
}

// isSecretsPath reports whether p addresses core Secrets: /api/v1/secrets,
// /api/v1/namespaces/NS/secrets[/NAME...], or the same under /api/v1/watch.
func isSecretsPath(p string) bool {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if len(parts) < 3 || parts[0] != "api" {
		return false
	}
	tail := parts[2:]
	if len(tail) > 0 && tail[0] == "watch" {
		tail = tail[1:]
	}
	if len(tail) >= 3 && tail[0] == "namespaces" {
		tail = tail[2:]
	}
	return len(tail) > 0 && tail[0] == "secrets"
}

// isTimeout reports whether err is a request that timed out.
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
