package openshape

import (
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mediaspec/mediaspec/spec"
)

// describedAt is the reference's path of the live REST description, whose answer is an OpenAPI
// document (openapi, info, paths are that standard's names, not a choice of ours).
const describedAt = "/openapi.json"

// otherStandards are names a reference answer shares with a standard the suite reads in its own
// right: JSON Schema's keywords inside a config schema.
var otherStandards = map[string]bool{"title": true, "description": true}

// ReferenceNames returns the property names of the REST description doc (answers, requests and
// event payloads) whose x-provenance is reference everywhere they occur: the names of the
// reference's own choices where the text shows no shape, which only this package may name. Names
// the text states anywhere (a reference field may share one), names of other standards, and the
// names the control API's requests take (control, control.yaml: the optional hook contract the
// suite speaks by its own names) are left out.
func ReferenceNames(doc *openapi3.T, control []byte) (map[string]bool, error) {
	ref, text := map[string]bool{}, map[string]bool{}
	onPath := map[*openapi3.Schema]bool{}
	var walk func(s *openapi3.SchemaRef, inRef bool)
	walk = func(s *openapi3.SchemaRef, inRef bool) {
		if s == nil || s.Value == nil || onPath[s.Value] {
			return
		}
		onPath[s.Value] = true
		defer delete(onPath, s.Value)
		if src := provOf(s.Extensions); src.Kind != "" {
			inRef = src.Reference()
		} else if src := provOf(s.Value.Extensions); src.Kind != "" {
			inRef = src.Reference()
		}
		for name, p := range s.Value.Properties {
			src := provOf(p.Extensions)
			if src.Kind == "" && p.Value != nil {
				src = provOf(p.Value.Extensions)
			}
			isRef := src.Reference() || (src.Kind == "" && inRef)
			if isRef {
				ref[name] = true
			} else {
				text[name] = true
			}
			walk(p, isRef)
		}
		walk(s.Value.Items, inRef)
		for _, list := range [][]*openapi3.SchemaRef{s.Value.AllOf, s.Value.OneOf, s.Value.AnyOf} {
			for _, x := range list {
				walk(x, inRef)
			}
		}
	}
	for path, pi := range doc.Paths.Map() {
		if path == describedAt {
			continue
		}
		for _, op := range pi.Operations() {
			opRef := provOf(op.Extensions).Reference()
			for _, p := range op.Parameters {
				if p.Value != nil && !opRef && !provOf(p.Value.Extensions).Reference() {
					text[p.Value.Name] = true
				}
			}
			for _, r := range op.Responses.Map() {
				if r.Value == nil {
					continue
				}
				for _, mt := range r.Value.Content {
					walk(mt.Schema, opRef)
				}
			}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					walk(mt.Schema, opRef)
				}
			}
		}
	}
	for _, s := range spec.EventSchemas(doc) {
		walk(s, false)
	}
	ctl, err := controlRequestNames(control)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for n := range ref {
		if !text[n] && !otherStandards[n] && !ctl[n] {
			out[n] = true
		}
	}
	return out, nil
}

// controlRequestNames are the property names of the control API's request bodies.
func controlRequestNames(control []byte) (map[string]bool, error) {
	names := map[string]bool{}
	if len(control) == 0 {
		return names, nil
	}
	doc, err := openapi3.NewLoader().LoadFromData(control)
	if err != nil {
		return nil, err
	}
	var walk func(s *openapi3.SchemaRef, depth int)
	walk = func(s *openapi3.SchemaRef, depth int) {
		if s == nil || s.Value == nil || depth > 8 {
			return
		}
		for n, p := range s.Value.Properties {
			names[n] = true
			walk(p, depth+1)
		}
		walk(s.Value.Items, depth+1)
	}
	for _, pi := range doc.Paths.Map() {
		for _, op := range pi.Operations() {
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					walk(mt.Schema, 0)
				}
			}
		}
	}
	return names, nil
}

// provOf is spec.ProvenanceOf.
var provOf = spec.ProvenanceOf
