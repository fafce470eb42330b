package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	yaml "go.yaml.in/yaml/v3"
)

// ProfileSchemaJSON returns the embedded JSON Schema of a target profile (profile.schema.json: the
// YAML file of mediaspec check --config, docs/staging.md). The caller owns the slice.
func ProfileSchemaJSON() []byte { return mustRead("profile.schema.json") }

// profileSchemaURL is the schema's $id.
const profileSchemaURL = "https://github.com/mediaspec/mediaspec/spec/profile.schema.json"

// profileSchema is compiled on first use.
var profileSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(ProfileSchemaJSON()))
	if err != nil {
		return nil, fmt.Errorf("spec: profile.schema.json: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(profileSchemaURL, doc); err != nil {
		return nil, fmt.Errorf("spec: profile.schema.json: %w", err)
	}
	return c.Compile(profileSchemaURL)
})

// ValidateProfile checks a profile, YAML as written, against profile.schema.json; the error names
// what does not fit and where. An empty file is a valid profile (it declares nothing).
func ValidateProfile(data []byte) error {
	sch, err := profileSchema()
	if err != nil {
		return err
	}
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("spec: profile: %w", err)
	}
	if v == nil {
		v = map[string]any{}
	}
	// Through JSON, so the validator sees JSON's kinds of values (YAML's maps and numbers differ).
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("spec: profile: %w", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("spec: profile: %w", err)
	}
	if err := sch.Validate(doc); err != nil {
		return fmt.Errorf("spec: the profile does not fit profile.schema.json: %w", err)
	}
	return nil
}
