package authpolicy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	kuadrantv1 "github.com/agpol/agpol/internal/apis/kuadrant/v1"
)

// subjectAccessReviewSpec is a kubernetesSubjectAccessReview rule (Authorino v1beta3).
type subjectAccessReviewSpec struct {
	User                *kuadrantv1.ValueOrSelector `json:"user"`
	AuthorizationGroups *kuadrantv1.ValueOrSelector `json:"authorizationGroups"`
	ResourceAttributes  *struct {
		Namespace   kuadrantv1.ValueOrSelector `json:"namespace"`
		Group       kuadrantv1.ValueOrSelector `json:"group"`
		Resource    kuadrantv1.ValueOrSelector `json:"resource"`
		Name        kuadrantv1.ValueOrSelector `json:"name"`
		SubResource kuadrantv1.ValueOrSelector `json:"subresource"`
		Verb        kuadrantv1.ValueOrSelector `json:"verb"`
	} `json:"resourceAttributes"`
}

// subjectAccessReview builds the review Authorino would create
// (pkg/evaluators/authorization/kubernetes_authz.go:44-134) and answers it from the
// RBAC objects of the input.
func subjectAccessReview(c *conditionEvaluator, req Request, env *Env, raw []byte) (Tri, string) {
	var spec subjectAccessReviewSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return Unknown, "the rule cannot be read: " + err.Error()
	}
	str := func(v *kuadrantv1.ValueOrSelector) (string, bool) {
		if v == nil {
			return "", true
		}
		val, known, err := c.resolve(*v)
		if err != nil || !known {
			return "", false
		}
		if s, ok := val.(string); ok {
			return s, true
		}
		if val == nil {
			return "", true
		}
		b, _ := json.Marshal(val)
		return string(b), true
	}
	var r accessReview
	var ok bool
	if r.user, ok = str(spec.User); !ok {
		return Unknown, "the review's user is not known"
	}
	if spec.AuthorizationGroups != nil {
		val, known, err := c.resolve(*spec.AuthorizationGroups)
		if err != nil || !known {
			return Unknown, "the review's groups are not known"
		}
		groups, ok := reviewGroups(val)
		if !ok {
			return False, "the review's groups (authorizationGroups) are not a JSON list of strings, so Authorino fails the rule before asking (kubernetes_authz.go:118-128)"
		}
		r.groups = groups
	}
	if ra := spec.ResourceAttributes; ra != nil {
		r.resourceRequest = true
		for _, f := range []struct {
			v   *kuadrantv1.ValueOrSelector
			dst *string
		}{{&ra.Namespace, &r.namespace}, {&ra.Group, &r.group}, {&ra.Resource, &r.resource}, {&ra.Name, &r.name}, {&ra.SubResource, &r.subresource}, {&ra.Verb, &r.verb}} {
			if *f.dst, ok = str(f.v); !ok {
				return Unknown, "the review's resource attributes are not known"
			}
		}
	} else {
		if req.Path == "" || req.Method == "" {
			return Unknown, "the review asks for the request's path and method, which are not known"
		}
		r.path, r.verb = req.Path, strings.ToLower(req.Method)
	}
	what := fmt.Sprintf("%s %s", r.verb, r.path)
	if r.resourceRequest {
		what = fmt.Sprintf("%s %s", r.verb, r.resource)
		if r.group != "" {
			what += "." + r.group
		}
		if r.namespace != "" {
			what += " in " + r.namespace
		}
	}
	if !env.hasRBAC {
		return Unknown, "a SubjectAccessReview for " + r.user + " to " + what + " is answered by the cluster's RBAC, and the input holds no Role, ClusterRole or binding: give them, or the answer in the request's decisions" + env.unreadNote("roles.rbac.authorization.k8s.io", "clusterroles.rbac.authorization.k8s.io", "rolebindings.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io")
	}
	if role, allowed := env.allows(r); allowed {
		return True, fmt.Sprintf("%s may %s (%s of the input)", r.user, what, role)
	}
	return False, fmt.Sprintf("no Role or ClusterRole of the input bound to %s (or its groups) allows %s (from files, Kubernetes' default roles are read only when given)", r.user, what)
}

// reviewGroups reads the groups of a review as Authorino does: the value stringified
// (pkg/json/json.go:159-169: a string as is, else its JSON; null is "") and decoded as a
// JSON list of strings, which fails for a missing value or another type
// (kubernetes_authz.go:118-128).
func reviewGroups(val any) ([]string, bool) {
	s, isString := val.(string)
	if !isString {
		b, err := json.Marshal(val)
		if err != nil {
			return nil, false
		}
		s = gjson.ParseBytes(b).String()
	}
	var groups []string
	if err := json.Unmarshal([]byte(s), &groups); err != nil {
		return nil, false
	}
	return groups, true
}
