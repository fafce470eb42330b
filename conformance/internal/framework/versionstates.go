package framework

import (
	"errors"
	"flag"
	"regexp"
	"slices"
	"sync"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
)

// Versioning states the operator of a server made in their catalogue (interface Versioning 5 and
// 6), declared in the profile: a renamed config field whose old name is still accepted, one whose
// window ended, and an enum value removed. No capability has one at present and the suite cannot
// make one without the control API, so each accessor skips the spec, naming the settings, when
// the profile lacks them.

// RenamedField is a config field of a capability renamed from OldName to NewName (an optional
// property); StopsIn is the version that stops (or stopped) accepting the old name.
type RenamedField struct {
	CapabilityID, OldName, NewName, StopsIn string
}

// RemovedEnum is the value Value removed from the enum of capability CapabilityID's config
// property Field.
type RemovedEnum struct {
	CapabilityID, Field, Value string
}

// RenamedField is the profile's renamed_field_*: a renamed config field whose old name the
// service still accepts, until renamed_field_stops_in.
func (s *Spec) RenamedField() RenamedField {
	GinkgoHelper()
	c := s.f.cfg
	if c.RenamedFieldCapabilityID == "" {
		SkipFor(NotDeclared("unsupported: needs a config field renamed in the service's version, whose old name is still " +
			"accepted (no capability has one at present, and only the control API or the operator's catalogue makes one): " +
			"set renamed_field_capability_id, renamed_field_old_name, renamed_field_new_name and renamed_field_stops_in in the profile"))
	}
	return RenamedField{c.RenamedFieldCapabilityID, c.RenamedFieldOldName, c.RenamedFieldNewName, c.RenamedFieldStopsIn}
}

// EndedField is the profile's ended_field_*: a renamed config field whose old name's window
// ended (StopsIn is ended_field_stopped_in, at or before the service's version).
func (s *Spec) EndedField() RenamedField {
	GinkgoHelper()
	c := s.f.cfg
	if c.EndedFieldCapabilityID == "" {
		SkipFor(NotDeclared("unsupported: needs a renamed config field whose old name's window ended at or before the " +
			"service's version (only the control API or the operator's catalogue makes one): set ended_field_capability_id, " +
			"ended_field_old_name, ended_field_new_name and ended_field_stopped_in in the profile"))
	}
	return RenamedField{c.EndedFieldCapabilityID, c.EndedFieldOldName, c.EndedFieldNewName, c.EndedFieldStoppedIn}
}

// RemovedEnum is the profile's removed_enum_*: an enum value removed from a capability's config
// property, as a provider forces it.
func (s *Spec) RemovedEnum() RemovedEnum {
	GinkgoHelper()
	c := s.f.cfg
	if c.RemovedEnumCapabilityID == "" {
		SkipFor(NotDeclared("unsupported: needs an enum value removed from a capability's config property (only the control " +
			"API or the operator's catalogue removes one): set removed_enum_capability_id, removed_enum_field and " +
			"removed_enum_value in the profile"))
	}
	return RemovedEnum{c.RemovedEnumCapabilityID, c.RemovedEnumField, c.RemovedEnumValue}
}

var profileVersionRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`) })

// checkVersionStates refuses a profile that declares part of a versioning state, or a version
// that is not MAJOR.MINOR.PATCH.
func (c Config) checkVersionStates() error {
	groups := []struct {
		names   string
		values  []string
		version string
	}{
		{"renamed_field_capability_id, renamed_field_old_name, renamed_field_new_name and renamed_field_stops_in",
			[]string{c.RenamedFieldCapabilityID, c.RenamedFieldOldName, c.RenamedFieldNewName, c.RenamedFieldStopsIn}, c.RenamedFieldStopsIn},
		{"ended_field_capability_id, ended_field_old_name, ended_field_new_name and ended_field_stopped_in",
			[]string{c.EndedFieldCapabilityID, c.EndedFieldOldName, c.EndedFieldNewName, c.EndedFieldStoppedIn}, c.EndedFieldStoppedIn},
		{"removed_enum_capability_id, removed_enum_field and removed_enum_value",
			[]string{c.RemovedEnumCapabilityID, c.RemovedEnumField, c.RemovedEnumValue}, ""},
	}
	for _, g := range groups {
		if slices.Contains(g.values, "") && slices.ContainsFunc(g.values, func(v string) bool { return v != "" }) {
			return errors.New("conformance: " + g.names + " go together: declare them all or none")
		}
		if g.version != "" && !profileVersionRe().MatchString(g.version) {
			return errors.New("conformance: " + g.names + ": the version is MAJOR.MINOR.PATCH, such as 1.3.0")
		}
	}
	return nil
}

// registerVersionFlags adds the flags of the versioning states to fs.
func registerVersionFlags(fs *flag.FlagSet, v *Config) {
	for _, f := range []struct {
		p          *string
		name, help string
	}{
		{&v.RenamedFieldCapabilityID, "renamed-field-capability-id",
			"profile: a capability with a config field renamed in the service's version, its old name still accepted"},
		{&v.RenamedFieldOldName, "renamed-field-old-name",
			"profile: the old name of --renamed-field-capability-id's renamed field (listed deprecated)"},
		{&v.RenamedFieldNewName, "renamed-field-new-name", "profile: the new name of that field (an optional property)"},
		{&v.RenamedFieldStopsIn, "renamed-field-stops-in", "profile: the version that stops accepting the old name, e.g. 1.3.0"},
		{&v.EndedFieldCapabilityID, "ended-field-capability-id",
			"profile: a capability with a renamed config field whose old name's window ended"},
		{&v.EndedFieldOldName, "ended-field-old-name", "profile: the old name of --ended-field-capability-id's field, no longer accepted"},
		{&v.EndedFieldNewName, "ended-field-new-name", "profile: the new name of that field (an optional property)"},
		{&v.EndedFieldStoppedIn, "ended-field-stopped-in",
			"profile: the version that stopped accepting the old name, at or before the service's"},
		{&v.RemovedEnumCapabilityID, "removed-enum-capability-id", "profile: a capability one of whose config enums lost a value"},
		{&v.RemovedEnumField, "removed-enum-field",
			"profile: the config property of --removed-enum-capability-id whose enum lost the value"},
		{&v.RemovedEnumValue, "removed-enum-value", "profile: the value removed from that property's enum"},
	} {
		fs.StringVar(f.p, f.name, "", f.help)
	}
}
