package main

import (
	"context"
	"fmt"
	"net/url"
	"time"

	envoycore "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	envoyauth "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/go-logr/logr"
	authorinov1beta3 "github.com/kuadrant/authorino/api/v1beta3"
	authorinocontrollers "github.com/kuadrant/authorino/controllers"
	"github.com/kuadrant/authorino/pkg/index"
	authorinolog "github.com/kuadrant/authorino/pkg/log"
	"github.com/kuadrant/authorino/pkg/service"
	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func init() {
	authorinolog.SetLogger(logr.Discard(), authorinolog.Options{})
}

var authorinoScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = authorinov1beta3.AddToScheme(s)
	_ = corev1.AddToScheme(s)
	_ = authv1.AddToScheme(s)
	return s
}()

// authorino is Authorino's own reconciler and auth service over the AuthConfigs
// kuadrant-operator wrote and the scenario's Secrets.
type authorino struct {
	svc *service.AuthService
	// errs are the AuthConfigs Authorino could not translate, by name.
	errs map[string]string
}

func newAuthorino(acs []*authorinov1beta3.AuthConfig, secrets []*corev1.Secret, sars *subjectAccessReviews) *authorino {
	// TokenReviews go to the stand-in, SubjectAccessReviews to Kubernetes' RBAC
	// (identity.go, sar.go); the rest to the fake client.
	var c client.WithWatch
	var objs []client.Object
	for _, ac := range acs {
		objs = append(objs, ac.DeepCopy())
	}
	for _, s := range secrets {
		objs = append(objs, s.DeepCopy())
	}
	c = kubeReviews(fake.NewClientBuilder().WithScheme(authorinoScheme).WithObjects(objs...).WithStatusSubresource(&authorinov1beta3.AuthConfig{}).Build(), sars)
	idx := index.NewIndex()
	r := &authorinocontrollers.AuthConfigReconciler{
		Client:       c,
		NewClient:    func() (client.Client, error) { return c, nil },
		Logger:       logr.Discard(),
		Index:        idx,
		StatusReport: authorinocontrollers.NewStatusReportMap(),
	}
	a := &authorino{svc: service.NewAuthService(idx, 5*time.Second, 8192), errs: map[string]string{}}
	for _, ac := range acs {
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ac.Namespace, Name: ac.Name}}); err != nil {
			a.errs[ac.Name] = err.Error()
		}
	}
	return a
}

// check asks Authorino what the wasm-shim asks it: the request's attributes, with the
// AuthConfig chosen by the `host` context extension (the auth action's scope).
func (a *authorino) check(authConfig string, rq Request) (*envoyauth.CheckResponse, error) {
	headers := map[string]string{}
	for k, v := range rq.Headers {
		headers[lower(k)] = v
	}
	u, _ := url.Parse(rq.Path)
	path := rq.Path
	_ = u
	req := &envoyauth.CheckRequest{Attributes: &envoyauth.AttributeContext{
		Request: &envoyauth.AttributeContext_Request{Http: &envoyauth.AttributeContext_HttpRequest{
			Method: rq.Method, Host: rq.Host, Path: path, Headers: headers, Scheme: "http", Protocol: "HTTP/1.1",
		}},
		Source:            &envoyauth.AttributeContext_Peer{Address: &envoycore.Address{}, Certificate: rq.clientCert},
		Destination:       &envoyauth.AttributeContext_Peer{Address: &envoycore.Address{}},
		ContextExtensions: map[string]string{"host": authConfig},
	}}
	resp, err := a.svc.Check(context.Background(), req)
	if err != nil {
		return nil, fmt.Errorf("authorino check: %w", err)
	}
	return resp, nil
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}
