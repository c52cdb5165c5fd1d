//go:generate go run . -out ../../testdata/conformance

// Command conformance converts the Gateway API conformance suite (the module
// sigs.k8s.io/gateway-api/conformance at the version of sigs.k8s.io/gateway-api in
// go.mod) into agpol's routing corpus under testdata/conformance: the shared manifests
// (base.yaml), one directory per test with its manifests and the requests it makes with
// the backend or status every conformant implementation must give (cases.yaml), and
// index.yaml listing the tests converted and those left out, with why.
//
// The expectations are Go composite literals (http.ExpectedResponse) in each test's Test
// function; they are read with go/ast and go/types (identifiers resolved to their last
// assignment before the use), never by running the suite. See docs/routing.md.
//
//	go run ./hack/conformance            # the version in go.mod
//	go run ./hack/conformance -dir PATH  # a checkout of the conformance module
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// gatewayClass is the GatewayClass every converted manifest names: Istio's controller, a
// data plane that routes as Gateway API says (agpol's reference data plane departs from
// it, see internal/topology/match.go).
const (
	gatewayClass   = "agpol-conformance"
	controllerName = "istio.io/gateway-controller"
	// gatewayAddress stands for the Gateway's address, the host of a request that sets none.
	gatewayAddress = "192.0.2.1"
)

// keptKinds are the kinds of the suite's manifests that agpol reads; the others
// (Deployments, Secrets, ConfigMaps, …) are dropped from the corpus.
var keptKinds = map[string]bool{
	"Namespace": true, "Service": true, "Gateway": true, "GatewayClass": true,
	"HTTPRoute": true, "ReferenceGrant": true, "ListenerSet": true,
}

// leftOut are the tests converted only as far as agpol can answer them: each is left out,
// with why. A test of a route kind other than HTTPRoute, or with no request literal, is
// left out without being named here.
var leftOut = map[string]string{
	"HTTPRouteTimeoutRequest":                                    "expects 504 from a backend that answers late: timeouts are not modelled",
	"HTTPRouteTimeoutBackendRequest":                             "expects 504 from a backend that answers late: timeouts are not modelled",
	"HTTPRouteRetry":                                             "expects the status after retries of a failing backend: retries are not modelled",
	"HTTPRouteCORS":                                              "expects CORS preflight answers made by the data plane: CORS filters are not modelled",
	"HTTPRouteBackendProtocolH2C":                                "the request is HTTP/2 cleartext to the backend: backend protocols are not modelled",
	"GatewayFrontendClientCertificateValidation":                 "expects the TLS handshake's outcome with client certificates: not modelled on Istio",
	"GatewayFrontendClientCertificateValidationInsecureFallback": "expects the TLS handshake's outcome with client certificates: not modelled on Istio",
	"GatewayFrontendInvalidDefaultClientCertificateValidation":   "expects the TLS handshake's outcome with client certificates: not modelled on Istio",
	"GatewayTLSBackendClientCertificate":                         "expects the TLS connection to the backend (client certificate): BackendTLSPolicy is not modelled",
	"HTTPRouteHTTPSListenerDetectMisdirectedRequests":            "expects 421 for a TLS SNI that differs from the Host: SNI is not modelled",
	"HTTPRouteWeight":                                            "expects a traffic split measured over many requests: weights are reported, not sampled",
	"HTTPRouteRequestPercentageMirror":                           "expects a share of requests mirrored, measured over many requests: mirrors are not modelled",
	"HTTPRouteServiceTypes":                                      "routes to Services whose EndpointSlices the test creates at run time: endpoints are not modelled",
}

func main() {
	dir := flag.String("dir", "", "the conformance module's directory (default: downloaded at the version of sigs.k8s.io/gateway-api in go.mod)")
	out := flag.String("out", "testdata/conformance", "output directory")
	flag.Parse()
	if err := run(*dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

func run(dir, out string) error {
	version := ""
	if dir == "" {
		var err error
		if dir, version, err = download(); err != nil {
			return err
		}
	}
	consts, err := suiteConstants(filepath.Join(dir, "utils", "suite"))
	if err != nil {
		return err
	}
	tests, err := parseTests(filepath.Join(dir, "tests"), consts)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	base, err := manifests(filepath.Join(dir, "base", "manifests.yaml"))
	if err != nil {
		return err
	}
	base = append([]byte(fmt.Sprintf("apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata:\n  name: %s\nspec:\n  controllerName: %s\n---\n", gatewayClass, controllerName)), base...)
	if err := os.WriteFile(filepath.Join(out, "base.yaml"), append([]byte(header(version, "base/manifests.yaml")), base...), 0o644); err != nil {
		return err
	}
	idx := index{Version: version, GatewayClass: gatewayClass, ControllerName: controllerName}
	for _, t := range tests {
		if why, ok := leftOut[t.Name]; ok {
			idx.LeftOut = append(idx.LeftOut, entry{Test: t.Name, Source: t.Source, Why: why})
			continue
		}
		if why := t.skip; why != "" {
			idx.LeftOut = append(idx.LeftOut, entry{Test: t.Name, Source: t.Source, Why: strings.ReplaceAll(why, dir+"/", "")})
			continue
		}
		m := []byte{}
		for _, f := range t.Manifests {
			b, err := manifests(filepath.Join(dir, f))
			if err != nil {
				return fmt.Errorf("%s: %w", t.Source, err)
			}
			m = append(m, b...)
		}
		if err := setPorts(t, append(append([]byte{}, base...), m...)); err != nil {
			return fmt.Errorf("%s: %w", t.Source, err)
		}
		td := filepath.Join(out, t.Name)
		if err := os.MkdirAll(td, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(td, "manifests.yaml"), append([]byte(header(version, strings.Join(t.Manifests, ", "))), m...), 0o644); err != nil {
			return err
		}
		b, err := yaml.Marshal(caseFile{Test: t.Name, Source: t.Source, Cases: t.Cases})
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(td, "cases.yaml"), append([]byte(header(version, t.Source)), b...), 0o644); err != nil {
			return err
		}
		idx.Converted = append(idx.Converted, entry{Test: t.Name, Source: t.Source, Cases: len(t.Cases), LeftOut: t.dropped})
	}
	b, err := yaml.Marshal(idx)
	if err != nil {
		return err
	}
	fmt.Printf("conformance %s: %d tests converted, %d left out\n", version, len(idx.Converted), len(idx.LeftOut))
	return os.WriteFile(filepath.Join(out, "index.yaml"), append([]byte(header(version, "conformance/tests")), b...), 0o644)
}

func header(version, from string) string {
	return fmt.Sprintf("# Generated by hack/conformance from sigs.k8s.io/gateway-api/conformance %s %s. DO NOT EDIT.\n", version, from)
}

// download fetches the conformance module at the version of sigs.k8s.io/gateway-api in
// go.mod into the module cache and returns its directory.
func download() (string, string, error) {
	v, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		return "", "", fmt.Errorf("go list -m sigs.k8s.io/gateway-api: %w", err)
	}
	version := strings.TrimSpace(string(v))
	b, err := exec.Command("go", "mod", "download", "-json", "sigs.k8s.io/gateway-api/conformance@"+version).Output()
	if err != nil {
		return "", "", fmt.Errorf("go mod download sigs.k8s.io/gateway-api/conformance@%s: %w", version, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(b, &mod); err != nil {
		return "", "", err
	}
	if mod.Error != "" {
		return "", "", fmt.Errorf("go mod download: %s", mod.Error)
	}
	return mod.Dir, version, nil
}

// manifests reads a manifest file of the suite and keeps the documents of keptKinds,
// with the GatewayClass placeholder filled in.
func manifests(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	data = bytes.ReplaceAll(data, []byte("{GATEWAY_CLASS_NAME}"), []byte(gatewayClass))
	data = bytes.ReplaceAll(data, []byte("{GATEWAY_CONTROLLER_NAME}"), []byte(controllerName))
	var out []byte
	for _, doc := range splitDocuments(string(data)) {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if !keptKinds[meta.Kind] {
			continue
		}
		out = append(out, strings.TrimSpace(doc)...)
		out = append(out, "\n---\n"...)
	}
	return out, nil
}

func splitDocuments(s string) []string {
	var docs []string
	var cur []string
	for _, line := range strings.Split(s, "\n") {
		if strings.TrimRight(line, " ") == "---" {
			docs = append(docs, strings.Join(cur, "\n"))
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	docs = append(docs, strings.Join(cur, "\n"))
	var out []string
	for _, d := range docs {
		if strings.TrimSpace(stripComments(d)) != "" {
			out = append(out, d)
		}
	}
	return out
}

func stripComments(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

type index struct {
	Version        string  `json:"version"`
	GatewayClass   string  `json:"gatewayClass"`
	ControllerName string  `json:"controllerName"`
	Converted      []entry `json:"converted"`
	LeftOut        []entry `json:"leftOut"`
}

type entry struct {
	Test   string `json:"test"`
	Source string `json:"source"`
	Cases  int    `json:"cases,omitempty"`
	Why    string `json:"why,omitempty"`
	// LeftOut are requests of a converted test left out, with why.
	LeftOut []string `json:"leftOut,omitempty"`
}

type caseFile struct {
	Test   string  `json:"test"`
	Source string  `json:"source"`
	Cases  []*Case `json:"cases"`
}

// Case is one request of a conformance test and what it must get.
type Case struct {
	// Line is the line of the http.ExpectedResponse literal in Source.
	Line    int               `json:"line"`
	Gateway string            `json:"gateway"`
	Port    int               `json:"port"`
	Host    string            `json:"host"`
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers,omitempty"`
	Expect  Expect            `json:"expect"`

	targets []target // the gateway addresses the request may be sent to
}

// Expect is the answer a conformant implementation gives: the backend Service
// (namespace/name, or any backend when Backend is "*"), or a status without a backend
// (404: no route; 500: the rule's backends fail; 3xx: a redirect).
type Expect struct {
	Backend string `json:"backend,omitempty"`
	Status  int    `json:"status"`
}

// setPorts sets the port of each case that has none: the port of the listener its
// gateway address names, else of the gateway's first listener (conformance
// utils/kubernetes WaitForGatewayAddress).
func setPorts(t *test, manifests []byte) error {
	type listener struct {
		Name string
		Port int
	}
	ports := map[string][]listener{}
	for _, doc := range splitDocuments(string(manifests)) {
		var gw struct {
			Kind     string
			Metadata struct{ Name, Namespace string }
			Spec     struct{ Listeners []listener }
		}
		if err := yaml.Unmarshal([]byte(doc), &gw); err != nil {
			return err
		}
		if gw.Kind == "Gateway" {
			ports[gw.Metadata.Namespace+"/"+gw.Metadata.Name] = gw.Spec.Listeners
		}
	}
	portOf := func(tg target) (int, error) {
		ls := ports[tg.gateway]
		if len(ls) == 0 {
			return 0, fmt.Errorf("gateway %s has no listeners in the manifests", tg.gateway)
		}
		for _, l := range ls {
			if tg.listener != "" && l.Name == tg.listener {
				return l.Port, nil
			}
		}
		return ls[0].Port, nil
	}
	for _, c := range t.Cases {
		// The first address, or the one whose port the Host names when the test picks
		// among several by it.
		hostPort := 0
		if _, p, err := net.SplitHostPort(c.Host); err == nil {
			hostPort, _ = strconv.Atoi(p)
		}
		for i, tg := range c.targets {
			p, err := portOf(tg)
			if err != nil {
				return fmt.Errorf("line %d: %w", c.Line, err)
			}
			if i == 0 || p == hostPort {
				c.Port, c.Gateway = p, tg.gateway
			}
		}
	}
	return nil
}
