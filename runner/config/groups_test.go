package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestGroupsFlags: --group given more than once and --all-groups choose
// several groups, as kafka-consumer-groups.sh takes them; every misuse is
// refused naming its setting.
func TestGroupsFlags(t *testing.T) {
	clearEnv(t)
	tests := []struct {
		name   string
		flags  []string
		env    map[string]string
		groups []string // Config.Groups when valid
		group  string   // Config.Group when valid
		multi  bool
		flag   string // the FieldError's flag when refused
		says   string
	}{
		{name: "one group is a run of one group", flags: []string{"--group", "a"}, group: "a"},
		{name: "repeated group", flags: []string{"--group", "a", "--group", "b"}, groups: []string{"a", "b"}, multi: true},
		{name: "flag wins over env", flags: []string{"--group", "a", "--group", "b"}, env: map[string]string{EnvGroup: "z"}, groups: []string{"a", "b"}, multi: true},
		{name: "one flag wins over env", flags: []string{"--group", "a"}, env: map[string]string{EnvGroup: "z"}, group: "a"},
		{name: "all groups", flags: []string{"--all-groups", "--continue-on-error"}, multi: true},
		{name: "all groups from env", env: map[string]string{EnvAllGroups: "true"}, multi: true},
		{name: "duplicate group", flags: []string{"--group", "a", "--group", "a"}, flag: FlagGroup, says: `group "a" is given more than once`},
		{name: "empty group among several", flags: []string{"--group", "a", "--group", ""}, flag: FlagGroup, says: "group 2 of 2: is empty"},
		{name: "all groups and group", flags: []string{"--all-groups", "--group", "a"}, flag: FlagAllGroups, says: "conflicts with --group"},
		{name: "all groups and env group", flags: []string{"--all-groups"}, env: map[string]string{EnvGroup: "a"}, flag: FlagAllGroups, says: "conflicts with --group"},
		{name: "continue on error with one group", flags: []string{"--group", "a", "--continue-on-error"}, flag: FlagContinueOnError, says: "only applies to a run over several groups"},
		{name: "emit record with several groups", flags: []string{"--group", "a", "--group", "b", "--emit-record"}, flag: FlagEmitRecord, says: "writes one group's record"},
		{name: "source among the groups", flags: []string{"--group", "a", "--group", "b", "--to", "group:b"}, flag: FlagTo, says: "group:b is the group being repositioned"},
		{name: "repeated flag among several groups", flags: []string{"--group", "a", "--group", "b", "--timeout", "1s", "--timeout", "2s"}, flag: FlagTimeout, says: "given more than once"},
		{name: "plan file with several groups", flags: []string{"--all-groups", "--to", "plan:/nonexistent"}, flag: FlagTo, says: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			a := append([]string{"--bootstrap-servers", "k:1"}, tt.flags...)
			if !slices.Contains(tt.flags, "--to") {
				a = append(a, "--to", "earliest")
			}
			c, err := load(t, a...)
			if tt.flag == "" {
				if err != nil {
					t.Fatalf("Load(%q): %v", a, err)
				}
				if c.Multi() != tt.multi || c.Group != tt.group || !slices.Equal(c.Groups, tt.groups) {
					t.Fatalf("Load(%q): Multi %v Group %q Groups %q, want %v %q %q", a, c.Multi(), c.Group, c.Groups, tt.multi, tt.group, tt.groups)
				}
				return
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("Load(%q): err = %v, want Errors", a, err)
			}
			i := slices.IndexFunc(es, func(e *FieldError) bool { return e.Flag == tt.flag })
			if i < 0 {
				t.Fatalf("Load(%q): no error for --%s in %v", a, tt.flag, err)
			}
			if !strings.Contains(es[i].Error(), tt.says) {
				t.Errorf("error %q does not say %q", es[i], tt.says)
			}
		})
	}
}

// TestMultiRefusesOneGroupFiles: a file: target of several groups' rows
// is not read yet, and plan: and undo: files are one group's: each is
// refused naming the target, before its file is decoded as anything else.
func TestMultiRefusesOneGroupFiles(t *testing.T) {
	clearEnv(t)
	csv := writeFile(t, "offsets.csv", "orders,0,5\n")
	_, err := load(t, "--bootstrap-servers", "k:1", "--group", "a", "--group", "b", "--to", "file:"+csv)
	if err == nil || !strings.Contains(err.Error(), "a file: target reads one group's file, and this run moves several groups (2 × --group)") {
		t.Fatalf("err = %v", err)
	}
}

// TestForGroup: a group's run has the run's settings for that group alone.
func TestForGroup(t *testing.T) {
	clearEnv(t)
	c := mustLoad(t, "--bootstrap-servers", "k:1", "--group", "a", "--group", "b", "--to", "earliest", "--topic", "orders", "--continue-on-error")
	g := c.ForGroup("b")
	if g.Group != "b" || g.Multi() || g.Groups != nil || !g.ContinueOnError || g.Target.Kind != KindEarliest {
		t.Fatalf("ForGroup: %+v", g)
	}
	g.Topics[0] = "changed"
	if c.Topics[0] != "orders" {
		t.Fatal("ForGroup shares the topics with the run")
	}
}

// TestGroupsFailureIsMulti: an invalid run over several groups, even one
// stopped at a repeated flag before anything else is read, is still a run
// over several groups, so that its failure is written in that schema.
func TestGroupsFailureIsMulti(t *testing.T) {
	clearEnv(t)
	for _, flags := range [][]string{
		{"--group", "a", "--group", "b", "--timeout", "1s", "--timeout", "2s"},
		{"--group", "a", "--group", "a"},
		{"--all-groups", "--to", "nonsense"},
	} {
		c, err := load(t, append([]string{"--bootstrap-servers", "k:1", "--to", "earliest"}, flags...)...)
		if err == nil || c == nil || !c.Multi() {
			t.Errorf("Load(%q): err %v, Multi %v", flags, err, c != nil && c.Multi())
		}
	}
}
