//lint:file-ignore SA1019 the evaluator reads every field the translator may write, deprecated Envoy fields included

package differential

import (
	"fmt"
	"strings"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	envoyproxytypes "github.com/envoyproxy/go-control-plane/pkg/cache/types"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// The names Envoy uses for the dynamic metadata the RBAC filter writes and for the
// MCP filter's namespace.
const (
	rbacMetadataNamespace = "envoy.filters.http.rbac"
	mcpMetadataNamespace  = "mcp_proxy"
	shadowPolicyIDKey     = "shadow_effective_policy_id"
)

// EnvoyConfig is the part of one gateway's xDS resources a request meets: listeners
// by port (filter chains with their HTTP filters) and route configurations by name.
type EnvoyConfig struct {
	Listeners map[uint32][]*chain
	Routes    map[string]*routev3.RouteConfiguration
}

type chain struct {
	serverNames []string
	tls         bool
	// requireClientCert is the downstream TLS context's RequireClientCertificate;
	// spiffeBundle says the client certificate is validated by the SPIFFE trust bundle
	// (an SDS secret read from a file), not a CA the Gateway names (an ADS secret).
	requireClientCert, spiffeBundle bool
	routeName                       string
	filters                         []httpFilter
}

type filterKind int

const (
	filterOther filterKind = iota
	filterRBAC
	filterExtAuthz
	filterRouter
)

type httpFilter struct {
	name     string
	kind     filterKind
	rbac     *rbacv3.RBAC
	extAuthz *extauthzv3.ExtAuthz
}

func newEnvoyConfig(res map[resourcev3.Type][]envoyproxytypes.Resource) (*EnvoyConfig, error) {
	cfg := &EnvoyConfig{Listeners: map[uint32][]*chain{}, Routes: map[string]*routev3.RouteConfiguration{}}
	for _, r := range res[resourcev3.RouteType] {
		rc := r.(*routev3.RouteConfiguration)
		cfg.Routes[rc.GetName()] = rc
	}
	for _, r := range res[resourcev3.ListenerType] {
		l := r.(*listenerv3.Listener)
		port := l.GetAddress().GetSocketAddress().GetPortValue()
		for _, fc := range l.GetFilterChains() {
			c := &chain{serverNames: fc.GetFilterChainMatch().GetServerNames(), tls: fc.GetTransportSocket() != nil}
			if ts := fc.GetTransportSocket(); ts != nil {
				dt := &tlsv3.DownstreamTlsContext{}
				if err := ts.GetTypedConfig().UnmarshalTo(dt); err != nil {
					return nil, fmt.Errorf("listener %s: transport socket is not a downstream TLS context: %w", l.GetName(), err)
				}
				c.requireClientCert = dt.GetRequireClientCertificate().GetValue()
				c.spiffeBundle = dt.GetCommonTlsContext().GetValidationContextSdsSecretConfig().GetSdsConfig().GetPathConfigSource() != nil
			}
			for _, f := range fc.GetFilters() {
				hcm := &hcmv3.HttpConnectionManager{}
				if err := f.GetTypedConfig().UnmarshalTo(hcm); err != nil {
					return nil, fmt.Errorf("listener %s: filter %s is not an HTTP connection manager: %w", l.GetName(), f.GetName(), err)
				}
				c.routeName = hcm.GetRds().GetRouteConfigName()
				for _, hf := range hcm.GetHttpFilters() {
					pf, err := parseHTTPFilter(hf)
					if err != nil {
						return nil, err
					}
					c.filters = append(c.filters, pf)
				}
			}
			cfg.Listeners[port] = append(cfg.Listeners[port], c)
		}
	}
	return cfg, nil
}

func parseHTTPFilter(hf *hcmv3.HttpFilter) (httpFilter, error) {
	f := httpFilter{name: hf.GetName()}
	tc := hf.GetTypedConfig()
	switch {
	case tc.MessageIs(&rbacv3.RBAC{}):
		f.kind, f.rbac = filterRBAC, &rbacv3.RBAC{}
		if err := tc.UnmarshalTo(f.rbac); err != nil {
			return f, err
		}
	case tc.MessageIs(&extauthzv3.ExtAuthz{}):
		f.kind, f.extAuthz = filterExtAuthz, &extauthzv3.ExtAuthz{}
		if err := tc.UnmarshalTo(f.extAuthz); err != nil {
			return f, err
		}
	case strings.HasSuffix(tc.GetTypeUrl(), "envoy.extensions.filters.http.router.v3.Router"):
		f.kind = filterRouter
	}
	return f, nil
}
