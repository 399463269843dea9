package launcher

import (
	"crypto/tls"

	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The metrics endpoint says which groups were replayed, how often and how
// it ended: not for anyone who can reach the pod. Served securely, it is
// HTTPS, and every scrape's bearer token is checked with the API server
// (a TokenReview) and authorised for GET /metrics (a SubjectAccessReview),
// so a scraper needs a ClusterRole with nonResourceURLs [/metrics], verbs
// [get] (the chart's <release>-metrics-reader).

// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// MetricsServerOptions is the metrics endpoint at addr ("0" disables it).
// secure serves HTTPS with authentication and authorisation; the
// certificate is certDir's tls.crt and tls.key, or, with certDir empty, one
// controller-runtime generates, self-signed, at start.
func MetricsServerOptions(addr string, secure bool, certDir string) metricsserver.Options {
	opts := metricsserver.Options{BindAddress: addr}
	if !secure {
		return opts
	}
	opts.SecureServing = true
	opts.CertDir = certDir
	opts.FilterProvider = filters.WithAuthenticationAndAuthorization
	// HTTP/1.1 only: HTTP/2's stream resets let one client keep the
	// server busy (CVE-2023-44487, CVE-2023-39325), and a scrape needs
	// nothing HTTP/2 offers.
	opts.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	return opts
}
