package framework

import (
	"context"
	"testing"

	"github.com/mediaspec/mediaspec/spec"
)

func TestOperationsComeFromTheDescription(t *testing.T) {
	v, err := spec.NewEmbeddedValidator(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f := testFramework(t)
	f.validator = v
	f.cfg.Reference = true // the reference's paths for the live description and the probes
	s := &Spec{f: f}
	ops := s.Operations()
	if len(ops) < 25 {
		t.Fatalf("%d operations, want every operation of spec/openapi.yaml", len(ops))
	}
	byName := map[string]Operation{}
	for _, o := range ops {
		byName[o.String()] = o
		if !o.Public && o.Scope != "read" && o.Scope != "generate" {
			t.Errorf("%s: keyed operation with x-scope %q", o, o.Scope)
		}
	}
	for name, want := range map[string]Operation{
		"GET /health/live":                       {Public: true},
		"GET /openapi.json":                      {Scope: "read"},
		"POST /estimates":                        {Scope: "read"},
		"POST /generations":                      {Scope: "generate"},
		"DELETE /webhooks/{id}":                  {Scope: "generate"},
		"POST /uploads/{assetId}/finalize":       {Scope: "generate"},
		"GET /generations/{id}/wait":             {Scope: "read"},
		"POST /workflows/templates/{key}/invoke": {Scope: "generate"},
	} {
		got, ok := byName[name]
		if !ok {
			t.Errorf("no operation %s", name)
			continue
		}
		if got.Public != want.Public || got.Scope != want.Scope {
			t.Errorf("%s: public %v scope %q, want public %v scope %q", name, got.Public, got.Scope, want.Public, want.Scope)
		}
	}
	if p := byName["POST /uploads/{assetId}/finalize"].Params(); len(p) != 1 || p[0] != "assetId" {
		t.Errorf("params of finalize = %v, want [assetId]", p)
	}
}

// The paths the text does not give are the target's: moved where it names them, left out where it
// names none.
func TestOperationsAtTheNamedPaths(t *testing.T) {
	v, err := spec.NewEmbeddedValidator(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f := testFramework(t)
	f.validator = v
	f.cfg = Config{LivePath: "/livez", DescriptionPath: Off}
	byName := map[string]Operation{}
	for _, o := range (&Spec{f: f}).Operations() {
		byName[o.String()] = o
	}
	if o, ok := byName["GET /livez"]; !ok || o.DocPath != "/health/live" || !o.Public {
		t.Errorf("GET /livez = %+v, %v; want the liveness probe moved there", o, ok)
	}
	for _, gone := range []string{"GET /health/live", "GET /health/ready", "GET /openapi.json"} {
		if _, ok := byName[gone]; ok {
			t.Errorf("%s is listed though the target names it elsewhere or not at all", gone)
		}
	}
	if _, ok := byName["GET /capabilities"]; !ok {
		t.Error("GET /capabilities is missing")
	}
	if !f.namedElsewhere("/livez") || f.namedElsewhere("/capabilities") {
		t.Error("namedElsewhere: /livez is named elsewhere, /capabilities is not")
	}
}
