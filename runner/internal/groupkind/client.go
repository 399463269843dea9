package groupkind

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// UnsupportedError names a librdkafka property that decides how the runner
// connects (security, SASL, TLS) and that this client cannot reproduce.
// The values are never quoted: they may be secrets.
type UnsupportedError struct {
	Property string
	Why      string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("property %s %s", e.Property, e.Why)
}

// translated are the connection properties Options reproduces; every other
// property that decides how the runner connects is refused by name, and
// the rest (timeouts, buffer sizes) do not matter for two describes.
var translated = map[string]bool{
	"security.protocol":                     true,
	"sasl.mechanism":                        true,
	"sasl.mechanisms":                       true,
	"sasl.username":                         true,
	"sasl.password":                         true,
	"ssl.ca.location":                       true,
	"ssl.ca.pem":                            true,
	"ssl.certificate.location":              true,
	"ssl.certificate.pem":                   true,
	"ssl.key.location":                      true,
	"ssl.key.pem":                           true,
	"enable.ssl.certificate.verification":   true,
	"ssl.endpoint.identification.algorithm": true,
	"client.dns.lookup":                     true, // franz-go tries every address a name resolves to
}

// connectionProperty is a property that decides where or how the client
// connects: librdkafka's security.protocol, SASL and TLS settings.
func connectionProperty(name string) bool {
	switch name {
	case "security.protocol", "enable.ssl.certificate.verification", "enable.sasl.oauthbearer.unsecure.jwt", "client.dns.lookup":
		return true
	}
	for _, p := range []string{"sasl.", "ssl.", "ssl_", "https."} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Options are franz-go client options that connect as librdkafka does with
// bootstrap (librdkafka's list syntax) and props (librdkafka's names):
// PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL with PLAIN or SCRAM, a CA
// and a client certificate from files or PEM. Any other connection
// property is an *UnsupportedError naming it.
func Options(clientID, bootstrap string, props map[string]string) ([]kgo.Opt, error) {
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if connectionProperty(n) && !translated[n] {
			return nil, &UnsupportedError{n, "is not supported by the group-kind check"}
		}
	}
	var seeds []string
	for _, s := range strings.Split(bootstrap, ",") {
		s = strings.TrimSpace(s)
		if i := strings.Index(s, "://"); i >= 0 {
			s = s[i+3:]
		}
		if s != "" {
			seeds = append(seeds, s)
		}
	}
	opts := []kgo.Opt{kgo.SeedBrokers(seeds...), kgo.ClientID(clientID)}
	proto := strings.ToUpper(props["security.protocol"])
	switch proto {
	case "", "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
	default:
		return nil, &UnsupportedError{"security.protocol", "names a protocol the group-kind check does not know"}
	}
	if strings.HasPrefix(proto, "SASL") {
		mech := props["sasl.mechanism"]
		if mech == "" {
			mech = props["sasl.mechanisms"]
		}
		user, pass := props["sasl.username"], props["sasl.password"]
		switch strings.ToUpper(mech) {
		case "", "GSSAPI":
			// librdkafka's default mechanism is GSSAPI.
			return nil, &UnsupportedError{"sasl.mechanism", "is GSSAPI (Kerberos), which the group-kind check does not support"}
		case "PLAIN":
			opts = append(opts, kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()))
		case "SCRAM-SHA-256":
			opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()))
		case "SCRAM-SHA-512":
			opts = append(opts, kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()))
		default:
			return nil, &UnsupportedError{"sasl.mechanism", "names a mechanism the group-kind check does not support (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)"}
		}
	}
	var tc *tls.Config
	if strings.HasSuffix(proto, "SSL") {
		var err error
		if tc, err = tlsConfig(props); err != nil {
			return nil, err
		}
	}
	return append(opts, dialer(tc)), nil
}

func tlsConfig(props map[string]string) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	pem := func(inline, file string) ([]byte, error) {
		if v := props[inline]; v != "" {
			return []byte(v), nil
		}
		if f := props[file]; f != "" {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, &UnsupportedError{file, "names a file the group-kind check cannot read as PEM"}
			}
			return b, nil
		}
		return nil, nil
	}
	ca, err := pem("ssl.ca.pem", "ssl.ca.location")
	if err != nil {
		return nil, err
	}
	if ca != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, &UnsupportedError{"ssl.ca.location", "holds no PEM certificate the group-kind check can read"}
		}
		tc.RootCAs = pool
	}
	cert, err := pem("ssl.certificate.pem", "ssl.certificate.location")
	if err != nil {
		return nil, err
	}
	key, err := pem("ssl.key.pem", "ssl.key.location")
	if err != nil {
		return nil, err
	}
	if cert != nil || key != nil {
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return nil, &UnsupportedError{"ssl.certificate.location", "and ssl.key.location do not hold a PEM certificate and unencrypted key the group-kind check can read"}
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	switch v := strings.ToLower(props["enable.ssl.certificate.verification"]); v {
	case "", "true":
	case "false":
		tc.InsecureSkipVerify = true
	default:
		return nil, &UnsupportedError{"enable.ssl.certificate.verification", "is neither true nor false"}
	}
	switch v := strings.ToLower(props["ssl.endpoint.identification.algorithm"]); v {
	case "", "https":
	case "none":
		if !tc.InsecureSkipVerify {
			// The chain is checked, the name is not: what librdkafka does.
			tc.InsecureSkipVerify = true
			roots := tc.RootCAs
			tc.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
				return verifyChain(raw, roots)
			}
		}
	default:
		return nil, &UnsupportedError{"ssl.endpoint.identification.algorithm", "is neither https nor none"}
	}
	return tc, nil
}

// verifyChain checks a peer's chain against roots (the system's if nil)
// without checking the name it was issued for.
func verifyChain(raw [][]byte, roots *x509.CertPool) error {
	if len(raw) == 0 {
		return errors.New("tls: the broker sent no certificate")
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, r := range raw {
		c, err := x509.ParseCertificate(r)
		if err != nil {
			return err
		}
		certs[i] = c
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
	return err
}
