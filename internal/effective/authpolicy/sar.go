package authpolicy

import (
	"encoding/json"
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
func subjectAccessReview(c *conditionEvaluator, req Request, env *Env, raw []byte) (Tri, Why) {
	var spec subjectAccessReviewSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return Unknown, Why{Code: WhyRuleSpecUnreadable, Err: err.Error()}
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
		return Unknown, Why{Code: WhySARUserUnknown}
	}
	if spec.AuthorizationGroups != nil {
		val, known, err := c.resolve(*spec.AuthorizationGroups)
		if err != nil || !known {
			return Unknown, Why{Code: WhySARGroupsUnknown}
		}
		groups, ok := reviewGroups(val)
		if !ok {
			return False, Why{Code: WhySARGroupsNotList}
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
				return Unknown, Why{Code: WhySARResourceUnknown}
			}
		}
	} else {
		if req.Path == "" || req.Method == "" {
			return Unknown, Why{Code: WhySARPathUnknown}
		}
		r.path, r.verb = req.Path, strings.ToLower(req.Method)
	}
	review := &Review{User: r.user, Verb: r.verb, Resource: r.resource, Group: r.group, Namespace: r.namespace, Path: r.path, ResourceRequest: r.resourceRequest}
	if !env.hasRBAC {
		return Unknown, Why{Code: WhySARNoRBAC, Review: review, Unread: env.unreadMessages("roles.rbac.authorization.k8s.io", "clusterroles.rbac.authorization.k8s.io", "rolebindings.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io")}
	}
	if role, group, allowed := env.allows(r); allowed {
		return True, Why{Code: WhySARAllowed, Review: review, RBACRole: role, RBACGroup: group}
	}
	return False, Why{Code: WhySARDenied, Review: review}
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
