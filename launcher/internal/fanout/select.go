package fanout

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/kafka-replay/kafka-replay/launcher/api/v1alpha1"
	"github.com/kafka-replay/kafka-replay/launcher/internal/state"
	"github.com/kafka-replay/kafka-replay/runner/report"
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
		return nil, &SelectError{Reason: ReasonNoGroupsMatched, Message: fmt.Sprintf("spec.groupSelector: matches no group %s; nothing to replay", what)}
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

// Reasons a selector's resolution refuses a parent with (its Finished
// reason; state says what each means).
const (
	ReasonNoGroupsMatched   = state.ReasonNoGroupsMatched
	ReasonTooManyGroups     = state.ReasonTooManyGroups
	ReasonListingIncomplete = state.ReasonListingIncomplete
)

// MaxGroups bounds a parent's groups, a selector's as spec.groups's
// (its +kubebuilder MaxItems): launcher/README.md says why.
const MaxGroups = 500

// SelectError is a selector refused with a reason.
type SelectError struct{ Reason, Message string }

func (e *SelectError) Error() string { return e.Message }

// Resolve is Select over a list Job's listing (the runner's REPLAY_LIST,
// report.Groups), with what a listing adds: one with groups omitted (a
// termination message's copy cut to fit) is refused, since a group it
// does not show is one the request would silently leave out; with
// withOffsetsOn, so is one where a group the names match could not have
// its commits read, which it could neither include nor leave out; and
// more than MaxGroups is refused, "narrow the selector".
func Resolve(listing report.Groups, sel *v1alpha1.GroupSelector) ([]string, error) {
	if listing.Omitted > 0 {
		return nil, &SelectError{Reason: ReasonListingIncomplete, Message: fmt.Sprintf("spec.groupSelector: the listing leaves out %d groups (cut to fit the termination message); it cannot be resolved from it", listing.Omitted)}
	}
	listed := make([]Candidate, 0, len(listing.Groups))
	var unread []Candidate
	for _, g := range listing.Groups {
		c := Candidate{Group: g.Group, Committed: g.Committed}
		if g.Error != "" && len(sel.WithOffsetsOn) > 0 {
			unread = append(unread, c)
			continue
		}
		listed = append(listed, c)
	}
	if len(unread) > 0 {
		byName := *sel
		byName.WithOffsetsOn = nil
		if names, err := Select(unread, &byName); err == nil {
			return nil, &SelectError{Reason: ReasonListingIncomplete, Message: fmt.Sprintf("spec.groupSelector.withOffsetsOn: the committed offsets of %s could not be read, so whether they match is unknown; retry", nameSome(names))}
		} else if se := (*SelectError)(nil); !errors.As(err, &se) {
			return nil, err
		}
	}
	out, err := Select(listed, sel)
	if err != nil {
		return nil, err
	}
	if len(out) > MaxGroups {
		return nil, &SelectError{Reason: ReasonTooManyGroups, Message: fmt.Sprintf("spec.groupSelector: matches %d groups, more than the %d a request takes; narrow the selector", len(out), MaxGroups)}
	}
	return out, nil
}

// nameSome names the first few of names, and counts the rest, so a
// message stays short whatever the cluster lists.
func nameSome(names []string) string {
	const some = 5
	if len(names) <= some {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:some], ", "), len(names)-some)
}

// Replayable is the listing without the groups a selector never chooses,
// as the runner's --all-groups leaves them out: the groups of another
// kind than spec.groupType, which for Auto (or unset) means the consumer
// groups (classic groups of the consumer protocol or of none, and KIP-848
// consumer groups; not share, streams or Connect groups), and a
// target.fromGroup's source group. Omitted is kept: Resolve refuses a
// listing cut short whatever was left out. It is pure.
func Replayable(listing report.Groups, spec *v1alpha1.ReplayRequestSpec) report.Groups {
	out := listing
	out.Groups = nil
	for _, g := range listing.Groups {
		// The kinds are the listing's words, which spec.groupType takes.
		kind := g.GroupType
		if kind == "" {
			kind = "Classic" // a broker before KIP-848
		}
		keep := kind == string(spec.GroupType)
		if spec.GroupType == "" || spec.GroupType == "Auto" {
			keep = kind == "Consumer" || kind == "Classic" && (g.ProtocolType == "consumer" || g.ProtocolType == "")
		}
		if from := spec.Target.FromGroup; from != nil && *from == g.Group {
			keep = false
		}
		if keep {
			out.Groups = append(out.Groups, g)
		}
	}
	return out
}
