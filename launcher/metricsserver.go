package launcher

import (
	"context"
	"crypto/tls"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
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
	opts.FilterProvider = metricsAuth
	// HTTP/1.1 only: HTTP/2's stream resets let one client keep the
	// server busy (CVE-2023-44487, CVE-2023-39325), and a scrape needs
	// nothing HTTP/2 offers.
	opts.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	return opts
}

// metricsAuth lets a scrape through only when the API server authenticates
// its bearer token (a TokenReview) and authorises that user for the
// request's verb on its path (a SubjectAccessReview of a non-resource URL).
// It is written against client-go's typed clients rather than taken from
// controller-runtime's metrics filters, which link k8s.io/apiserver (and
// with it OpenTelemetry, gRPC and CEL) into the launcher: about a fifth of
// its binary and of its resident memory, for two API calls. Nothing is
// cached: a scrape every few seconds costs two small requests, which the
// API server's priority and fairness bounds.
func metricsAuth(c *rest.Config, hc *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationclient.NewForConfigAndClient(c, hc)
	if err != nil {
		return nil, err
	}
	authz, err := authorizationclient.NewForConfigAndClient(c, hc)
	if err != nil {
		return nil, err
	}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			ctx, cancel := context.WithTimeout(req.Context(), 10*time.Second)
			defer cancel()
			token, ok := bearerToken(req.Header.Get("Authorization"))
			if !ok {
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			tr, err := authn.TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
			if err != nil {
				log.Error(err, "metrics: token review failed")
				http.Error(w, "Authentication failed", http.StatusInternalServerError)
				return
			}
			if !tr.Status.Authenticated {
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			u := tr.Status.User
			extra := make(map[string]authorizationv1.ExtraValue, len(u.Extra))
			for k, v := range u.Extra {
				extra[k] = authorizationv1.ExtraValue(v)
			}
			sar, err := authz.SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
				NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: req.URL.Path, Verb: strings.ToLower(req.Method)},
			}}, metav1.CreateOptions{})
			if err != nil {
				log.Error(err, "metrics: access review failed", "user", u.Username)
				http.Error(w, "Authorization failed", http.StatusInternalServerError)
				return
			}
			if !sar.Status.Allowed || sar.Status.Denied {
				http.Error(w, "Forbidden: "+u.Username+" may not "+strings.ToLower(req.Method)+" "+req.URL.Path, http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, req)
		}), nil
	}, nil
}

// bearerToken is the token of an "Authorization: Bearer <token>" header
// (the scheme in any case), if it has one.
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}
