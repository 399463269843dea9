package groupkind

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// UnsupportedError names a librdkafka property that decides how the runner
// connects (security, SASL, TLS) and that this client cannot reproduce as
// librdkafka would. The values are never quoted: they may be secrets.
type UnsupportedError struct {
	Property string
	Why      string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("property %s %s: the runner's second client (franz-go, for the group's kind and offsets and for share and streams groups) cannot connect as librdkafka would", e.Property, e.Why)
}

// The security protocols, as librdkafka's security.protocol names them.
const (
	Plaintext     = "PLAINTEXT"
	SSL           = "SSL"
	SASLPlaintext = "SASL_PLAINTEXT"
	SASLSSL       = "SASL_SSL"
)

// Settings are how franz-go's client connects, translated from librdkafka's
// properties by Translate. They hold credentials: never print them.
type Settings struct {
	// Seeds are the bootstrap servers as host:port, without a protocol
	// prefix (Translate checks it against Protocol).
	Seeds []string
	// Protocol is one of Plaintext, SSL, SASLPlaintext, SASLSSL.
	Protocol string
	// Mechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 under SASL, else
	// empty; User and Pass are its credentials.
	Mechanism  string
	User, Pass string
	// TLS is set under SSL and SASL_SSL.
	TLS *TLSSettings
}

// TLSSettings are librdkafka's ssl.* properties that Translate reproduces.
// Each PEM is either inline (ssl.*.pem) or a file (ssl.*.location).
type TLSSettings struct {
	// CA is the trust anchors; none means the system's, as librdkafka
	// with no CA (or ssl.ca.location=probe) trusts the system's store.
	CA, Cert, Key PEM
	// KeyPassword decrypts Key (ssl.key.password).
	KeyPassword string
	// VerifyChain is enable.ssl.certificate.verification,
	// VerifyHostname ssl.endpoint.identification.algorithm=https
	// (librdkafka's default since 2.0).
	VerifyChain, VerifyHostname bool
}

// PEM is a PEM value given inline, or the file that holds it, with the
// property that named it (for errors).
type PEM struct {
	Property, Inline, File string
}

func (p PEM) set() bool { return p.Inline != "" || p.File != "" }

// supported are the connection properties Translate reproduces; every
// other property that decides how the runner connects is refused by name,
// and the rest (timeouts, buffer sizes) do not change where credentials go
// or how they are protected.
var supported = map[string]bool{
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
	"ssl.key.password":                      true,
	"enable.ssl.certificate.verification":   true,
	"ssl.endpoint.identification.algorithm": true,
	// franz-go, like librdkafka's default use_all_dns_ips, tries every
	// address a name resolves to, and checks the certificate against the
	// name as given; resolve_canonical_bootstrap_servers_only is refused.
	"client.dns.lookup": true,
}

// connectionProperty is a property that decides where or how the client
// connects: librdkafka's security.protocol, SASL and TLS settings (the
// properties config's credentials binding protects).
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

// Translate reads librdkafka's bootstrap list and properties as the
// settings of a franz-go client that connects exactly as librdkafka does:
// PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL; PLAIN, SCRAM-SHA-256 and
// SCRAM-SHA-512; a CA and a client certificate and key, as files or PEM;
// hostname verification on or off. Every other connection property, and
// every value librdkafka would read otherwise, is an *UnsupportedError
// naming it: this client never connects with weaker security than
// librdkafka's, nor to other servers. It reads no file (Options does).
func Translate(bootstrap string, props map[string]string) (Settings, error) {
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if connectionProperty(n) && !supported[n] {
			return Settings{}, &UnsupportedError{n, "is not supported (supported: " + strings.Join(SupportedProperties(), ", ") + ")"}
		}
	}
	var s Settings
	s.Protocol = strings.ToUpper(props["security.protocol"])
	switch s.Protocol {
	case "":
		s.Protocol = Plaintext // librdkafka's default
	case Plaintext, SSL, SASLPlaintext, SASLSSL:
	default:
		return Settings{}, &UnsupportedError{"security.protocol", "is none of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"}
	}
	for _, e := range strings.Split(bootstrap, ",") {
		e = strings.TrimSpace(e)
		if proto, hp, ok := strings.Cut(e, "://"); ok {
			// librdkafka connects to a server with a protocol prefix only
			// when the prefix is security.protocol itself.
			if !strings.EqualFold(proto, s.Protocol) {
				return Settings{}, &UnsupportedError{"security.protocol", fmt.Sprintf("is %s, and a bootstrap server is prefixed %s://: librdkafka does not connect to a server whose prefix is not its security.protocol", s.Protocol, proto)}
			}
			e = hp
		}
		if e != "" {
			s.Seeds = append(s.Seeds, e)
		}
	}
	if v := strings.ToLower(props["client.dns.lookup"]); v != "" && v != "use_all_dns_ips" {
		return Settings{}, &UnsupportedError{"client.dns.lookup", "is not use_all_dns_ips, the only lookup supported"}
	}
	if strings.HasPrefix(s.Protocol, "SASL_") {
		mech := props["sasl.mechanism"]
		if mech == "" {
			mech = props["sasl.mechanisms"]
		}
		switch s.Mechanism = strings.ToUpper(strings.TrimSpace(mech)); s.Mechanism {
		case "", "GSSAPI":
			// librdkafka's default mechanism is GSSAPI.
			return Settings{}, &UnsupportedError{"sasl.mechanism", "is GSSAPI (Kerberos, librdkafka's default), which is not supported; use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"}
		case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		default:
			return Settings{}, &UnsupportedError{"sasl.mechanism", "is none of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, the mechanisms supported"}
		}
		s.User, s.Pass = props["sasl.username"], props["sasl.password"]
	}
	if strings.HasSuffix(s.Protocol, "SSL") {
		t, err := translateTLS(props)
		if err != nil {
			return Settings{}, err
		}
		s.TLS = t
	}
	return s, nil
}

// translateTLS reads the ssl.* properties as librdkafka does.
func translateTLS(props map[string]string) (*TLSSettings, error) {
	pemOf := func(inline, file string) (PEM, error) {
		p := PEM{Inline: props[inline], File: props[file]}
		switch {
		case p.Inline != "" && p.File != "":
			// librdkafka refuses both at once too.
			return PEM{}, &UnsupportedError{inline, "is set with " + file + "; set one of them"}
		case p.Inline != "":
			p.Property = inline
		case p.File != "":
			p.Property = file
		}
		return p, nil
	}
	t := &TLSSettings{KeyPassword: props["ssl.key.password"]}
	var err error
	if t.CA, err = pemOf("ssl.ca.pem", "ssl.ca.location"); err != nil {
		return nil, err
	}
	if t.CA.File == "probe" {
		t.CA = PEM{} // the system's store, as without a CA
	}
	if t.Cert, err = pemOf("ssl.certificate.pem", "ssl.certificate.location"); err != nil {
		return nil, err
	}
	if t.Key, err = pemOf("ssl.key.pem", "ssl.key.location"); err != nil {
		return nil, err
	}
	if t.Cert.set() != t.Key.set() {
		return nil, &UnsupportedError{"ssl.certificate.location", "and ssl.key.location (or their .pem forms) must be set together"}
	}
	verify, err := boolProperty(props, "enable.ssl.certificate.verification", true)
	if err != nil {
		return nil, err
	}
	t.VerifyChain = verify
	switch v := strings.ToLower(props["ssl.endpoint.identification.algorithm"]); v {
	case "", "https":
		t.VerifyHostname = verify
	case "none":
	default:
		return nil, &UnsupportedError{"ssl.endpoint.identification.algorithm", "is neither https nor none"}
	}
	return t, nil
}

// boolProperty reads a librdkafka boolean: true, t or 1, false, f or 0,
// in any case.
func boolProperty(props map[string]string, name string, def bool) (bool, error) {
	switch strings.ToLower(props[name]) {
	case "":
		return def, nil
	case "true", "t", "1":
		return true, nil
	case "false", "f", "0":
		return false, nil
	}
	return false, &UnsupportedError{name, "is neither true nor false"}
}

// SupportedProperties lists the connection properties Translate reproduces,
// sorted, for errors and docs.
func SupportedProperties() []string {
	out := make([]string, 0, len(supported))
	for n := range supported {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ClientOptions are Options of Translate's settings: the one way the
// runner's franz-go clients connect.
func ClientOptions(clientID, bootstrap string, props map[string]string) ([]kgo.Opt, error) {
	s, err := Translate(bootstrap, props)
	if err != nil {
		return nil, err
	}
	return Options(clientID, s)
}

// Options are the franz-go client options for s: it reads the PEM files
// and decrypts the key. Errors name the property, never a value.
func Options(clientID string, s Settings) ([]kgo.Opt, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(s.Seeds...), kgo.ClientID(clientID)}
	switch s.Mechanism {
	case "PLAIN":
		opts = append(opts, kgo.SASL(plain.Auth{User: s.User, Pass: s.Pass}.AsMechanism()))
	case "SCRAM-SHA-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: s.User, Pass: s.Pass}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: s.User, Pass: s.Pass}.AsSha512Mechanism()))
	}
	var tc *tls.Config
	if s.TLS != nil {
		var err error
		if tc, err = tlsConfig(s.TLS); err != nil {
			return nil, err
		}
	}
	return append(opts, dialer(tc)), nil
}

func readPEM(p PEM) ([]byte, error) {
	if p.Inline != "" {
		return []byte(p.Inline), nil
	}
	if p.File == "" {
		return nil, nil
	}
	b, err := os.ReadFile(p.File)
	if err != nil {
		why := "names a file that cannot be read"
		var pe *fs.PathError
		if errors.As(err, &pe) {
			why += ": " + pe.Err.Error()
		}
		return nil, &UnsupportedError{p.Property, why}
	}
	return b, nil
}

func tlsConfig(t *TLSSettings) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	ca, err := readPEM(t.CA)
	if err != nil {
		return nil, err
	}
	if ca != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, &UnsupportedError{t.CA.Property, "holds no PEM certificate"}
		}
		tc.RootCAs = pool
	}
	if t.Cert.set() {
		cert, err := readPEM(t.Cert)
		if err != nil {
			return nil, err
		}
		key, err := readPEM(t.Key)
		if err != nil {
			return nil, err
		}
		if key, err = decryptKey(key, t.Key.Property, t.KeyPassword); err != nil {
			return nil, err
		}
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return nil, &UnsupportedError{t.Cert.Property, "and " + t.Key.Property + " do not hold a PEM certificate and its private key"}
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	switch {
	case !t.VerifyChain:
		// enable.ssl.certificate.verification=false: the user asked for
		// no check at all, as librdkafka then makes none.
		tc.InsecureSkipVerify = true
	case !t.VerifyHostname:
		// The chain is checked, the name is not: what librdkafka does
		// with ssl.endpoint.identification.algorithm=none.
		tc.InsecureSkipVerify = true
		roots := tc.RootCAs
		tc.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			return verifyChain(raw, roots)
		}
	}
	return tc, nil
}

// decryptKey returns the PEM key unencrypted. A key encrypted the legacy
// OpenSSL way (Proc-Type: 4,ENCRYPTED) is decrypted with password; an
// encrypted PKCS#8 key (ENCRYPTED PRIVATE KEY) is refused: Go's standard
// library cannot read it, and no dependency is taken for it.
func decryptKey(key []byte, property, password string) ([]byte, error) {
	var out []byte
	for rest := key; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		switch {
		case b.Type == "ENCRYPTED PRIVATE KEY":
			return nil, &UnsupportedError{property, "holds an encrypted PKCS#8 key, which cannot be decrypted here; give the key unencrypted (it is a credential: keep it in the Secret) or encrypted the legacy PEM way (openssl rsa/ec -aes256 -traditional)"}
		//nolint:staticcheck // SA1019: legacy PEM encryption is what OpenSSL, and so librdkafka, reads with ssl.key.password.
		case x509.IsEncryptedPEMBlock(b):
			if password == "" {
				return nil, &UnsupportedError{property, "holds an encrypted key, and ssl.key.password is not set"}
			}
			//nolint:staticcheck // SA1019: as above.
			der, err := x509.DecryptPEMBlock(b, []byte(password))
			if err != nil {
				return nil, &UnsupportedError{"ssl.key.password", "does not decrypt the key of " + property}
			}
			b = &pem.Block{Type: b.Type, Bytes: der}
		}
		out = append(out, pem.EncodeToMemory(b)...)
	}
	if out == nil {
		return key, nil // not PEM: X509KeyPair says so
	}
	return out, nil
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
