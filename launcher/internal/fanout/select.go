package fanout

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
)

// Candidate is a group as the cluster lists it when a selector is
// resolved (the runner's --list, read by a Job: the launcher never holds
// the credentials).
type Candidate struct {
	Group string
	// Committed are the topics the group has committed offsets on.
	Committed []string
}

// Select resolves sel over the groups the cluster listed, once, at
// acceptance: the groups that match an include and no exclude and, with
// withOffsetsOn, have committed offsets on one of those topics; sorted,
// each once. A pattern that does not compile, and a selector that
// matches nothing, are errors naming the field: a request over no group
// is refused, never run as a success that did nothing.
func Select(listed []Candidate, sel *v1alpha1.GroupSelector) ([]string, error) {
	include, err := compile("spec.groupSelector.include", sel.Include)
	if err != nil {
		return nil, err
	}
	exclude, err := compile("spec.groupSelector.exclude", sel.Exclude)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range listed {
		if !matchAny(include, c.Group) || matchAny(exclude, c.Group) {
			continue
		}
		if len(sel.WithOffsetsOn) > 0 && !slices.ContainsFunc(c.Committed, func(t string) bool { return slices.Contains(sel.WithOffsetsOn, t) }) {
			continue
		}
		out = append(out, c.Group)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) == 0 {
		what := fmt.Sprintf("of the %d groups the cluster lists", len(listed))
		if len(sel.WithOffsetsOn) > 0 {
			what += " with committed offsets on " + strings.Join(sel.WithOffsetsOn, ", ")
		}
		return nil, fmt.Errorf("spec.groupSelector: matches no group %s; nothing to replay", what)
	}
	return out, nil
}

// matcher is one pattern: a prefix, or a regular expression of the whole
// name.
type matcher struct {
	prefix string
	re     *regexp.Regexp
}

func compile(field string, ps []v1alpha1.GroupPattern) ([]matcher, error) {
	out := make([]matcher, len(ps))
	for i, p := range ps {
		switch {
		case p.Regex != "":
			re, err := regexp.Compile(`^(?:` + p.Regex + `)$`)
			if err != nil {
				return nil, fmt.Errorf("%s[%d].regex: %q is not a regular expression (RE2): %w", field, i, p.Regex, err)
			}
			out[i].re = re
		case p.Prefix != "":
			out[i].prefix = p.Prefix
		default:
			return nil, fmt.Errorf("%s[%d]: set exactly one of prefix and regex", field, i)
		}
	}
	return out, nil
}

func matchAny(ms []matcher, group string) bool {
	for _, m := range ms {
		if m.re != nil && m.re.MatchString(group) || m.re == nil && strings.HasPrefix(group, m.prefix) {
			return true
		}
	}
	return false
}
