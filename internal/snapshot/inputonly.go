package snapshot

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// InputOnlyKinds are kinds agpol reads only to decide what Authorino would: Secrets
// (their metadata, never their data: Authorino's apiKey and x509 rules select them by
// label), the RBAC kinds a kubernetesSubjectAccessReview rule is answered from, and the
// Kuadrant CR (its namespace is where the operator writes AuthConfigs). A live read lists
// them as optional kinds, Secrets as metadata only (see docs/kuadrant-identities.md).
var InputOnlyKinds = []KnownKind{
	{"", "Secret", "secrets", []string{"v1"}, true},
	{rbacv1.GroupName, "Role", "roles", []string{"v1"}, true},
	{rbacv1.GroupName, "ClusterRole", "clusterroles", []string{"v1"}, false},
	{rbacv1.GroupName, "RoleBinding", "rolebindings", []string{"v1"}, true},
	{rbacv1.GroupName, "ClusterRoleBinding", "clusterrolebindings", []string{"v1"}, false},
	{"kuadrant.io", "Kuadrant", "kuadrants", []string{"v1beta1"}, true},
}

// Typed wrappers of the input-only kinds.
type (
	// Secret is a core Secret as agpol keeps it: its metadata and type, and whether it
	// holds what Authorino reads, never the data itself.
	Secret struct {
		metav1.ObjectMeta
		Type corev1.SecretType
		// HasAPIKey is set when data.api_key (or stringData.api_key) is not empty:
		// Authorino's apiKey rule only keeps such Secrets.
		HasAPIKey bool
		// HasCertificate is set when data["tls.crt"] (or ca.crt) is not empty.
		HasCertificate bool
		// DataUnread is set when the Secret's data was never seen (read from a cluster as
		// metadata only, or from a snapshot of such a read): HasAPIKey and HasCertificate
		// are then assumed true, as a Secret a rule selects is kept for it.
		DataUnread bool
		Origin
	}
	// Role is an rbac.authorization.k8s.io Role.
	Role struct {
		rbacv1.Role
		Origin
	}
	// ClusterRole is an rbac.authorization.k8s.io ClusterRole.
	ClusterRole struct {
		rbacv1.ClusterRole
		Origin
	}
	// RoleBinding is an rbac.authorization.k8s.io RoleBinding.
	RoleBinding struct {
		rbacv1.RoleBinding
		Origin
	}
	// ClusterRoleBinding is an rbac.authorization.k8s.io ClusterRoleBinding.
	ClusterRoleBinding struct {
		rbacv1.ClusterRoleBinding
		Origin
	}
	// Kuadrant is a kuadrant.io Kuadrant CR (only its metadata is read).
	Kuadrant struct {
		metav1.ObjectMeta
		Origin
	}
)

// lookupInputOnly finds an input-only kind.
func lookupInputOnly(group, kind string) (KnownKind, bool) {
	return lookupIn(InputOnlyKinds, group, kind)
}

// decodeInputOnly types an object of an input-only kind.
func decodeInputOnly(u *unstructured.Unstructured, known KnownKind) (Typed, error) {
	var (
		t   Typed
		err error
	)
	switch known.Kind {
	case "Secret":
		t.obj = secretOf(u)
	case "Role":
		t.obj, err = typedAs(u, func(x *Role) any { return &x.Role })
	case "ClusterRole":
		t.obj, err = typedAs(u, func(x *ClusterRole) any { return &x.ClusterRole })
	case "RoleBinding":
		t.obj, err = typedAs(u, func(x *RoleBinding) any { return &x.RoleBinding })
	case "ClusterRoleBinding":
		t.obj, err = typedAs(u, func(x *ClusterRoleBinding) any { return &x.ClusterRoleBinding })
	case "Kuadrant":
		x := &Kuadrant{}
		x.Name, x.Namespace = u.GetName(), u.GetNamespace()
		x.CreationTimestamp = u.GetCreationTimestamp()
		t.obj = x
	}
	if err != nil {
		return t, fmt.Errorf("%s %q: %w", known.Kind, u.GetName(), err)
	}
	return t, nil
}

// SecretDataAnnotation records, on a Secret agpol read from a cluster or wrote with
// --snapshot-out, which of the data entries Authorino reads were set ("api_key,tls.crt",
// "" for none), or SecretDataUnread when the data was never read. It replaces the data,
// which agpol never keeps; agpol removes it again when it types the Secret.
const SecretDataAnnotation = "agpol.io/secret-data"

// SecretDataUnread is SecretDataAnnotation's value on a Secret read as metadata only.
const SecretDataUnread = "unread"

// secretOf keeps a Secret's metadata, type, and whether its api_key and certificate
// entries are set; the values are dropped here.
func secretOf(u *unstructured.Unstructured) *Secret {
	x := &Secret{}
	x.Name, x.Namespace = u.GetName(), u.GetNamespace()
	x.Labels, x.ObjectMeta.Annotations = u.GetLabels(), u.GetAnnotations()
	x.CreationTimestamp = u.GetCreationTimestamp()
	typ, _, _ := unstructured.NestedString(u.Object, "type")
	x.Type = corev1.SecretType(typ)
	set := func(key string) bool {
		for _, field := range []string{"data", "stringData"} {
			if v, ok, _ := unstructured.NestedString(u.Object, field, key); ok && v != "" {
				return true
			}
		}
		return false
	}
	if mark, ok := x.ObjectMeta.Annotations[SecretDataAnnotation]; ok {
		ann := make(map[string]string, len(x.ObjectMeta.Annotations)-1)
		for k, v := range x.ObjectMeta.Annotations {
			if k != SecretDataAnnotation {
				ann[k] = v
			}
		}
		if len(ann) == 0 {
			ann = nil
		}
		x.ObjectMeta.Annotations = ann
		if mark == SecretDataUnread {
			x.DataUnread = true
		} else {
			keys := strings.Split(mark, ",")
			set = func(key string) bool { return slices.Contains(keys, key) }
		}
	}
	x.HasAPIKey = x.DataUnread || set("api_key")
	x.HasCertificate = x.DataUnread || set("tls.crt") || set("ca.crt")
	return x
}

// SecretMetadata is the Secret u as agpol writes it (--snapshot-out): its metadata and
// type, with SecretDataAnnotation in place of the data, so that reading it back gives
// the same answers and no value of the data is ever written.
func SecretMetadata(u *unstructured.Unstructured) *unstructured.Unstructured {
	x := secretOf(u)
	out := x.withoutData()
	mark := SecretDataUnread
	if !x.DataUnread {
		var keys []string
		if x.HasAPIKey {
			keys = append(keys, "api_key")
		}
		if x.HasCertificate {
			// tls.crt and ca.crt count alike (HasCertificate): one stands for both.
			keys = append(keys, "tls.crt")
		}
		mark = strings.Join(keys, ",")
	}
	ann := out.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[SecretDataAnnotation] = mark
	out.SetAnnotations(ann)
	if ts := x.CreationTimestamp; !ts.IsZero() {
		out.SetCreationTimestamp(ts)
	}
	return out
}

// MarkSecretDataUnread marks a Secret read as metadata only (SecretDataAnnotation).
func MarkSecretDataUnread(u *unstructured.Unstructured) {
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[SecretDataAnnotation] = SecretDataUnread
	u.SetAnnotations(ann)
}

// withoutData is the object a Secret's Origin holds: its metadata and type, so that
// nothing agpol keeps, prints or writes (--snapshot-out) carries the Secret's data.
func (x *Secret) withoutData() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion("v1")
	u.SetKind("Secret")
	u.SetName(x.Name)
	u.SetNamespace(x.Namespace)
	u.SetLabels(x.Labels)
	u.SetAnnotations(x.ObjectMeta.Annotations)
	if x.Type != "" {
		u.Object["type"] = string(x.Type)
	}
	return u
}

// appendInputOnly is Append for the input-only kinds; false for other objects.
func (s *Snapshot) appendInputOnly(obj any, o Origin) bool {
	switch x := obj.(type) {
	case *Secret:
		x.Origin = NewOrigin(o.Source, NewRaw(x.withoutData()))
		s.Secrets = append(s.Secrets, x)
	case *Role:
		x.Origin = o
		s.Roles = append(s.Roles, x)
	case *ClusterRole:
		x.Origin = o
		s.ClusterRoles = append(s.ClusterRoles, x)
	case *RoleBinding:
		x.Origin = o
		s.RoleBindings = append(s.RoleBindings, x)
	case *ClusterRoleBinding:
		x.Origin = o
		s.ClusterRoleBindings = append(s.ClusterRoleBindings, x)
	case *Kuadrant:
		x.Origin = o
		s.Kuadrants = append(s.Kuadrants, x)
	default:
		return false
	}
	return true
}
