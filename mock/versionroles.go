package mock

import (
	"github.com/mediaspec/mediaspec/internal/mock/catalog"
	"github.com/mediaspec/mediaspec/spec"
)

// The versioning states of the role fixtures (Config.RoleKeys), which a target profile declares
// (renamed_field_*, ended_field_*, removed_enum_*) and which only the control API makes otherwise
// (interface Versioning 5 and 6): a config field renamed in the service's version whose old name
// is still accepted, one renamed a minor version earlier whose window ended at this version, and
// an enum value a provider forced out. They change the catalogue the whole mock serves, so they
// sit on capabilities the control API's own renames and removals leave alone (those take the
// first capability with a priced count, and a value they find in the schema).
const (
	RoleRenamedCapability     = "image_pro"
	RoleRenamedOldName        = "num_images"
	RoleEndedCapability       = "image_fast"
	RoleEndedOldName          = "images"
	RoleRenamedNewName        = "count" // of both renamed fields
	RoleRemovedEnumCapability = "video_cinematic"
	RoleRemovedEnumField      = "camera_motion"
	RoleRemovedEnumValue      = "handheld"
)

// RenamedField is a renamed config field of the role fixtures: capability Capability's OldName
// was renamed to NewName, and StopsIn is the version that stops (or stopped) accepting OldName.
type RenamedField struct {
	Capability string `json:"capability_id"`
	OldName    string `json:"old_name"`
	NewName    string `json:"new_name"`
	StopsIn    string `json:"stops_in"`
}

// RemovedEnum is an enum value of the role fixtures removed from capability Capability's config
// property Field.
type RemovedEnum struct {
	Capability string `json:"capability_id"` // the capability whose config lost the value
	Field      string `json:"field"`         // the config property whose enum it left
	Value      string `json:"value"`         // the value removed
}

// bootVersionRoles makes the versioning states of the role fixtures once the catalogue holds its
// start state (and again after each reset, which forgets them), and adds them to the role keys. A
// catalogue without the capabilities they need (Config.Fixtures) gets none of them.
func (s *Server) bootVersionRoles() {
	s.mu.Lock()
	r := s.start.roles
	s.mu.Unlock()
	if r == nil {
		return
	}
	var renamed, ended *RenamedField
	var removed *RemovedEnum
	alias := catalog.Alias{Name: RoleRenamedOldName, Field: RoleRenamedNewName}
	if a, err := s.svc.Catalog.SetAlias(RoleRenamedCapability, alias); err == nil {
		renamed = &RenamedField{RoleRenamedCapability, a.Name, a.Field, a.StopsIn}
	}
	// Renamed in the minor version before this one: this version stopped accepting the old name.
	if a, err := s.svc.Catalog.SetAlias(RoleEndedCapability, catalog.Alias{Name: RoleEndedOldName, Field: RoleRenamedNewName,
		StopsIn: spec.Version}); err == nil {
		ended = &RenamedField{RoleEndedCapability, a.Name, a.Field, a.StopsIn}
	}
	if s.svc.Catalog.RemoveEnumValue(RoleRemovedEnumCapability, RoleRemovedEnumField, RoleRemovedEnumValue) == nil {
		removed = &RemovedEnum{RoleRemovedEnumCapability, RoleRemovedEnumField, RoleRemovedEnumValue}
	}
	s.mu.Lock()
	s.start.roles.Renamed, s.start.roles.Ended, s.start.roles.RemovedEnum = renamed, ended, removed
	s.mu.Unlock()
}
