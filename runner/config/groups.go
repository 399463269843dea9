package config

import (
	"fmt"
	"slices"
)

// Several groups in one run: --group given more than once, or
// --all-groups, as kafka-consumer-groups.sh --reset-offsets takes them
// (KIP-379). Each group is then a run of its own (the runner's
// groups.go); what a run over one group is and writes does not change.

// Multi reports whether the run moves several groups: a --group given
// more than once, or --all-groups (which may list one group, or none, and
// still writes the result over several groups: its shape depends on the
// flags, never on the cluster).
func (c *Config) Multi() bool { return c.AllGroups || len(c.Groups) > 0 }

// groupsSetting names the setting that chose several groups.
func (c *Config) groupsSetting() string {
	if c.AllGroups {
		return Ref(FlagAllGroups)
	}
	return fmt.Sprintf("%d × %s", len(c.Groups), Ref(FlagGroup))
}

// ForGroup is the configuration of one group's run within a run over
// several: the same settings, for that group alone.
func (c *Config) ForGroup(group string) *Config {
	g := *c
	g.Group, g.Groups, g.AllGroups = group, nil, false
	g.Topics = slices.Clone(c.Topics)
	return &g
}

// validateGroups checks --group (once or repeated), --all-groups and
// --continue-on-error together.
func (c *Config) validateGroups(bad func(flagName, env, format string, a ...any)) {
	switch {
	case c.AllGroups && (c.Group != "" || len(c.Groups) > 0):
		bad(FlagAllGroups, EnvAllGroups, "conflicts with %s, which names the groups itself; give one or the other", Ref(FlagGroup))
	case c.AllGroups:
	case len(c.Groups) > 0:
		seen := make(map[string]bool, len(c.Groups))
		for i, g := range c.Groups {
			if err := ValidateGroup(g); err != nil {
				// No environment variable: REPLAY_GROUP holds one group.
				bad(FlagGroup, "", "group %d of %d: %v", i+1, len(c.Groups), err)
			} else if seen[g] {
				bad(FlagGroup, "", "group %q is given more than once; give each group once", g)
			}
			seen[g] = true
		}
	default:
		if err := ValidateGroup(c.Group); err != nil {
			bad(FlagGroup, EnvGroup, "%v", err)
		}
	}
	if !c.Multi() {
		if c.ContinueOnError {
			bad(FlagContinueOnError, EnvContinueOnError, "only applies to a run over several groups (%s more than once, or %s)", Ref(FlagGroup), Ref(FlagAllGroups))
		}
		return
	}
	// The launcher reads one group's record from a pod's log; it runs one
	// group per Job.
	if c.EmitRecord {
		bad(FlagEmitRecord, EnvEmitRecord, "writes one group's record, and this run moves several groups (%s); use %s or %s %s", c.groupsSetting(), Ref(FlagResultFile), Ref(FlagOutput), OutputJSON)
	}
}
