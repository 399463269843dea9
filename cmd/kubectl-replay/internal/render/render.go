package render

// ReplayCommand is a `kubectl replay` command the user may run next, with
// the namespace always given: a hint must work from whatever namespace the
// reader's context is in.
func ReplayCommand(verb, name, namespace string, more ...string) string {
	s := "kubectl replay " + verb
	if name != "" {
		s += " " + name
	}
	s += " -n " + namespace
	for _, m := range more {
		s += " " + m
	}
	return s
}
