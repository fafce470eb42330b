// Package spec embeds the contract of the media generation service — the REST description
// (openapi.yaml), the optional test-control API (control.yaml), the optional test-mode inputs
// (testmode.yaml) and the rule catalogue (rules.yaml) —
// and offers what the mock's tests and the conformance suite share: loading and validating those
// documents, checking HTTP traffic against the REST description, and reading the rule catalogue.
// Beside them are the JSON Schemas of the conformance run's JSON report (report.schema.json) and
// of a target profile, the --config file of mediaspec check (profile.schema.json).
//
// Every loader returns a fresh value that the caller owns. One thing is kept between calls: the
// JSON of the embedded REST description, built once per process on first use (OpenAPIJSON; the
// embedded document never changes), of which each call gets its own copy.
package spec

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"github.com/mediaspec/mediaspec/internal/contract"
	"os"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

//go:embed openapi.yaml control.yaml testmode.yaml rules.yaml report.schema.json profile.schema.json
var embedded embed.FS

// Version is the info.version the REST description states; the live description must say the same.
const Version = "1.2.0"

// BasePath is the path of the versioned API root the REST description's server names.
const BasePath = "/api/v1"

func mustRead(name string) []byte {
	b, err := embedded.ReadFile(name)
	if err != nil {
		// The files are embedded at build time; a missing one is a build defect, not a runtime state.
		panic(fmt.Sprintf("spec: embedded %s missing: %v", name, err))
	}
	return b
}

// OpenAPIYAML returns the embedded REST description as written (YAML). The caller owns the slice.
func OpenAPIYAML() []byte { return mustRead("openapi.yaml") }

// ControlYAML returns the embedded test-control API description (YAML). The caller owns the slice.
func ControlYAML() []byte { return mustRead("control.yaml") }

// TestModeYAML returns the embedded contract of test-mode inputs (testmode.yaml), the optional
// extension a staging server may honour for its test keys. The caller owns the slice.
func TestModeYAML() []byte { return mustRead("testmode.yaml") }

// TestInputHeader is the request header of a test input (testmode.yaml): the reference's choice.
const TestInputHeader = contract.TestInputHeader

// RulesYAML returns the embedded rule catalogue (YAML). The caller owns the slice.
func RulesYAML() []byte { return mustRead("rules.yaml") }

// LoadDocument parses an OpenAPI 3.0 document from YAML or JSON bytes, resolves its internal
// references and validates it. It refuses external references: the contract is one self-contained
// file.
func LoadDocument(ctx context.Context, data []byte) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	loader.Context = ctx
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("spec: parse OpenAPI document: %w", err)
	}
	if err := doc.Validate(ctx); err != nil {
		return nil, fmt.Errorf("spec: invalid OpenAPI document: %w", err)
	}
	return doc, nil
}

// LoadDocumentFile is LoadDocument on a file, for a copy of the contract kept on disk.
func LoadDocumentFile(ctx context.Context, path string) (*openapi3.T, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	return LoadDocument(ctx, data)
}

// LoadOpenAPI loads and validates the embedded REST description.
func LoadOpenAPI(ctx context.Context) (*openapi3.T, error) {
	return LoadDocument(ctx, OpenAPIYAML())
}

// LoadControl loads and validates the embedded test-control API description.
func LoadControl(ctx context.Context) (*openapi3.T, error) {
	return LoadDocument(ctx, ControlYAML())
}

// OpenAPIJSON returns the embedded REST description as JSON, the body a service answers on
// GET /openapi.json. The embedded document never changes, so it is loaded, validated and encoded
// once per process; each call returns its own copy.
func OpenAPIJSON(ctx context.Context) ([]byte, error) {
	b, err := openAPIJSON()
	return bytes.Clone(b), err
}

var openAPIJSON = sync.OnceValues(func() ([]byte, error) {
	doc, err := LoadOpenAPI(context.Background())
	if err != nil {
		return nil, err
	}
	return json.Marshal(doc)
})
