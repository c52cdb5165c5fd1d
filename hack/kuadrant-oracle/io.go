package main

import "encoding/json"

// Scenario is one input line: objects as a user writes them (YAML or JSON, typed by
// apiVersion/kind) and requests over them.
type Scenario struct {
	Name     string            `json:"name"`
	Objects  []json.RawMessage `json:"objects"`
	Requests []Request         `json:"requests,omitempty"`
}

// Request is one request through a Gateway, with what agpol's request files carry.
type Request struct {
	// Gateway ("ns/name") and Listener name where it enters.
	Gateway  string            `json:"gateway"`
	Listener string            `json:"listener,omitempty"`
	Method   string            `json:"method"`
	Host     string            `json:"host"`
	Path     string            `json:"path"` // may carry a query string
	Headers  map[string]string `json:"headers,omitempty"`
	// Identity, Metadata and Decisions are the shape of agpol's request files (issue
	// 33): what Authorino would have verified or fetched. The oracle turns them into
	// credentials its local identity sources accept.
	Identity  *Identity         `json:"identity,omitempty"`
	Metadata  map[string]any    `json:"metadata,omitempty"`
	Decisions map[string]string `json:"decisions,omitempty"`

	// clientCert is the URL-encoded PEM of the client certificate presented (x509).
	clientCert string
}

// Identity is what a request carries, as Authorino would have verified it.
type Identity struct {
	JWT *struct {
		Claims map[string]any `json:"claims"`
	} `json:"jwt,omitempty"`
	APIKey *struct {
		Secret string `json:"secret"` // NS/NAME
	} `json:"apiKey,omitempty"`
	Kubernetes *struct {
		Username  string   `json:"username"`
		Groups    []string `json:"groups,omitempty"`
		Audiences []string `json:"audiences,omitempty"`
	} `json:"kubernetes,omitempty"`
	X509 *struct {
		Subject struct {
			CommonName   string   `json:"commonName"`
			Organization []string `json:"organization,omitempty"`
		} `json:"subject"`
	} `json:"x509,omitempty"`
	Rule string `json:"rule,omitempty"`
}

// Result is one output line.
type Result struct {
	Name  string `json:"name"`
	Error string `json:"error,omitempty"`
	// Paths are the effective AuthPolicies per full path (kuadrant-operator's path ID).
	Paths []PathResult `json:"paths"`
	// Policies are the conditions kuadrant-operator writes, once converged.
	Policies []PolicyResult  `json:"policies"`
	Requests []RequestResult `json:"requests"`
}

// PathResult is the effective policy of one path.
type PathResult struct {
	ID string `json:"id"`
	// Rules maps each effective rule key to its source policy ("ns/name").
	Rules map[string]string `json:"rules"`
	// Sources are the policies kuadrant-operator lists for the path.
	Sources []string `json:"sources"`
	// AuthConfig is the name of the AuthConfig written for the path, and Spec its spec
	// (absent when none was written).
	AuthConfig          string          `json:"authConfig,omitempty"`
	AuthConfigNamespace string          `json:"authConfigNamespace,omitempty"`
	Spec                json.RawMessage `json:"spec,omitempty"`
	// Predicates are the top-level `when` predicates written in the wasm action.
	Predicates []string `json:"predicates,omitempty"`
}

// PolicyResult is the status of one AuthPolicy.
type PolicyResult struct {
	Policy     string      `json:"policy"`
	Conditions []Condition `json:"conditions"`
}

// Condition is a status condition.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// RequestResult is what the data plane does with one request.
type RequestResult struct {
	// ActionSet is the wasm-shim action set the request selects (the route rule's
	// path ID is in PathID), empty when none (then Kuadrant does not act) or when
	// the choice is not fixed (Tied).
	ActionSet string `json:"actionSet,omitempty"`
	PathID    string `json:"pathID,omitempty"`
	// AuthApplies: the selected action set has an auth action whose predicates hold.
	AuthApplies bool `json:"authApplies"`
	// AuthConfig that Authorino evaluated (the auth action's scope).
	AuthConfig string `json:"authConfig,omitempty"`
	// Status is the HTTP status the client gets from the auth step: 200 when allowed.
	Status int `json:"status"`
	// Code is Authorino's gRPC code (0 OK, 7 PERMISSION_DENIED, 16 UNAUTHENTICATED).
	Code int `json:"code"`
	// Message is Authorino's denial message (x-ext-auth-reason).
	Message string `json:"message,omitempty"`
	// Unsupported says why the oracle could not decide (an identity kind it does not
	// stand in for yet).
	Unsupported string `json:"unsupported,omitempty"`
	// Tied, when set, is what the data plane does with each path whose action set
	// ties for the request under kuadrant-operator's order
	// (SortableHTTPRouteMatchConfigs.Less) and whose predicates hold, by path: which
	// one the wasm-shim runs is not fixed (the operator sorts them with the unstable
	// sort.Sort over input in map order). The other fields are then empty.
	Tied  []RequestResult `json:"tied,omitempty"`
	Error string          `json:"error,omitempty"`
}
