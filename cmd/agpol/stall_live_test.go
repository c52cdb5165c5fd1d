package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// stallingProxy is a loopback proxy in front of the real API server: it forwards every
// request with the admin's credentials, except the lists of XAccessPolicies, which it
// stalls as mode says: "list" never answers the list, "page" asks for pages of one
// object and stalls the second page after half its body.
func stallingProxy(t *testing.T, cfg *rest.Config, mode string) *httptest.Server {
	t.Helper()
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	upstream, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stall := strings.HasSuffix(r.URL.Path, "/xaccesspolicies")
		q := r.URL.Query()
		if stall && mode == "list" {
			<-r.Context().Done() // never answered
			return
		}
		if stall && mode == "page" {
			q.Set("limit", "1")
		}
		out := r.Clone(r.Context())
		out.RequestURI = ""
		out.URL.Scheme, out.URL.Host, out.Host = upstream.Scheme, upstream.Host, upstream.Host
		out.URL.RawQuery = q.Encode()
		resp, err := rt.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		for k, v := range resp.Header {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(resp.StatusCode)
		if stall && mode == "page" && q.Get("continue") != "" {
			w.Write(body[:len(body)/2]) // half the second page, then nothing
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestLiveStalls: a server that stops answering (a list never answered, a second page
// stalling mid-body) without --request-timeout ends in the default deadline with an
// error naming the server and the stage (exit 2), and client-go's klog lines are not
// printed. The default deadline is shortened for the test; --request-timeout overrides it.
func TestLiveStalls(t *testing.T) {
	kubeconfig := startLintCluster(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { defaultLiveDeadline = d }(defaultLiveDeadline)
	defaultLiveDeadline = 3 * time.Second
	klogLine := regexp.MustCompile(`(?m)^[IWEF]\d{4} `)

	for _, tc := range []struct {
		mode, stage string
		args        []string
		within      string
	}{
		{"list", "listing xaccesspolicies.agentic.networking.x-k8s.io", nil, "no answer within 3s"},
		{"page", "listing xaccesspolicies.agentic.networking.x-k8s.io: page 2", nil, "no answer within 3s"},
		{"list", "listing xaccesspolicies.agentic.networking.x-k8s.io", []string{"--request-timeout", "2s"}, "no answer within 2s"},
	} {
		t.Run(tc.mode+strings.Join(tc.args, " "), func(t *testing.T) {
			proxy := stallingProxy(t, cfg, tc.mode)
			kc := plainKubeconfig(t, proxy.URL)
			for _, cmd := range [][]string{{"get", "xap", "-A"}, {"lint"}, {"can-i", "--list", "--from", "sa:agents/billing"}} {
				args := append(append(append([]string{}, cmd...), "--kubeconfig", kc), tc.args...)
				code, out, errOut := runGuarded(t, 45*time.Second, args...)
				if code != exitUsage || out != "" {
					t.Fatalf("%s: exit %d, want %d\nstdout %q\nstderr %s", cmd[0], code, exitUsage, out, errOut)
				}
				for _, want := range []string{proxy.URL, tc.stage, tc.within} {
					if !strings.Contains(errOut, want) {
						t.Errorf("%s: stderr lacks %q:\n%s", cmd[0], want, errOut)
					}
				}
				if klogLine.MatchString(errOut) || bytes.Contains([]byte(errOut), []byte("request.go")) {
					t.Errorf("%s: client-go log lines on stderr:\n%s", cmd[0], errOut)
				}
			}
		})
	}
	// klog writes to the process's stderr, not to run's streams: run agpol as a
	// process (the test binary, as the scripts run it) to see that nothing else is printed.
	t.Run("process stderr", func(t *testing.T) {
		bin, err := exec.LookPath("agpol")
		if err != nil {
			t.Fatal(err)
		}
		kc := plainKubeconfig(t, stallingProxy(t, cfg, "page").URL)
		var stderr bytes.Buffer
		cmd := exec.Command(bin, "get", "xap", "-A", "--kubeconfig", kc, "--request-timeout", "2s")
		cmd.Stderr = &stderr
		if err := cmd.Run(); err == nil {
			t.Fatal("exit 0 on a stalled read")
		}
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "error: reading the cluster ") || klogLine.MatchString(stderr.String()) {
			t.Errorf("stderr is not one error line:\n%s", stderr.String())
		}
	})
	// Through the proxy with nothing stalled, the read completes.
	kc := plainKubeconfig(t, stallingProxy(t, cfg, "none").URL)
	if code, out, errOut := runGuarded(t, 45*time.Second, "get", "xap", "-A", "--kubeconfig", kc); code != exitOK || !strings.Contains(out, "ledger-access") {
		t.Errorf("no stall: exit %d\n%s%s", code, out, errOut)
	}
}
