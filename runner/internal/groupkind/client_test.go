package groupkind

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestTranslate: every librdkafka connection property the runner's second
// client reproduces, read as librdkafka reads it, and every other one
// refused by name, without quoting any value.
func TestTranslate(t *testing.T) {
	const boot = "b1:9092, b2:9092"
	seeds := []string{"b1:9092", "b2:9092"}
	props := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	sasl := func(proto, mech string) map[string]string {
		return props("security.protocol", proto, "sasl.mechanism", mech, "sasl.username", "u", "sasl.password", "pw-secret")
	}
	verified := &TLSSettings{VerifyChain: true, VerifyHostname: true}
	for _, tc := range []struct {
		name      string
		bootstrap string
		props     map[string]string
		want      Settings
		// refused is the property an *UnsupportedError names, or "".
		refused string
	}{
		{name: "nothing: PLAINTEXT, librdkafka's default", props: nil, want: Settings{Seeds: seeds, Protocol: Plaintext}},
		{name: "non-connection properties are not connection settings", props: props("socket.timeout.ms", "1000", "client.rack", "a"), want: Settings{Seeds: seeds, Protocol: Plaintext}},
		{name: "SASL/PLAIN", props: sasl("SASL_PLAINTEXT", "PLAIN"), want: Settings{Seeds: seeds, Protocol: SASLPlaintext, Mechanism: "PLAIN", User: "u", Pass: "pw-secret"}},
		{name: "SCRAM-SHA-256, sasl.mechanisms, lower case", props: props("security.protocol", "sasl_plaintext", "sasl.mechanisms", "scram-sha-256", "sasl.username", "u", "sasl.password", "pw-secret"),
			want: Settings{Seeds: seeds, Protocol: SASLPlaintext, Mechanism: "SCRAM-SHA-256", User: "u", Pass: "pw-secret"}},
		{name: "SCRAM-SHA-512 over TLS, the system's CAs", props: sasl("SASL_SSL", "SCRAM-SHA-512"),
			want: Settings{Seeds: seeds, Protocol: SASLSSL, Mechanism: "SCRAM-SHA-512", User: "u", Pass: "pw-secret", TLS: verified}},
		{name: "SASL settings without SASL are not used, as librdkafka does", props: sasl("SSL", "PLAIN"), want: Settings{Seeds: seeds, Protocol: SSL, TLS: verified}},
		{name: "TLS from files, with a key password", props: props("security.protocol", "SSL", "ssl.ca.location", "/ca.pem", "ssl.certificate.location", "/c.pem", "ssl.key.location", "/k.pem", "ssl.key.password", "kp"),
			want: Settings{Seeds: seeds, Protocol: SSL, TLS: &TLSSettings{CA: PEM{Property: "ssl.ca.location", File: "/ca.pem"}, Cert: PEM{Property: "ssl.certificate.location", File: "/c.pem"},
				Key: PEM{Property: "ssl.key.location", File: "/k.pem"}, KeyPassword: "kp", VerifyChain: true, VerifyHostname: true}}},
		{name: "TLS inline", props: props("security.protocol", "SSL", "ssl.ca.pem", "CA", "ssl.certificate.pem", "C", "ssl.key.pem", "K"),
			want: Settings{Seeds: seeds, Protocol: SSL, TLS: &TLSSettings{CA: PEM{Property: "ssl.ca.pem", Inline: "CA"}, Cert: PEM{Property: "ssl.certificate.pem", Inline: "C"},
				Key: PEM{Property: "ssl.key.pem", Inline: "K"}, VerifyChain: true, VerifyHostname: true}}},
		{name: "ssl.ca.location=probe is the system's store", props: props("security.protocol", "SSL", "ssl.ca.location", "probe"), want: Settings{Seeds: seeds, Protocol: SSL, TLS: verified}},
		{name: "no hostname check", props: props("security.protocol", "SSL", "ssl.endpoint.identification.algorithm", "none"),
			want: Settings{Seeds: seeds, Protocol: SSL, TLS: &TLSSettings{VerifyChain: true}}},
		{name: "no check at all", props: props("security.protocol", "SSL", "enable.ssl.certificate.verification", "false"),
			want: Settings{Seeds: seeds, Protocol: SSL, TLS: &TLSSettings{}}},
		{name: "a protocol prefix that is security.protocol", bootstrap: "SASL_SSL://b1:9092,sasl_ssl://b2:9092", props: sasl("SASL_SSL", "PLAIN"),
			want: Settings{Seeds: seeds, Protocol: SASLSSL, Mechanism: "PLAIN", User: "u", Pass: "pw-secret", TLS: verified}},
		{name: "client.dns.lookup=use_all_dns_ips", props: props("client.dns.lookup", "use_all_dns_ips"), want: Settings{Seeds: seeds, Protocol: Plaintext}},

		{name: "a prefix that is not security.protocol", bootstrap: "SSL://b1:9092", props: nil, refused: "security.protocol"},
		{name: "a TLS prefix under SASL_PLAINTEXT", bootstrap: "SASL_SSL://b1:9092", props: sasl("SASL_PLAINTEXT", "PLAIN"), refused: "security.protocol"},
		{name: "OAUTHBEARER", props: sasl("SASL_SSL", "OAUTHBEARER"), refused: "sasl.mechanism"},
		{name: "GSSAPI, librdkafka's default", props: props("security.protocol", "SASL_PLAINTEXT"), refused: "sasl.mechanism"},
		{name: "GSSAPI named", props: sasl("SASL_PLAINTEXT", "GSSAPI"), refused: "sasl.mechanism"},
		{name: "an OAuth property", props: props("sasl.oauthbearer.client.id", "x"), refused: "sasl.oauthbearer.client.id"},
		{name: "a Kerberos property", props: props("sasl.kerberos.service.name", "kafka"), refused: "sasl.kerberos.service.name"},
		{name: "a keystore", props: props("security.protocol", "SSL", "ssl.keystore.location", "/k.p12", "ssl.keystore.password", "ks-secret"), refused: "ssl.keystore.location"},
		{name: "cipher suites", props: props("security.protocol", "SSL", "ssl.cipher.suites", "NULL"), refused: "ssl.cipher.suites"},
		{name: "an OAuth endpoint's trust", props: props("https.ca.location", "/ca"), refused: "https.ca.location"},
		{name: "unsecured JWTs", props: props("enable.sasl.oauthbearer.unsecure.jwt", "true"), refused: "enable.sasl.oauthbearer.unsecure.jwt"},
		{name: "canonical name lookup", props: props("client.dns.lookup", "resolve_canonical_bootstrap_servers_only"), refused: "client.dns.lookup"},
		{name: "an unknown protocol", props: props("security.protocol", "QUIC"), refused: "security.protocol"},
		{name: "an unknown mechanism", props: sasl("SASL_SSL", "AWS_MSK_IAM"), refused: "sasl.mechanism"},
		{name: "a CA both inline and a file", props: props("security.protocol", "SSL", "ssl.ca.pem", "CA", "ssl.ca.location", "/ca.pem"), refused: "ssl.ca.pem"},
		{name: "a certificate without a key", props: props("security.protocol", "SSL", "ssl.certificate.location", "/c.pem"), refused: "ssl.certificate.location"},
		{name: "verification neither true nor false", props: props("security.protocol", "SSL", "enable.ssl.certificate.verification", "maybe"), refused: "enable.ssl.certificate.verification"},
		{name: "an unknown identification algorithm", props: props("security.protocol", "SSL", "ssl.endpoint.identification.algorithm", "ip"), refused: "ssl.endpoint.identification.algorithm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.bootstrap
			if b == "" {
				b = boot
			}
			got, err := Translate(b, tc.props)
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("settings\n%+v\nwant\n%+v", got, tc.want)
				}
				return
			}
			var ue *UnsupportedError
			if !errors.As(err, &ue) || ue.Property != tc.refused {
				t.Fatalf("error %v, want one naming %s", err, tc.refused)
			}
			for _, v := range tc.props {
				if strings.Contains(v, "secret") && strings.Contains(err.Error(), v) {
					t.Errorf("the error quotes a value: %v", err)
				}
			}
		})
	}
}

// TestOptions: the PEM files are read, an encrypted key is decrypted with
// ssl.key.password, and whatever cannot be read is refused by the property
// that names it.
func TestOptions(t *testing.T) {
	dir := t.TempDir()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "c"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	//nolint:staticcheck // SA1019: the legacy encryption ssl.key.password reads.
	enc, err := x509.EncryptPEMBlock(rand.Reader, "EC PRIVATE KEY", keyDER, []byte("kp-secret"), x509.PEMCipherAES256)
	if err != nil {
		t.Fatal(err)
	}
	encPEM := string(pem.EncodeToMemory(enc))
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ca, cert, key, encKey := write("ca.pem", certPEM), write("c.pem", certPEM), write("k.pem", keyPEM), write("enc.pem", encPEM)
	pkcs8 := write("p8.pem", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMA==\n-----END ENCRYPTED PRIVATE KEY-----\n")
	tlsOf := func(key PEM, password string) *TLSSettings {
		return &TLSSettings{CA: PEM{Property: "ssl.ca.location", File: ca}, Cert: PEM{Property: "ssl.certificate.location", File: cert}, Key: key, KeyPassword: password, VerifyChain: true, VerifyHostname: true}
	}
	for _, tc := range []struct {
		name    string
		tls     *TLSSettings
		refused string
	}{
		{name: "files", tls: tlsOf(PEM{Property: "ssl.key.location", File: key}, "")},
		{name: "inline", tls: &TLSSettings{CA: PEM{Property: "ssl.ca.pem", Inline: certPEM}, Cert: PEM{Property: "ssl.certificate.pem", Inline: certPEM}, Key: PEM{Property: "ssl.key.pem", Inline: keyPEM}}},
		{name: "an encrypted key with its password", tls: tlsOf(PEM{Property: "ssl.key.location", File: encKey}, "kp-secret")},
		{name: "an encrypted key without a password", tls: tlsOf(PEM{Property: "ssl.key.location", File: encKey}, ""), refused: "ssl.key.location"},
		{name: "an encrypted key with a wrong password", tls: tlsOf(PEM{Property: "ssl.key.location", File: encKey}, "wrong-secret"), refused: "ssl.key.password"},
		{name: "an encrypted PKCS#8 key", tls: tlsOf(PEM{Property: "ssl.key.location", File: pkcs8}, "kp-secret"), refused: "ssl.key.location"},
		{name: "a CA file that is not there", tls: &TLSSettings{CA: PEM{Property: "ssl.ca.location", File: filepath.Join(dir, "none.pem")}}, refused: "ssl.ca.location"},
		{name: "a CA that is not PEM", tls: &TLSSettings{CA: PEM{Property: "ssl.ca.pem", Inline: "secret-looking-value"}}, refused: "ssl.ca.pem"},
		{name: "a key that does not match", tls: &TLSSettings{Cert: PEM{Property: "ssl.certificate.pem", Inline: certPEM}, Key: PEM{Property: "ssl.key.pem", Inline: "secret-looking-value"}}, refused: "ssl.certificate.pem"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Options("id", Settings{Seeds: []string{"b:1"}, Protocol: SSL, TLS: tc.tls})
			var ue *UnsupportedError
			switch {
			case tc.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refused != "" && (!errors.As(err, &ue) || ue.Property != tc.refused):
				t.Fatalf("error %v, want one naming %s", err, tc.refused)
			}
			if err != nil && (strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "BEGIN")) {
				t.Errorf("the error quotes a value: %v", err)
			}
		})
	}
}
