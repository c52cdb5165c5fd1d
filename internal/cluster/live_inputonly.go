package cluster

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/metadata"

	"github.com/agpol/agpol/internal/snapshot"
)

// lister is one page of a list request: the dynamic client's, or secretsLister's.
type lister interface {
	List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error)
}

// addOptional adds the plan of the optional kinds (snapshot.InputOnlyKinds): their
// warnings are kept, and do not make the read partial.
func (p *kindPlan) addOptional(o kindPlan) {
	for _, sk := range o.served {
		sk.optional = true
		p.served = append(p.served, sk)
	}
	p.notInstalled = append(p.notInstalled, o.notInstalled...)
	for _, w := range o.warnings {
		w.Message += optionalUnread(w.Kind)
		p.warnings = append(p.warnings, w)
	}
}

// optionalUnread says what an unread optional kind ("resource.group") leaves undecided.
func optionalUnread(resource string) string {
	switch resource {
	case "secrets":
		return " (AuthPolicy apiKey and x509 rules are decided without them)"
	case "kuadrants.kuadrant.io":
		return " (Kuadrant's namespace is assumed to be kuadrant-system)"
	}
	return " (AuthPolicy kubernetesSubjectAccessReview rules are decided without them)"
}

func isSecrets(sk servedKind) bool { return sk.kind.Group == "" && sk.kind.Kind == "Secret" }

// secretsLister lists Secrets as metadata only (PartialObjectMetadataList: the server
// sends no data), each as a v1 Secret marked snapshot.SecretDataUnread.
func (r *liveReader) secretsLister(sk servedKind, ns string) lister {
	ri := r.meta.Resource(sk.gvr)
	if ns != "" {
		return metadataLister{ri.Namespace(ns)}
	}
	return metadataLister{ri}
}

type metadataLister struct{ ri metadata.ResourceInterface }

func (m metadataLister) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	l, err := m.ri.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := &unstructured.UnstructuredList{Object: map[string]any{}}
	out.SetContinue(l.Continue)
	out.SetResourceVersion(l.ResourceVersion)
	for i := range l.Items {
		meta, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&l.Items[i].ObjectMeta)
		if err != nil {
			return nil, fmt.Errorf("secret %q: %w", l.Items[i].Name, err)
		}
		u := unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": meta}}
		snapshot.MarkSecretDataUnread(&u)
		out.Items = append(out.Items, u)
	}
	return out, nil
}

// metadataOnlyAccept keeps, of an Accept header, the media types that ask for
// PartialObjectMetadata (client-go's metadata client adds a plain application/json
// fallback, which would let an old server send whole objects); false when none does.
func metadataOnlyAccept(accept string) (string, bool) {
	var keep []string
	for _, t := range strings.Split(accept, ",") {
		t = strings.TrimSpace(t)
		if strings.Contains(t, "as=PartialObjectMetadata") && strings.Contains(t, "g=meta.k8s.io") {
			keep = append(keep, t)
		}
	}
	return strings.Join(keep, ","), len(keep) > 0
}
