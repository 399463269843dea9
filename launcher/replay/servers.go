package replay

import (
	"slices"
	"strings"
)

// The one reading of a Kafka bootstrap list. ServerList splits it as the
// runner (librdkafka's bootstrap.servers) reads it; serverSet says which
// cluster it names, so that two lists are compared, and a group locked, the
// same way everywhere: the group lock's key, an undo's check that it
// undoes on the same cluster, and a Knative resource's servers.

// ServerList splits a comma-separated bootstrap list into its entries, each
// trimmed, empty ones dropped, spelling and order kept: what the runner is
// given.
func ServerList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// serverSet is the set of servers a bootstrap list names, in one spelling
// per server: lower-cased (host names are not case-sensitive), without a
// protocol prefix (PLAINTEXT://, SSL://, SASL_SSL://: the protocol does not
// change which brokers, and so which group, it reaches), sorted, each
// once. Two lists name the same cluster's
// servers when their sets are equal. A list that names the same cluster
// through other servers (another broker, an IP address) is, unavoidably,
// another set.
func serverSet(s string) []string {
	var out []string
	for _, e := range ServerList(s) {
		e = strings.ToLower(e)
		if i := strings.Index(e, "://"); i >= 0 {
			e = e[i+len("://"):]
		}
		if e == "" {
			continue
		}
		out = append(out, e)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ServersKey is serverSet in one string, for a map or an index.
func ServersKey(s string) string {
	return strings.Join(serverSet(s), ",")
}

// SameServers reports whether two bootstrap lists name the same servers
// (serverSet).
func SameServers(a, b string) bool {
	return slices.Equal(serverSet(a), serverSet(b))
}
