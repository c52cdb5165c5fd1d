// Command kuadrant-oracle runs kuadrant-operator's and Authorino's own code on
// scenarios and prints what they decide, for agpol's differential tests
// (internal/testsupport/kuadrantdiff). It reads one JSON scenario per line on stdin and writes one
// JSON result per line on stdout. See README.md.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	envoyauth "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/go-logr/logr"
	authorinov1beta3 "github.com/kuadrant/authorino/api/v1beta3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	kuadrantv1 "github.com/kuadrant/kuadrant-operator/api/v1"
	controllers "github.com/kuadrant/kuadrant-operator/internal/controller"
	"github.com/kuadrant/kuadrant-operator/internal/wasm"
)

func main() {
	klog.SetLogger(logr.Discard())
	ctrllog.SetLogger(logr.Discard())
	api, err := newAPIServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ids, err := newStands()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for in.Scan() {
		var sc Scenario
		res := &Result{}
		if err := json.Unmarshal(in.Bytes(), &sc); err != nil {
			res.Error = "input: " + err.Error()
		} else {
			res = run(api, ids, &sc)
		}
		if err := enc.Encode(res); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := out.Flush(); err != nil {
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run reconciles a scenario twice (the second time with what the first wrote, as the
// cluster converges) and evaluates its requests.
func run(api *apiServer, ids *stands, sc *Scenario) (res *Result) {
	res = &Result{Name: sc.Name, Paths: []PathResult{}, Policies: []PolicyResult{}, Requests: []RequestResult{}}
	defer func() {
		if r := recover(); r != nil {
			res.Error = fmt.Sprintf("panic: %v", r)
		}
	}()
	w, err := decode(sc.Objects)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	first, err := reconcile(api, w.objs)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	objs2, err := converged(w.objs, first)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if os.Getenv("KUADRANT_ORACLE_DEBUG") != "" {
		for _, wr := range first.writes {
			b, _ := json.Marshal(wr.Object)
			fmt.Fprintf(os.Stderr, "write %s %s %s\n", wr.Verb, wr.Resource, b)
		}
	}
	second, err := reconcile(api, objs2)
	if err != nil {
		res.Error = err.Error()
		return res
	}

	// Conditions: the second round's status writes, else the first's (the status
	// updater skips a write when nothing changed).
	status := map[string][]Condition{}
	for _, r := range []*operatorRun{first, second} {
		for _, wr := range r.writes {
			if wr.Verb != "status" || wr.Resource != "authpolicies" || wr.Object == nil {
				continue
			}
			p := &kuadrantv1.AuthPolicy{}
			if err := fromUnstructured(wr.Object, p); err != nil {
				res.Error = err.Error()
				return res
			}
			var cs []Condition
			for _, c := range p.Status.Conditions {
				cs = append(cs, Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message})
			}
			status[p.Namespace+"/"+p.Name] = cs
		}
	}
	for _, o := range w.objs {
		if p, ok := o.(*kuadrantv1.AuthPolicy); ok {
			ref := p.Namespace + "/" + p.Name
			res.Policies = append(res.Policies, PolicyResult{Policy: ref, Conditions: status[ref]})
		}
	}
	sort.Slice(res.Policies, func(i, j int) bool { return res.Policies[i].Policy < res.Policies[j].Policy })

	// AuthConfigs: what the first round created (the second finds them in place).
	var acs []*authorinov1beta3.AuthConfig
	acByName := map[string]*authorinov1beta3.AuthConfig{}
	for _, wr := range first.writes {
		if wr.Verb == "create" && wr.Resource == "authconfigs" && wr.Object != nil {
			ac := &authorinov1beta3.AuthConfig{}
			if err := fromUnstructured(wr.Object, ac); err != nil {
				res.Error = err.Error()
				return res
			}
			acs = append(acs, ac)
			acByName[ac.Name] = ac
		}
	}
	wasmShim := newShim(first)
	predicatesOf := map[string][]string{} // AuthConfig name → auth action predicates
	for _, c := range wasmShim.configs {
		for _, as := range c.ActionSets {
			for _, a := range as.Actions {
				if a.ServiceName == wasm.AuthServiceName {
					predicatesOf[a.Scope] = a.Predicates
				}
			}
		}
	}
	for pathID, ep := range effective(second) {
		pr := PathResult{ID: pathID, Rules: map[string]string{}, Sources: []string{}}
		for k, r := range ep.Spec.Rules() {
			pr.Rules[k] = policyLocatorName(r.GetSource())
		}
		for _, s := range ep.SourcePolicies {
			pr.Sources = append(pr.Sources, policyLocatorName(s))
		}
		sort.Strings(pr.Sources)
		name := controllers.AuthConfigNameForPath(pathID)
		if ac := acByName[name]; ac != nil {
			pr.AuthConfig, pr.AuthConfigNamespace = name, ac.Namespace
			pr.Spec, _ = json.Marshal(ac.Spec)
			pr.Predicates = predicatesOf[name]
		}
		res.Paths = append(res.Paths, pr)
	}
	sort.Slice(res.Paths, func(i, j int) bool { return res.Paths[i].ID < res.Paths[j].ID })

	if len(sc.Requests) == 0 {
		return res
	}
	secrets := ids.withCA(w.secrets)
	sars, err := newSubjectAccessReviews(w.rbac)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	az := newAuthorino(acs, secrets, sars)
	pathOf := map[string]string{}
	for _, p := range res.Paths {
		if p.AuthConfig != "" {
			pathOf[p.AuthConfig] = p.ID
		}
	}
	for _, rq := range sc.Requests {
		res.Requests = append(res.Requests, decide(az, ids, wasmShim, pathOf, acByName, secrets, rq))
	}
	return res
}

// decide is what the data plane does with one request at the auth step.
func decide(az *authorino, ids *stands, shim *shim, pathOf map[string]string, acs map[string]*authorinov1beta3.AuthConfig, secrets []*corev1.Secret, rq Request) RequestResult {
	as, tied, err := shim.selectActionSet(rq.Gateway, rq)
	if err != nil {
		return RequestResult{Status: 200, Error: err.Error()}
	}
	if len(tied) == 0 {
		return act(az, ids, as, pathOf, acs, secrets, rq)
	}
	// Which of the tied paths' actions runs is not fixed: what each would do, by path.
	out := RequestResult{Status: 200}
	for _, t := range tied {
		out.Tied = append(out.Tied, act(az, ids, t, pathOf, acs, secrets, rq))
	}
	sort.Slice(out.Tied, func(i, j int) bool { return out.Tied[i].PathID < out.Tied[j].PathID })
	return out
}

// act runs the auth action of the action set as (none: Kuadrant does not act).
func act(az *authorino, ids *stands, as *wasm.ActionSet, pathOf map[string]string, acs map[string]*authorinov1beta3.AuthConfig, secrets []*corev1.Secret, rq Request) RequestResult {
	out := RequestResult{Status: 200}
	if as == nil {
		return out
	}
	out.ActionSet = as.Name
	for _, a := range as.Actions {
		if a.ServiceName != wasm.AuthServiceName {
			continue
		}
		out.AuthConfig, out.PathID = a.Scope, pathOf[a.Scope]
		ok, err := allHold(a.Predicates, rq)
		if err != nil {
			out.Error = err.Error()
			return out
		}
		if !ok {
			return out
		}
		out.AuthApplies = true
		if rq.Identity != nil {
			var why string
			if rq, why = ids.withCredentials(rq, acs[a.Scope], secrets); why != "" {
				out.Unsupported = why
				return out
			}
		}
		var resp *envoyauth.CheckResponse
		ids.withMetadata(rq.Metadata, func() { resp, err = az.check(a.Scope, rq) })
		if err != nil {
			out.Error = err.Error()
			return out
		}
		out.Code = int(resp.GetStatus().GetCode())
		if d := resp.GetDeniedResponse(); d != nil {
			out.Status = int(d.GetStatus().GetCode())
			for _, h := range d.GetHeaders() {
				if h.GetHeader().GetKey() == "x-ext-auth-reason" {
					out.Message = h.GetHeader().GetValue()
				}
			}
		}
		return out
	}
	return out
}
