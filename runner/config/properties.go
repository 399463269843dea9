package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Properties are librdkafka configuration properties from a config directory.
type Properties map[string]string

// reservedProperties are set by the runner itself; a config directory that
// sets them is almost certainly a mistake, so it is refused rather than
// silently overridden. bootstrap.servers is the exception: a directory's
// own bootstrap.servers says which servers its properties are for
// (credentials.go).
var reservedProperties = map[string]string{
	"bootstrap.servers":    "use " + Ref(FlagBootstrapServers),
	"metadata.broker.list": "use " + Ref(FlagBootstrapServers),
	"group.id":             "use " + Ref(FlagGroup),
	"transactional.id":     "an Atomic commit's is derived from the group (see " + Ref(FlagCommitMode) + ")",
}

// reservedPrefix marks confluent-kafka-go's own settings
// (go.logs.channel.enable and the like), which the runner's librdkafka
// client does not take: refused by name rather than as unknown properties.
const reservedPrefix = "go."

// unsafeProperties run programs or load code into the runner. Whoever
// writes the config directory (for a ReplayRequest, whoever may create one)
// would otherwise run code with the runner's credentials and network
// position, so each is refused unless the operator who starts the runner
// allows it by name (FlagAllowUnsafeProperties). The list follows librdkafka's
// CONFIGURATION.md.
var unsafeProperties = map[string]string{
	"sasl.kerberos.kinit.cmd": "is a shell command librdkafka runs",
	// The default kinit command substitutes these two into its shell line,
	// the principal unquoted: a value such as "x;curl ..." runs.
	"sasl.kerberos.keytab":    "is substituted into the kinit shell command",
	"sasl.kerberos.principal": "is substituted into the kinit shell command",
	"plugin.library.paths":    "loads shared libraries (plugins) into the runner",
	"ssl.engine.location":     "loads an OpenSSL engine library into the runner",
	"ssl.engine.id":           "makes OpenSSL load an engine by name",
	"ssl.providers":           "makes OpenSSL load provider modules, which may be any shared library",
	// azure_imds (librdkafka 2.12 on) fetches the node's own managed
	// identity token and presents it to the brokers: an ambient credential
	// that is neither the request's nor its Secret's. librdkafka 2.11
	// does not know the property; the refusal is here before an upgrade.
	"sasl.oauthbearer.metadata.authentication.type": "makes librdkafka fetch the node's own cloud identity (azure_imds) and present it",
}

// UnsafePropertyNames lists the properties that run programs or load code,
// sorted.
func UnsafePropertyNames() []string {
	names := make([]string, 0, len(unsafeProperties))
	for n := range unsafeProperties {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// CheckUnsafe refuses every property that runs programs or loads code and is
// not in allowed. The error names each one; never a value.
func (p Properties) CheckUnsafe(allowed []string) error {
	return inFlagNames(p.checkUnsafe(allowed))
}

// checkUnsafe is CheckUnsafe with its hint as a Ref, for Validate.
func (p Properties) checkUnsafe(allowed []string) error {
	var refused []string
	for _, n := range p.Names() {
		if why, unsafe := unsafeProperties[n]; unsafe && !slices.Contains(allowed, n) {
			refused = append(refused, n+" "+why)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	return fmt.Errorf("refused: %s; an operator can allow a property by name with %s", strings.Join(refused, "; "), Ref(FlagAllowUnsafeProperties))
}

// ValidateAllowedUnsafe checks the names given to FlagAllowUnsafeProperties,
// so that a typo does not silently allow nothing.
func ValidateAllowedUnsafe(names []string) error {
	for _, n := range names {
		if _, ok := unsafeProperties[n]; !ok {
			return fmt.Errorf("%q is not one of the properties that need allowing: %s", n, strings.Join(UnsafePropertyNames(), ", "))
		}
	}
	return nil
}

var propertyName = regexp.MustCompile(`^[a-z][a-z0-9_.]*$`)

// kubeletEntry matches the entries the kubelet's atomic writer adds to a
// Secret or ConfigMap volume: ..data (and ..data_tmp while it swaps it) and
// the timestamped directory ..data points at. A user's key may not start
// with "..", so these are never properties; any other dot file is one
// (and is refused by its name).
var kubeletEntry = regexp.MustCompile(`^\.\.(data|data_tmp|\d{4}(_\d{2}){5}\.\d+)$`)

// MaxPropertyBytes bounds a single property file.
const MaxPropertyBytes = 1 << 20

// LoadProperties reads a directory laid out like a Kubernetes Secret or
// ConfigMap volume: each regular file is one property, named by the file and
// valued by its content. The kubelet's own entries (..data and the
// timestamped directory) are skipped; the visible names are symlinks into
// them, which are followed. Any other file, dot files included, must be a
// property.
//
// Error messages name files, never their content.
func LoadProperties(dir string) (Properties, error) {
	p, err := loadProperties(dir, configDirKind)
	return p, inFlagNames(err)
}

// inFlagNames renders the Refs of an error returned outside a FieldError.
func inFlagNames(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(FieldNamesFlags.Expand(err.Error()))
}

// propertyDir is which of the runner's two directories is read: the config
// directory (a ConfigMap, or plain properties) or the secret directory (a
// Secret), which alone may hold a binding.
type propertyDir string

const (
	configDirKind propertyDir = "config directory"
	secretDirKind propertyDir = "secret directory"
)

// loadProperties is LoadProperties with the hints as Refs, for Validate.
// Either directory may set bootstrap.servers: it is never the runner's
// bootstrap list, but the servers its properties are for (credentials.go):
// in the secret directory the binding of the credentials, in the config
// directory a restriction only (so that a Secret's keys still work when
// mounted as a config directory, though they bind nothing there).
func loadProperties(dir string, kind propertyDir) (Properties, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot read the %s: %w", kind, unwrapPath(err))
	}
	props := Properties{}
	for _, e := range entries {
		name := e.Name()
		if kubeletEntry.MatchString(name) {
			continue
		}
		path := filepath.Join(dir, name)
		st, err := os.Stat(path) // follows the volume's symlinks
		if err != nil {
			return nil, fmt.Errorf("property file %s: %w", name, unwrapPath(err))
		}
		if st.IsDir() {
			continue
		}
		if !propertyName.MatchString(name) {
			return nil, fmt.Errorf("file %q is not a librdkafka property name (lowercase, dotted, such as sasl.mechanism)", name)
		}
		if why, reserved := reservedProperties[name]; reserved && name != bindingProperty {
			return nil, fmt.Errorf("property %s must not be set in the %s: %s", name, kind, why)
		}
		if strings.HasPrefix(name, reservedPrefix) {
			return nil, fmt.Errorf("property %s must not be set in the %s: the runner manages the Go client's %s* settings", name, kind, reservedPrefix)
		}
		if st.Size() > MaxPropertyBytes {
			return nil, fmt.Errorf("property file %s is larger than %d bytes", name, MaxPropertyBytes)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("property file %s: %w", name, unwrapPath(err))
		}
		// `kubectl create secret --from-file` and editors keep a trailing
		// newline that would become part of a password. PEM values keep it:
		// it is part of their format and harmless.
		v := string(b)
		if !strings.HasSuffix(name, ".pem") {
			v = strings.TrimRight(v, "\r\n")
		}
		props[name] = v
	}
	return props, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// sensitiveFragments mark property names whose values are secret. librdkafka
// marks the same ones sensitive (sasl.password, ssl.key.password, ssl.key.pem,
// sasl.oauthbearer.client.secret, sasl.oauthbearer.config, ...); matching
// fragments rather than a fixed list also covers properties added later.
var sensitiveFragments = []string{"password", "secret", "key", "pem", "jaas", "token", "credential", "oauthbearer.config"}

// IsSensitive reports whether a property's value must never be shown.
func IsSensitive(name string) bool {
	for _, f := range sensitiveFragments {
		if strings.Contains(name, f) {
			return true
		}
	}
	return false
}

// Names returns the property names, sorted; safe to log.
func (p Properties) Names() []string {
	names := make([]string, 0, len(p))
	for n := range p {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Redactor removes secret values from text that leaves the process, and
// renders the Refs in it in the names the runner was started with: every
// text the runner writes passes through it.
type Redactor struct {
	r     *strings.Replacer
	names FieldNames
}

// WithNames returns a Redactor that also renders Refs in n's names; r may
// be nil (no secrets).
func (r *Redactor) WithNames(n FieldNames) *Redactor {
	out := &Redactor{names: n}
	if r != nil {
		out.r = r.r
	}
	return out
}

// minRedactLen avoids replacing a trivially short "secret" such as "1" in
// every number the runner prints. Real secrets are longer.
const minRedactLen = 4

// Redactor returns a Redactor for the sensitive values in p. Each value is
// also redacted line by line, so that a multi-line PEM key quoted partially in
// an error is still caught.
func (p Properties) Redactor() *Redactor {
	var pairs []string
	seen := map[string]bool{}
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) < minRedactLen {
			return
		}
		// The runner redacts JSON (the result) and quoted text (%q, slog), where
		// a value with a quote, backslash, newline, '<', '>' or '&' appears
		// escaped; redact those spellings too.
		for _, form := range []string{v, jsonEscaped(v), goQuoted(v)} {
			if !seen[form] {
				seen[form] = true
				pairs = append(pairs, form, "[redacted]")
			}
		}
	}
	for name, v := range p {
		if !IsSensitive(name) {
			continue
		}
		add(v)
		for _, line := range strings.Split(v, "\n") {
			add(line)
		}
	}
	// Longest first, so a value is never partly replaced by a shorter one.
	type pair struct{ old, new string }
	ps := make([]pair, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		ps = append(ps, pair{pairs[i], pairs[i+1]})
	}
	sort.Slice(ps, func(i, j int) bool { return len(ps[i].old) > len(ps[j].old) })
	flat := make([]string, 0, len(pairs))
	for _, x := range ps {
		flat = append(flat, x.old, x.new)
	}
	return &Redactor{r: strings.NewReplacer(flat...)}
}

// Redact returns s without any secret value, its Refs rendered. Rendering
// comes first, so a secret that happens to spell a setting's name is
// still redacted.
func (r *Redactor) Redact(s string) string {
	if r == nil {
		return s
	}
	s = r.names.Expand(s)
	if r.r == nil {
		return s
	}
	return r.r.Replace(s)
}

// jsonEscaped is v as encoding/json writes it inside a string, without quotes.
func jsonEscaped(v string) string {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	return string(b[1 : len(b)-1])
}

// goQuoted is v as %q writes it, without quotes.
func goQuoted(v string) string {
	q := strconv.Quote(v)
	return q[1 : len(q)-1]
}
