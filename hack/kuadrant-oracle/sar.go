package main

import (
	"context"
	"fmt"

	authzv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/authorization/union"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
	authorizationapi "k8s.io/kubernetes/pkg/apis/authorization"
	authorizationinstall "k8s.io/kubernetes/pkg/apis/authorization/install"
	"k8s.io/kubernetes/pkg/registry/authorization/subjectaccessreview"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"
)

// sarScheme converts authorization.k8s.io/v1 SubjectAccessReviews to the API
// server's internal type, as its REST handler receives them.
var sarScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	authorizationinstall.Install(s)
	return s
}()

// rbacObject decodes a Role, ClusterRole, RoleBinding or ClusterRoleBinding.
func rbacObject(u *unstructured.Unstructured) (runtime.Object, error) {
	var o runtime.Object
	switch u.GetKind() {
	case "Role":
		o = &rbacv1.Role{}
	case "ClusterRole":
		o = &rbacv1.ClusterRole{}
	case "RoleBinding":
		o = &rbacv1.RoleBinding{}
	default:
		o = &rbacv1.ClusterRoleBinding{}
	}
	return o, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, o)
}

// subjectAccessReviews answers SubjectAccessReviews as a kube-apiserver whose
// authorizers are the system:masters group and RBAC, over the scenario's Roles,
// ClusterRoles and bindings only (no bootstrap roles: agpol reads files so). It is
// Kubernetes' own code, not agpol's: the REST handler of subjectaccessreviews
// (k8s.io/kubernetes v1.37.2 pkg/registry/authorization/subjectaccessreview/rest.go:
// validation, AuthorizationAttributesFrom, Authorize), the union of the privileged
// group and the RBAC authorizer the API server builds (pkg/kubeapiserver/authorizer/
// reload.go:110-115), and plugin/pkg/auth/authorizer/rbac over listers of the objects.
type subjectAccessReviews struct {
	rest *subjectaccessreview.REST
}

func newSubjectAccessReviews(objs []runtime.Object) (*subjectAccessReviews, error) {
	idx := func() cache.Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	roles, clusterRoles, bindings, clusterBindings := idx(), idx(), idx(), idx()
	for _, o := range objs {
		var err error
		switch o.(type) {
		case *rbacv1.Role:
			err = roles.Add(o)
		case *rbacv1.ClusterRole:
			err = clusterRoles.Add(o)
		case *rbacv1.RoleBinding:
			err = bindings.Add(o)
		case *rbacv1.ClusterRoleBinding:
			err = clusterBindings.Add(o)
		}
		if err != nil {
			return nil, err
		}
	}
	authz := rbac.New(
		&rbac.RoleGetter{Lister: rbaclisters.NewRoleLister(roles)},
		&rbac.RoleBindingLister{Lister: rbaclisters.NewRoleBindingLister(bindings)},
		&rbac.ClusterRoleGetter{Lister: rbaclisters.NewClusterRoleLister(clusterRoles)},
		&rbac.ClusterRoleBindingLister{Lister: rbaclisters.NewClusterRoleBindingLister(clusterBindings)},
	)
	all, err := union.New(
		union.NamedAuthorizer{AuthorizerName: "kubernetes.io/system-privileged-group", Authorizer: authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)},
		union.NamedAuthorizer{AuthorizerName: "rbac", Authorizer: authz},
	)
	if err != nil {
		return nil, err
	}
	return &subjectAccessReviews{rest: subjectaccessreview.NewREST(all, sarScheme)}, nil
}

// create answers the review Authorino sends (its status filled in), or the API
// server's error (an invalid review: no user and no groups).
func (s *subjectAccessReviews) create(ctx context.Context, sar *authzv1.SubjectAccessReview) error {
	in := &authorizationapi.SubjectAccessReview{}
	if err := sarScheme.Convert(sar, in, nil); err != nil {
		return err
	}
	// What the API server's request filters put in the context of a create of
	// authorization.k8s.io/v1 subjectaccessreviews (declarative validation reads it).
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{IsResourceRequest: true, Verb: "create",
		APIPrefix: "apis", APIGroup: "authorization.k8s.io", APIVersion: "v1", Resource: "subjectaccessreviews"})
	out, err := s.rest.Create(ctx, in, nil, nil)
	if err != nil {
		return err
	}
	res, ok := out.(*authorizationapi.SubjectAccessReview)
	if !ok {
		return fmt.Errorf("subjectaccessreview: unexpected %T", out)
	}
	return sarScheme.Convert(&res.Status, &sar.Status, nil)
}
