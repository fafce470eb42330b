package spec

import (
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// EventSchemas returns the schema of each webhook event's delivery body, by event name, as the
// description's `x-webhooks` extension states it. The extension follows Redocly's convention for
// OpenAPI 3.0 (the shape of 3.1 `webhooks`): event name -> Path Item whose
// post.requestBody.content["application/json"].schema is a $ref to a component schema. An entry
// in another shape, or naming a component the document lacks, is left out. The schemas are the
// document's own; callers must not modify them.
func EventSchemas(doc *openapi3.T) map[string]*openapi3.SchemaRef {
	out := map[string]*openapi3.SchemaRef{}
	hooks, _ := doc.Extensions["x-webhooks"].(map[string]any)
	if doc.Components == nil {
		return out
	}
	for name, item := range hooks {
		ref := dig(item, "post", "requestBody", "content", "application/json", "schema", "$ref")
		s, _ := ref.(string)
		const prefix = "#/components/schemas/"
		if !strings.HasPrefix(s, prefix) {
			continue
		}
		if sch := doc.Components.Schemas[strings.TrimPrefix(s, prefix)]; sch != nil && sch.Value != nil {
			out[name] = sch
		}
	}
	return out
}

// dig walks nested JSON objects (as decoded into map[string]any) along keys; nil when a step is
// missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
