package authpolicy

import (
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/agpol/agpol/internal/snapshot"
)

// DefaultKuadrantNamespace is where Kuadrant is installed when the input has no Kuadrant
// CR (kuadrant-operator's default, and its user guides').
const DefaultKuadrantNamespace = "kuadrant-system"

// Env is what Authorino reads besides the request: the namespace of the AuthConfigs
// (kuadrant-operator writes them into the Kuadrant CR's namespace), the Secrets' metadata
// (apiKey and x509 rules select them) and the RBAC objects a SubjectAccessReview is
// answered from.
type Env struct {
	// AuthConfigNamespace is the namespace of the Kuadrant CR, else DefaultKuadrantNamespace.
	AuthConfigNamespace string
	// NamespaceAssumed is set when the input has no Kuadrant CR.
	NamespaceAssumed bool
	Secrets          []*snapshot.Secret
	roles            map[string][]rbacv1.PolicyRule // "ns/name" of Roles, "/name" of ClusterRoles
	bindings         []binding
	hasRBAC          bool
	// policyNamespace is set when AuthConfigNamespace is a v1beta2 policy's namespace.
	policyNamespace bool
	// unread holds, by resource ("secrets", "roles.rbac.authorization.k8s.io", ...), why a
	// live read could not list an input-only kind.
	unread map[string]string
}

type binding struct {
	namespace string // "" for a ClusterRoleBinding
	roleRef   rbacv1.RoleRef
	subjects  []rbacv1.Subject
}

// NewEnv reads the environment of Authorino's rules from the input.
func NewEnv(s *snapshot.Snapshot) *Env {
	env := &Env{AuthConfigNamespace: DefaultKuadrantNamespace, NamespaceAssumed: true, roles: map[string][]rbacv1.PolicyRule{}}
	if s == nil {
		return env
	}
	if len(s.Kuadrants) > 0 {
		k := append([]*snapshot.Kuadrant(nil), s.Kuadrants...)
		sort.Slice(k, func(i, j int) bool { return k[i].Namespace+"/"+k[i].Name < k[j].Namespace+"/"+k[j].Name })
		env.AuthConfigNamespace, env.NamespaceAssumed = k[0].Namespace, false
	}
	env.Secrets = s.Secrets
	for _, r := range s.Roles {
		env.roles[r.Namespace+"/"+r.Name] = r.Rules
	}
	for _, r := range s.ClusterRoles {
		env.roles["/"+r.Name] = r.Rules
	}
	for _, b := range s.RoleBindings {
		env.bindings = append(env.bindings, binding{b.Namespace, b.RoleRef, b.Subjects})
	}
	for _, b := range s.ClusterRoleBindings {
		env.bindings = append(env.bindings, binding{"", b.RoleRef, b.Subjects})
	}
	env.hasRBAC = len(env.roles) > 0 || len(env.bindings) > 0
	for _, w := range s.Warnings {
		if w.Kind == "secrets" || strings.HasSuffix(w.Kind, ".rbac.authorization.k8s.io") {
			if env.unread == nil {
				env.unread = map[string]string{}
			}
			if _, seen := env.unread[w.Kind]; !seen {
				env.unread[w.Kind] = w.Message
			}
		}
	}
	return env
}

// unreadMessages are the load's messages of the given resources a live read could not
// list (nil when it could, or the input is files).
func (env *Env) unreadMessages(resources ...string) []string {
	var msgs []string
	for _, r := range resources {
		if m, ok := env.unread[r]; ok {
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// secret finds a Secret of the input by namespace and name.
func (env *Env) secret(ns, name string) *snapshot.Secret {
	for _, s := range env.Secrets {
		if s.Namespace == ns && s.Name == name {
			return s
		}
	}
	return nil
}

// selectsSecret reports whether a rule's label selector selects the Secret.
func selectsSecret(sel *metav1.LabelSelector, s *snapshot.Secret) (bool, error) {
	ls, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, err
	}
	return ls.Matches(labels.Set(s.Labels)), nil
}

// accessReview is a SubjectAccessReview's spec.
type accessReview struct {
	user   string
	groups []string
	// resourceRequest: resource attributes (namespace, group, ...), else a
	// non-resource path and verb.
	resourceRequest                               bool
	namespace, group, resource, subresource, name string
	path, verb                                    string
}

// privilegedGroup is the group the API server allows everything, before any other
// authorizer (k8s.io/kubernetes v1.37.2 pkg/kubeapiserver/authorizer/reload.go:110-115,
// k8s.io/apiserver pkg/authorization/authorizerfactory/builtin.go:114-125).
const privilegedGroup = "system:masters"

// allows answers a SubjectAccessReview from the Roles, ClusterRoles and bindings of the
// input, as Kubernetes' RBAC authorizer does (plugin/pkg/auth/authorizer/rbac/rbac.go:
// a binding whose subject is the user or one of its groups, and a rule of its role that
// covers the verb and resource or non-resource URL). It names the role that allows
// ("Kind ns/name"), or the privileged group.
func (env *Env) allows(r accessReview) (role, group string, ok bool) {
	for _, g := range r.groups {
		if g == privilegedGroup {
			return "", privilegedGroup, true
		}
	}
	for _, b := range env.bindings {
		if !r.resourceRequest && b.namespace != "" {
			continue // non-resource URLs are granted only cluster-wide
		}
		if b.namespace != "" && b.namespace != r.namespace {
			continue
		}
		if !bindsSubject(b.subjects, b.namespace, r.user, r.groups) {
			continue
		}
		key := "/" + b.roleRef.Name
		if b.roleRef.Kind == "Role" {
			key = b.namespace + "/" + b.roleRef.Name
		}
		for _, rule := range env.roles[key] {
			if ruleAllows(rule, r) {
				return b.roleRef.Kind + " " + strings.TrimPrefix(key, "/"), "", true
			}
		}
	}
	return "", "", false
}

// bindsSubject is Kubernetes' appliesToUser (k8s.io/kubernetes v1.37.2
// pkg/registry/rbac/validation/rule.go:281-304): a ServiceAccount subject without a
// namespace is one of the binding's namespace.
func bindsSubject(subjects []rbacv1.Subject, bindingNamespace, user string, groups []string) bool {
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			if s.Name == user {
				return true
			}
		case rbacv1.GroupKind:
			for _, g := range groups {
				if s.Name == g {
					return true
				}
			}
		case rbacv1.ServiceAccountKind:
			ns := s.Namespace
			if ns == "" {
				ns = bindingNamespace
			}
			if ns != "" && user == "system:serviceaccount:"+ns+":"+s.Name {
				return true
			}
		}
	}
	return false
}

// ruleAllows is Kubernetes' RuleAllows (k8s.io/kubernetes v1.37.2
// plugin/pkg/auth/authorizer/rbac/rbac.go:191-205, with the matchers of
// pkg/apis/rbac/v1/evaluation_helpers.go:26-108).
func ruleAllows(rule rbacv1.PolicyRule, r accessReview) bool {
	if !matches(rule.Verbs, r.verb) {
		return false
	}
	if !r.resourceRequest {
		for _, u := range rule.NonResourceURLs {
			if u == rbacv1.NonResourceAll || u == r.path || (strings.HasSuffix(u, "*") && strings.HasPrefix(r.path, strings.TrimRight(u, "*"))) {
				return true
			}
		}
		return false
	}
	res := r.resource
	if r.subresource != "" {
		res += "/" + r.subresource
	}
	if !matches(rule.APIGroups, r.group) || !resourceMatches(rule.Resources, res, r.subresource) {
		return false
	}
	// Resource names are compared as written: "*" is no wildcard there
	// (evaluation_helpers.go:80-92).
	if len(rule.ResourceNames) == 0 {
		return true
	}
	for _, n := range rule.ResourceNames {
		if n == r.name {
			return true
		}
	}
	return false
}

// resourceMatches is ResourceMatches (evaluation_helpers.go:52-78): "*", the resource
// (with its subresource), or "*/SUBRESOURCE".
func resourceMatches(list []string, combined, subresource string) bool {
	for _, x := range list {
		if x == rbacv1.ResourceAll || x == combined || (subresource != "" && x == "*/"+subresource) {
			return true
		}
	}
	return false
}

func matches(list []string, v string) bool {
	for _, x := range list {
		if x == "*" || x == v {
			return true
		}
	}
	return false
}

// KeysOutOfScope is an apiKey rule (allNamespaces false) whose keys the input keeps only
// outside the namespace Authorino searches: Authorino never finds them, and every
// request that needs the rule is 401 while the policy reports Enforced.
type KeysOutOfScope struct {
	// Rule is the authentication rule's name; Field its path in the policy.
	Rule  string
	Field string
	// Namespace is where Authorino looks (Kuadrant's); Assumed when no Kuadrant CR is in the input.
	Namespace string
	Assumed   bool
	// Secrets are the selected Secrets with an api_key, all in other namespaces ("ns/name").
	Secrets []string
}

// KeysOutOfScope lists the policy's apiKey rules whose keys Authorino cannot find
// (controllers/auth_config_controller.go:351-360, pkg/evaluators/identity/api_key.go:51-55).
func (env *Env) KeysOutOfScope(p *Policy) []KeysOutOfScope {
	var out []KeysOutOfScope
	prefix := "spec.rules"
	switch p.Mode {
	case ModeDefaults:
		prefix = "spec.defaults.rules"
	case ModeOverrides:
		prefix = "spec.overrides.rules"
	}
	for _, k := range p.Keys() {
		r := p.Rules[k]
		if r.Group != "authentication" {
			continue
		}
		spec, err := parseAuthentication(r.Spec)
		if err != nil || spec.APIKey == nil || spec.APIKey.AllNamespaces {
			continue
		}
		var inside bool
		var outside []string
		for _, s := range env.Secrets {
			if ok, _ := selectsSecret(spec.APIKey.Selector, s); !ok || !s.HasAPIKey {
				continue
			}
			if s.Namespace == env.AuthConfigNamespace {
				inside = true
			} else {
				outside = append(outside, s.Namespace+"/"+s.Name)
			}
		}
		if !inside && len(outside) > 0 {
			sort.Strings(outside)
			out = append(out, KeysOutOfScope{Rule: r.Name, Field: prefix + ".authentication." + r.Name + ".apiKey", Namespace: env.AuthConfigNamespace, Assumed: env.NamespaceAssumed, Secrets: outside})
		}
	}
	return out
}
