package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// write is one write kuadrant-operator sent to the API server.
type write struct {
	Verb     string // create, update, status, patch, delete
	Resource string // plural resource name
	Object   *unstructured.Unstructured
}

// apiServer is an httptest server standing in for the Kubernetes API: it records every
// write and answers it with the object written (what the API server answers on
// success); reads answer 404 (the workflow reads its state from the topology, not
// from the API).
type apiServer struct {
	srv    *httptest.Server
	client *dynamic.DynamicClient

	mu     sync.Mutex
	writes []write
}

func newAPIServer() (*apiServer, error) {
	a := &apiServer{}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	c, err := dynamic.NewForConfig(&rest.Config{Host: a.srv.URL, QPS: 1e6, Burst: 1e6})
	if err != nil {
		return nil, err
	}
	a.client = c
	return a, nil
}

func (a *apiServer) reset() []write {
	a.mu.Lock()
	defer a.mu.Unlock()
	w := a.writes
	a.writes = nil
	return w
}

func (a *apiServer) serve(w http.ResponseWriter, r *http.Request) {
	// /apis/GROUP/VERSION/namespaces/NS/RESOURCE[/NAME[/status]]
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	resource := ""
	for i, p := range parts {
		if p == "namespaces" && i+2 < len(parts) {
			resource = parts[i+2]
		}
	}
	w.Header().Set("Content-Type", "application/json")
	verb := ""
	switch r.Method {
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
		if strings.HasSuffix(r.URL.Path, "/status") {
			verb = "status"
		}
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		a.mu.Lock()
		a.writes = append(a.writes, write{Verb: "delete", Resource: resource})
		a.mu.Unlock()
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
		return
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(body, &u.Object); err != nil || u.GetKind() == "" {
		// A patch that is not a whole object: recorded without an object.
		a.mu.Lock()
		a.writes = append(a.writes, write{Verb: verb, Resource: resource})
		a.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{}`))
		return
	}
	a.mu.Lock()
	a.writes = append(a.writes, write{Verb: verb, Resource: resource, Object: u})
	a.mu.Unlock()
	if verb == "create" {
		w.WriteHeader(http.StatusCreated)
	}
	_, _ = w.Write(body)
}
