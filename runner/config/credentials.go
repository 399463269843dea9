package config

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Credentials are bound to their cluster. Whoever may start a run (for a
// ReplayRequest, whoever may create one) chooses the bootstrap servers and
// the config directory, but not what the secret directory holds: that is
// the Secret's owner's. Without a binding, a request could name any Secret
// it may reference and send its password (or OAuth client secret) to a
// broker, or a token endpoint, of its own. So:
//
//   - the secret directory says which servers its credentials are for, in
//     its own bootstrap.servers (bindingProperty), read from there only;
//   - the runner's bootstrap servers must all be among them, or the run
//     ends before any connection is opened (ErrCredentialsNotBound);
//   - the config directory may not set, beside a Secret, any property that
//     decides where or how the credentials are presented (protectedProperty),
//     nor any property the Secret sets.
//
// An operator may allow unbound Secrets (FlagAllowUnboundSecret, never set
// from a request): a Secret without a binding is then used with any
// servers and the config directory may set the protected properties. A
// Secret that has a binding is always held to it.

// bindingProperty is the secret directory's binding: the servers its
// credentials may be presented to, in the runner's bootstrap list syntax.
const bindingProperty = "bootstrap.servers"

// ErrCredentialsNotBound marks a run refused because its credentials would
// go to servers their Secret does not name, or could be redirected by the
// config directory. It is invalid input (exit 2); the result's reason is
// report.ReasonCredentialsNotBound.
var ErrCredentialsNotBound = errors.New("credentials not bound to these servers")

// protectedExact and protectedPrefixes are the properties that decide where
// and how credentials are presented: the security protocol (SASL_PLAINTEXT
// sends a password in clear), every SASL setting (the mechanism, the OAuth
// token endpoint that receives the client secret, the JWT assertion, the
// Azure IMDS metadata authentication that fetches the node's own identity),
// every TLS setting (a CA of the attacker's choosing, no hostname check),
// the HTTPS trust of the OAuth endpoint, and the name resolution that
// decides which name a certificate is checked against. librdkafka's
// CONFIGURATION.md lists them; prefixes cover properties added later.
var (
	protectedExact = map[string]bool{
		"security.protocol":                    true,
		"enable.ssl.certificate.verification":  true,
		"enable.sasl.oauthbearer.unsecure.jwt": true,
		"client.dns.lookup":                    true,
	}
	protectedPrefixes = []string{"sasl.", "ssl.", "ssl_", "https."}
)

// protectedProperty reports whether a config directory may not set a
// property beside a bound Secret.
func protectedProperty(name string) bool {
	if protectedExact[name] {
		return true
	}
	for _, p := range protectedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// ProtectedProperties describes the protected properties, for docs and
// help: the exact names, then the prefixes with a trailing '*'.
func ProtectedProperties() []string {
	out := make([]string, 0, len(protectedExact)+len(protectedPrefixes))
	for n := range protectedExact {
		out = append(out, n)
	}
	sort.Strings(out)
	for _, p := range protectedPrefixes {
		out = append(out, p+"*")
	}
	return out
}

// serverList splits a bootstrap list into its entries as compared by a
// binding: trimmed and lowercased (host names are case-insensitive). A
// protocol prefix (SASL_SSL://host:9093) is part of the entry: librdkafka
// connects to such a server with that protocol.
func serverList(s string) []string {
	var out []string
	for _, hp := range strings.Split(s, ",") {
		if hp = strings.ToLower(strings.TrimSpace(hp)); hp != "" {
			out = append(out, hp)
		}
	}
	return out
}

// unboundServers returns the servers of requested that binding does not
// name, in requested's order.
func unboundServers(requested, binding string) []string {
	bound := map[string]bool{}
	for _, s := range serverList(binding) {
		bound[s] = true
	}
	var out []string
	for _, s := range serverList(requested) {
		if !bound[s] {
			out = append(out, s)
		}
	}
	return out
}

// mergeCredentials checks the secret directory's binding and what the
// config directory sets beside it, and returns the properties the client
// is configured with: both directories' together, without the binding.
// haveSecret says whether a secret directory was given at all; a secret
// directory that could not be read is passed as nil, and only what can be
// decided without it is checked.
func mergeCredentials(bootstrap string, cfg, secret Properties, haveSecret, allowUnbound bool) (Properties, Errors) {
	var errs Errors
	// The config directory's own bootstrap.servers only restricts: it can
	// narrow where the run goes, never bind a Secret.
	if only, set := cfg[bindingProperty]; set {
		if err := ValidateBootstrapServers(only); err != nil {
			errs = append(errs, &FieldError{Flag: FlagKafkaConfigDir, Env: EnvKafkaConfigDir,
				Msg: fmt.Sprintf("its %s, the servers its properties are for, is invalid: %v", bindingProperty, err)})
		} else if ValidateBootstrapServers(bootstrap) == nil {
			if out := unboundServers(bootstrap, only); len(out) > 0 {
				errs = append(errs, &FieldError{Flag: FlagBootstrapServers, Env: EnvBootstrapServers, Cause: ErrCredentialsNotBound,
					Msg: fmt.Sprintf("%s not among the servers %s is for (its %s); nothing was contacted",
						quoteList(out), Ref(FlagKafkaConfigDir), bindingProperty)})
			}
		}
	}
	if !haveSecret {
		return without(cfg, bindingProperty), errs
	}
	binding, bound := secret[bindingProperty]
	switch {
	case secret == nil:
		// Unreadable: its own error says so.
	case bound:
		if err := ValidateBootstrapServers(binding); err != nil {
			errs = append(errs, &FieldError{Flag: FlagKafkaSecretDir, Env: EnvKafkaSecretDir,
				Msg: fmt.Sprintf("its %s, the servers its credentials are for, is invalid: %v", bindingProperty, err)})
		} else if ValidateBootstrapServers(bootstrap) == nil {
			// The binding's own list is not repeated: a request's creator
			// need not be able to read the Secret.
			if out := unboundServers(bootstrap, binding); len(out) > 0 {
				errs = append(errs, &FieldError{Flag: FlagBootstrapServers, Env: EnvBootstrapServers, Cause: ErrCredentialsNotBound,
					Msg: fmt.Sprintf("%s not among the servers the credentials of %s are bound to (the %s of its Secret); nothing was contacted",
						quoteList(out), Ref(RefCredentials), bindingProperty)})
			}
		}
	case !allowUnbound:
		errs = append(errs, &FieldError{Flag: FlagKafkaSecretDir, Env: EnvKafkaSecretDir, Cause: ErrCredentialsNotBound,
			Msg: fmt.Sprintf("the credentials are not bound to any servers: their Secret must say which servers they are for in its %s key (an operator can allow unbound Secrets with %s); nothing was contacted",
				bindingProperty, Ref(FlagAllowUnboundSecret))})
	}
	var overrides, redirects []string
	for _, n := range cfg.Names() {
		switch {
		case n == bindingProperty:
			// Checked above; it restricts, and does not present anything.
		case protectedProperty(n) && (bound || !allowUnbound):
			redirects = append(redirects, n)
		case hasKey(secret, n):
			overrides = append(overrides, n)
		}
	}
	if len(redirects) > 0 {
		errs = append(errs, &FieldError{Flag: FlagKafkaConfigDir, Env: EnvKafkaConfigDir, Cause: ErrCredentialsNotBound,
			Msg: fmt.Sprintf("must not set %s beside the credentials of %s: security, SASL, TLS and OAuth settings belong in their Secret",
				strings.Join(redirects, ", "), Ref(RefCredentials))})
	}
	if len(overrides) > 0 {
		errs = append(errs, &FieldError{Flag: FlagKafkaConfigDir, Env: EnvKafkaConfigDir,
			Msg: fmt.Sprintf("sets %s, which the Secret of %s sets too; set each property in one place",
				strings.Join(overrides, ", "), Ref(RefCredentials))})
	}
	merged := without(cfg, bindingProperty)
	for n, v := range without(secret, bindingProperty) {
		merged[n] = v
	}
	return merged, errs
}

// without is a copy of p without the property n.
func without(p Properties, n string) Properties {
	out := Properties{}
	for k, v := range p {
		if k != n {
			out[k] = v
		}
	}
	return out
}

func hasKey(p Properties, n string) bool {
	_, ok := p[n]
	return ok
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	if len(q) == 1 {
		return q[0] + " is"
	}
	return strings.Join(q, ", ") + " are"
}
