package config

import (
	"errors"
	"strings"
	"testing"
)

// The digest covers every property but the Secret-held ones: their
// values never change it, and every other property's name and value do.
func TestPropertiesDigestOf(t *testing.T) {
	base := Properties{"bootstrap.servers": "k:9093", "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "u"}
	d := PropertiesDigestOf(base)
	if !fileDigestPattern.MatchString(d) {
		t.Fatalf("digest %q is not sha256:<hex>", d)
	}
	with := func(edit func(Properties)) Properties {
		p := Properties{}
		for k, v := range base {
			p[k] = v
		}
		edit(p)
		return p
	}
	same := map[string]Properties{
		"with the Secret's keys": with(func(p Properties) {
			p["sasl.password"], p["ssl.ca.pem"], p["ssl.certificate.pem"], p["ssl.key.pem"] = "pw", "ca", "crt", "key"
		}),
	}
	for name, p := range same {
		if got := PropertiesDigestOf(p); got != d {
			t.Errorf("%s: digest %s, want %s", name, got, d)
		}
	}
	differ := map[string]Properties{
		"a downgraded protocol":      with(func(p Properties) { p["security.protocol"] = "SASL_PLAINTEXT" }),
		"another mechanism":          with(func(p Properties) { p["sasl.mechanism"] = "PLAIN" }),
		"another binding":            with(func(p Properties) { p["bootstrap.servers"] = "k:9093,evil:9093" }),
		"a removed property":         with(func(p Properties) { delete(p, "sasl.username") }),
		"an emptied property":        with(func(p Properties) { p["sasl.username"] = "" }),
		"an added property":          with(func(p Properties) { p["enable.ssl.certificate.verification"] = "false" }),
		"a value moved to its name":  with(func(p Properties) { delete(p, "sasl.username"); p["sasl.usernameu"] = "" }),
		"a name and value run along": with(func(p Properties) { p["sasl.username"] = `u","x` }),
	}
	for name, p := range differ {
		if got := PropertiesDigestOf(p); got == d {
			t.Errorf("%s: same digest", name)
		}
	}
}

// Through Load: a secret directory whose properties are not those the
// digest vouches for is refused as unbound credentials (exit 2), naming
// the properties and never a value; without a secret directory, or with a
// malformed digest, the flag itself is the error.
func TestLoadPropertiesDigest(t *testing.T) {
	const canary = "CANARY-digest-pass"
	vouched := map[string]string{"bootstrap.servers": "kafka.internal:9093", "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "replay"}
	digest := PropertiesDigestOf(vouched)
	dir := func(edit func(map[string]string)) string {
		p := map[string]string{"sasl.password": canary}
		for k, v := range vouched {
			p[k] = v
		}
		edit(p)
		return secretDir(t, p)
	}
	t.Run("as vouched", func(t *testing.T) {
		clearEnv(t)
		c := mustLoad(t, args("--bootstrap-servers", "kafka.internal:9093", "--kafka-secret-dir", dir(func(map[string]string) {}), "--properties-digest", digest)...)
		if c.KafkaProperties["security.protocol"] != "SASL_SSL" || c.KafkaProperties["sasl.password"] != canary {
			t.Errorf("KafkaProperties = %q", c.KafkaProperties.Names())
		}
	})
	t.Run("a trailing newline is not a change", func(t *testing.T) {
		clearEnv(t)
		mustLoad(t, args("--bootstrap-servers", "kafka.internal:9093", "--kafka-secret-dir", dir(func(p map[string]string) { p["sasl.mechanism"] += "\n" }), "--properties-digest", digest)...)
	})
	for name, edit := range map[string]func(map[string]string){
		"downgraded":  func(p map[string]string) { p["security.protocol"] = "SASL_PLAINTEXT" },
		"weaker":      func(p map[string]string) { p["sasl.mechanism"] = "PLAIN" },
		"emptied":     func(p map[string]string) { p["sasl.username"] = "" },
		"with more":   func(p map[string]string) { p["enable.ssl.certificate.verification"] = "false" },
		"without one": func(p map[string]string) { delete(p, "sasl.mechanism") },
	} {
		t.Run(name, func(t *testing.T) {
			clearEnv(t)
			t.Setenv(EnvFieldNames, string(FieldNamesSpec))
			_, err := load(t, args("--bootstrap-servers", "kafka.internal:9093", "--kafka-secret-dir", dir(edit), "--properties-digest", digest)...)
			if !errors.Is(err, ErrCredentialsNotBound) || !IsInvalidInput(err) {
				t.Fatalf("err = %v, want an input error that is ErrCredentialsNotBound", err)
			}
			msg := err.Error()
			if want := "status.resolvedKafka.propertiesDigest: the secret directory's properties "; !strings.Contains(msg, want) || !strings.Contains(msg, "nothing was contacted") {
				t.Errorf("error %q does not say %q and that nothing was contacted", msg, want)
			}
			for _, v := range []string{canary, "SASL_PLAINTEXT", "PLAIN\"", "kafka.internal"} {
				if strings.Contains(msg, v) {
					t.Errorf("error %q shows a value (%q)", msg, v)
				}
			}
		})
	}
	t.Run("without a secret directory", func(t *testing.T) {
		clearEnv(t)
		_, err := load(t, args("--properties-digest", digest)...)
		if err == nil || !strings.Contains(err.Error(), "--properties-digest (REPLAY_PROPERTIES_DIGEST): vouches for the properties of --kafka-secret-dir, which is not given") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		clearEnv(t)
		_, err := load(t, args("--kafka-secret-dir", dir(func(map[string]string) {}), "--properties-digest", "sha256:XY")...)
		if err == nil || !strings.Contains(err.Error(), `--properties-digest (REPLAY_PROPERTIES_DIGEST): "sha256:XY" is not sha256:<64 lowercase hex digits>`) {
			t.Errorf("err = %v", err)
		}
	})
}

// A CA the digest vouches for is read; another one, or none, is refused as
// unbound credentials (exit 2) without showing the certificate.
func TestLoadCADigest(t *testing.T) {
	const ca = "-----BEGIN CERTIFICATE-----\nCANARY-ca\n-----END CERTIFICATE-----\n"
	props := map[string]string{"bootstrap.servers": "kafka.other:9093", "security.protocol": "SSL"}
	digest := CADigestOf(ca)
	dir := func(ca string) string {
		p := map[string]string{"ssl.ca.pem": ca}
		for k, v := range props {
			p[k] = v
		}
		if ca == "" {
			delete(p, "ssl.ca.pem")
		}
		return secretDir(t, p)
	}
	t.Run("as vouched", func(t *testing.T) {
		clearEnv(t)
		c := mustLoad(t, args("--bootstrap-servers", "kafka.other:9093", "--kafka-secret-dir", dir(ca), "--ca-digest", digest)...)
		if c.KafkaProperties["ssl.ca.pem"] != ca {
			t.Errorf("ssl.ca.pem = %q", c.KafkaProperties["ssl.ca.pem"])
		}
	})
	for name, other := range map[string]string{
		"another CA":    "-----BEGIN CERTIFICATE-----\nEVIL\n-----END CERTIFICATE-----",
		"a CA appended": ca + "-----BEGIN CERTIFICATE-----\nEVIL\n-----END CERTIFICATE-----",
		"no CA":         "",
	} {
		t.Run(name, func(t *testing.T) {
			clearEnv(t)
			t.Setenv(EnvFieldNames, string(FieldNamesSpec))
			_, err := load(t, args("--bootstrap-servers", "kafka.other:9093", "--kafka-secret-dir", dir(other), "--ca-digest", digest)...)
			if !errors.Is(err, ErrCredentialsNotBound) || !IsInvalidInput(err) {
				t.Fatalf("err = %v, want an input error that is ErrCredentialsNotBound", err)
			}
			if msg := err.Error(); !strings.Contains(msg, "status.resolvedKafka.caCertificates: the secret directory's ssl.ca.pem is not the CA it vouches for") || strings.Contains(msg, "EVIL") || strings.Contains(msg, "CANARY") {
				t.Errorf("error %q", msg)
			}
		})
	}
	t.Run("without a secret directory", func(t *testing.T) {
		clearEnv(t)
		_, err := load(t, args("--ca-digest", digest)...)
		if err == nil || !strings.Contains(err.Error(), "--ca-digest (REPLAY_CA_DIGEST): vouches for the ssl.ca.pem of --kafka-secret-dir, which is not given") {
			t.Errorf("err = %v", err)
		}
	})
}
