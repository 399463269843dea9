package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// A secret directory can be put together from two sources: Secrets, whose
// keys only their owner may change, and properties its starter chose (the
// launcher puts a clusterRef's resolved properties there through pod
// annotations and the downward API, and anyone who may patch the pod's
// annotations could change them before the kubelet writes them). Those
// chosen properties decide how the credentials are presented
// (security.protocol, sasl.mechanism) and where (bootstrap.servers, the
// binding), so their starter vouches for them with a digest
// (FlagPropertiesDigest) and the runner refuses any other value. The
// digest covers every property of the directory except the Secret-held
// ones, whose values the starter never sees: so a property added, removed
// or changed outside them is refused too.

// secretHeldProperties hold certificates, keys and passwords: read from a
// Secret's keys, never vouched for by a digest (PropertiesDigestOf).
var secretHeldProperties = map[string]bool{
	"ssl.ca.pem":                     true,
	"ssl.certificate.pem":            true,
	"ssl.key.pem":                    true,
	"ssl.key.password":               true,
	"sasl.password":                  true,
	"sasl.oauthbearer.client.secret": true,
}

// SecretHeldProperty reports whether a property's value comes from a
// Secret and is left out of PropertiesDigestOf.
func SecretHeldProperty(name string) bool { return secretHeldProperties[name] }

// PropertiesDigestOf is the FlagPropertiesDigest of a secret directory's
// properties: sha256 of the JSON list of [name, value] pairs, sorted by
// name, of all but the Secret-held properties (SecretHeldProperty).
func PropertiesDigestOf(p Properties) string {
	pairs := make([][2]string, 0, len(p))
	for _, n := range p.Names() {
		if !secretHeldProperties[n] {
			pairs = append(pairs, [2]string{n, p[n]})
		}
	}
	b, err := json.Marshal(pairs)
	if err != nil {
		panic(err) // strings always marshal
	}
	sum := sha256.Sum256(b)
	return FileDigestPrefix + hex.EncodeToString(sum[:])
}

// checkPropertiesDigest refuses a secret directory whose properties are not
// those digest vouches for: ErrCredentialsNotBound (exit 2), before
// anything is contacted. secret is nil when the directory could not be
// read (its own error says so); haveSecret whether one was given at all.
func checkPropertiesDigest(digest string, secret Properties, haveSecret bool) *FieldError {
	refuse := func(cause error, format string, a ...any) *FieldError {
		return &FieldError{Flag: FlagPropertiesDigest, Env: EnvPropertiesDigest, Cause: cause, Msg: fmt.Sprintf(format, a...)}
	}
	switch {
	case digest == "":
	case !fileDigestPattern.MatchString(digest):
		return refuse(nil, "%q is not %s<64 lowercase hex digits>", digest, FileDigestPrefix)
	case !haveSecret:
		return refuse(nil, "vouches for the properties of %s, which is not given", Ref(FlagKafkaSecretDir))
	case secret == nil:
	case PropertiesDigestOf(secret) != digest:
		// Names only: a value is never shown.
		var names []string
		for _, n := range secret.Names() {
			if !secretHeldProperties[n] {
				names = append(names, n)
			}
		}
		return refuse(ErrCredentialsNotBound,
			// Not Ref(FlagKafkaSecretDir): under the launcher the directory
			// is a clusterRef's, not spec.kafka.secretRef.
			"the secret directory's properties %s are not those it vouches for: one was changed, added or removed after they were resolved (were the runner pod's annotations patched?); nothing was contacted",
			strings.Join(names, ", "))
	}
	return nil
}

// CADigestOf is the FlagCADigest of the secret directory's ssl.ca.pem:
// that of its exact bytes (a PEM file keeps its line ends).
func CADigestOf(pem string) string {
	return FileDigestOf([]byte(pem))
}

// checkCADigest refuses a secret directory whose ssl.ca.pem is not the one
// digest vouches for (ErrCredentialsNotBound, exit 2): a CA put there from
// pod annotations, which whoever may patch the pod could swap for one that
// lets them stand between the runner and the servers.
func checkCADigest(digest string, secret Properties, haveSecret bool) *FieldError {
	refuse := func(cause error, format string, a ...any) *FieldError {
		return &FieldError{Flag: FlagCADigest, Env: EnvCADigest, Cause: cause, Msg: fmt.Sprintf(format, a...)}
	}
	switch {
	case digest == "":
	case !fileDigestPattern.MatchString(digest):
		return refuse(nil, "%q is not %s<64 lowercase hex digits>", digest, FileDigestPrefix)
	case !haveSecret:
		return refuse(nil, "vouches for the ssl.ca.pem of %s, which is not given", Ref(FlagKafkaSecretDir))
	case secret == nil:
	case CADigestOf(secret["ssl.ca.pem"]) != digest:
		return refuse(ErrCredentialsNotBound, "the secret directory's ssl.ca.pem is not the CA it vouches for, or is missing (were the runner pod's annotations patched?); nothing was contacted")
	}
	return nil
}
