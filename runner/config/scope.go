package config

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s/%d", tp.Topic, tp.Partition) }

// Scope is the set of partitions a run may touch. An empty scope means every
// topic the group has committed offsets for.
type Scope struct {
	// Topics maps each topic to its chosen partitions, sorted; a nil slice
	// means every partition of the topic.
	Topics map[string][]int32
}

// Empty reports whether no topic was named.
func (s Scope) Empty() bool { return len(s.Topics) == 0 }

// TopicNames returns the named topics, sorted.
func (s Scope) TopicNames() []string {
	names := make([]string, 0, len(s.Topics))
	for t := range s.Topics {
		names = append(names, t)
	}
	slices.Sort(names)
	return names
}

// Contains reports whether the scope includes a partition. An empty scope
// contains everything.
func (s Scope) Contains(tp TopicPartition) bool {
	if s.Empty() {
		return true
	}
	parts, ok := s.Topics[tp.Topic]
	if !ok {
		return false
	}
	if parts == nil {
		return true
	}
	_, found := slices.BinarySearch(parts, tp.Partition)
	return found
}

// String renders the scope in the same grammar it is parsed from.
func (s Scope) String() string {
	var b strings.Builder
	for i, t := range s.TopicNames() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t)
		if parts := s.Topics[t]; parts != nil {
			b.WriteByte(':')
			for j, p := range parts {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strconv.Itoa(int(p)))
			}
		}
	}
	return b.String()
}

// MaxPartitionsPerEntry bounds a range such as orders:0-99999999 so a typo
// cannot allocate gigabytes.
const MaxPartitionsPerEntry = 100000

// ParseScope parses entries of the form "orders" or "orders:0,1,2" (ranges
// such as "orders:0-3,7" are accepted too). Entries naming the same topic are
// merged; a bare topic name wins over a partition list.
func ParseScope(entries []string) (Scope, error) {
	s := Scope{Topics: map[string][]int32{}}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		topic, list, hasList := strings.Cut(e, ":")
		if err := ValidateTopic(topic); err != nil {
			return Scope{}, fmt.Errorf("%q: %w", e, err)
		}
		if !hasList {
			s.Topics[topic] = nil
			continue
		}
		parts, err := parsePartitionList(list)
		if err != nil {
			return Scope{}, fmt.Errorf("%q: %w", e, err)
		}
		if cur, seen := s.Topics[topic]; seen && cur == nil {
			continue // already the whole topic
		}
		s.Topics[topic] = append(s.Topics[topic], parts...)
		slices.Sort(s.Topics[topic])
		s.Topics[topic] = slices.Compact(s.Topics[topic])
	}
	return s, nil
}

func parsePartitionList(list string) ([]int32, error) {
	if list == "" {
		return nil, errors.New("partition list after ':' is empty; name the topic alone for every partition")
	}
	var out []int32
	for _, item := range strings.Split(list, ",") {
		if strings.HasPrefix(item, "-") || strings.HasPrefix(item, "+") {
			return nil, fmt.Errorf("partition %q must be a whole number ≥ 0", item)
		}
		lo, hi, isRange := strings.Cut(item, "-")
		a, err := parsePartition(lo)
		if err != nil {
			return nil, err
		}
		b := a
		if isRange {
			if b, err = parsePartition(hi); err != nil {
				return nil, err
			}
			if b < a {
				return nil, fmt.Errorf("partition range %q runs backwards", item)
			}
		}
		if int(b-a)+len(out) >= MaxPartitionsPerEntry {
			return nil, fmt.Errorf("more than %d partitions in one entry", MaxPartitionsPerEntry)
		}
		// Count in int: p++ on an int32 p wraps at 2147483647, so p <= b
		// would never end for that partition.
		for p := int(a); p <= int(b); p++ {
			out = append(out, int32(p))
		}
	}
	return out, nil
}

func parsePartition(s string) (int32, error) {
	if s == "" {
		return 0, errors.New("empty partition number")
	}
	if s[0] == '-' || s[0] == '+' {
		return 0, fmt.Errorf("partition %q must be a whole number ≥ 0", s)
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("partition %q must be a whole number ≥ 0", s)
	}
	return int32(n), nil
}

// Kafka's own rule for topic names (org.apache.kafka.common.internals.Topic).
var legalTopic = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// MaxTopicLength is Kafka's limit on topic name length.
const MaxTopicLength = 249

// ValidateTopic applies Kafka's topic naming rules.
func ValidateTopic(t string) error {
	switch {
	case t == "":
		return errors.New("topic name is empty")
	case t == "." || t == "..":
		return fmt.Errorf("topic name %q is not allowed", t)
	case len(t) > MaxTopicLength:
		return fmt.Errorf("topic name is %d characters, more than Kafka's %d", len(t), MaxTopicLength)
	case !legalTopic.MatchString(t):
		return fmt.Errorf("topic name %q may contain only ASCII letters, digits, '.', '_' and '-'", t)
	}
	return nil
}

// ValidateGroup checks a consumer group ID. Kafka allows almost any string,
// but an empty, padded or control-character ID is always a mistake.
func ValidateGroup(g string) error {
	switch {
	case g == "":
		return errors.New("is empty")
	case strings.TrimSpace(g) != g:
		return fmt.Errorf("%q has leading or trailing spaces", g)
	case len(g) > 255:
		return fmt.Errorf("is %d bytes, more than 255", len(g))
	}
	for _, r := range g {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%q contains a control character", g)
		}
	}
	return nil
}
