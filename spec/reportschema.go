package spec

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ReportSchemaJSON returns the embedded JSON Schema of the conformance run's JSON report
// (report.schema.json: mediaspec check --json-report, merge-reports --json-report). The caller
// owns the slice.
func ReportSchemaJSON() []byte { return mustRead("report.schema.json") }

// reportSchemaURL is the schema's $id.
const reportSchemaURL = "https://github.com/mediaspec/mediaspec/spec/report.schema.json"

// reportSchema is compiled on first use.
var reportSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(ReportSchemaJSON()))
	if err != nil {
		return nil, fmt.Errorf("spec: report.schema.json: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(reportSchemaURL, doc); err != nil {
		return nil, fmt.Errorf("spec: report.schema.json: %w", err)
	}
	return c.Compile(reportSchemaURL)
})

// ValidateReport checks a JSON report against report.schema.json; the error names what does not
// fit and where.
func ValidateReport(data []byte) error {
	sch, err := reportSchema()
	if err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("spec: report: %w", err)
	}
	if err := sch.Validate(doc); err != nil {
		return fmt.Errorf("spec: the report does not fit report.schema.json: %w", err)
	}
	return nil
}
