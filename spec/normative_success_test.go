package spec

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// The workflow invoke's Location is stated by the text ("An invoke answers with a Location header
// naming the run") though its status is not (the reference's 201 is its choice): it is judged on
// any success status a server answers with, and never on a refusal.
func TestTextHeaderOnAReferenceSuccessStatus(t *testing.T) {
	ctx := context.Background()
	j, err := NewJudge(ctx)
	if err != nil {
		t.Fatal(err)
	}
	loc := "/api/v1/workflow-runs/wfr_338c513f676a01937895fd8de6ad2f00"
	run := `{"ok":true,"workflow_run_id":"wfr_338c513f676a01937895fd8de6ad2f00"}`
	refusal := `{"error":{"ok":false,"code":"max_credits_exceeded","message":"m","retryable":false,"credits_charged":0}}`
	invokes := []string{"/api/v1/workflows/templates/hero_image/invoke", "/api/v1/workflows/wf_338c513f676a01937895fd8de6ad2f00/invoke"}
	for _, path := range invokes {
		cases := []struct {
			name     string
			status   int
			header   http.Header
			body     string
			location bool // the failure names header Location
		}{
			{name: "the reference's 201 with Location", status: 201, header: ansHeader("Location", loc, "Cache-Control", "no-store"), body: run},
			{name: "another success status with Location", status: 202, header: ansHeader("Location", loc), body: `{"run":"queued"}`},
			{name: "200 with Location and no body the reference shows", status: 200, header: ansHeader("Location", loc), body: `{}`},
			{name: "201 without Location", status: 201, header: ansHeader("Cache-Control", "no-store"), body: run, location: true},
			{name: "202 without Location", status: 202, header: ansHeader(), body: run, location: true},
			{name: "a refusal carries no Location", status: 402, header: ansHeader(), body: refusal},
		}
		for _, tc := range cases {
			t.Run(path+" "+tc.name, func(t *testing.T) {
				r := httptest.NewRequest(http.MethodPost, path, nil)
				failure, _ := j.Response(ctx, r, tc.status, tc.header, []byte(tc.body))
				named := failure != nil && strings.Contains(failure.Error(), "Location")
				if named != tc.location {
					t.Errorf("failure = %v; want one naming header Location: %v", failure, tc.location)
				}
				if !tc.location && failure != nil {
					t.Errorf("failure = %v, want none", failure)
				}
			})
		}
	}
}

// Only an operation whose success statuses are all the reference's gets the 2XX range: where the
// text states the status (POST /generations answers 201 with Location), that entry judges alone.
func TestSuccessRangeOnlyWhereTheTextStatesNoStatus(t *testing.T) {
	ctx := context.Background()
	doc, err := LoadOpenAPI(ctx)
	if err != nil {
		t.Fatal(err)
	}
	norm, err := Normative(doc)
	if err != nil {
		t.Fatal(err)
	}
	var ranged []string
	for path, item := range norm.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Responses.Value("2XX") != nil && doc.Paths.Find(path).GetOperation(method).Responses.Value("2XX") == nil {
				ranged = append(ranged, method+" "+path)
			}
		}
	}
	slices.Sort(ranged)
	for _, want := range []string{"POST /workflows/templates/{key}/invoke", "POST /workflows/{id}/invoke"} {
		if !slices.Contains(ranged, want) {
			t.Errorf("%s judges its Location on no success status but the reference's: ranged %v", want, ranged)
		}
	}
	if slices.Contains(ranged, "POST /generations") {
		t.Error("POST /generations: the text states 201; no range is added")
	}
	t.Logf("operations whose text-stated success headers are judged on any success status: %v", ranged)
}

// The statuses an operation lists are the reference's list: a status it does not list (a 404 on the
// voice list, a 202 on the balance read) fails no answer in the normative view, whatever its body,
// while the reference view still reports it (an advisory). The text gives each code its status;
// which statuses an operation may answer is judged by the specs that ask for one.
func TestNormativeKeepsNoStatusListOfTheReference(t *testing.T) {
	ctx := context.Background()
	j, err := NewJudge(ctx)
	if err != nil {
		t.Fatal(err)
	}
	refusal := `{"error":{"ok":false,"code":"not_found","message":"m","retryable":false,"credits_charged":0}}`
	for _, tc := range []struct {
		path   string
		status int
		body   string
	}{
		{"/api/v1/voices", http.StatusNotFound, refusal},
		{"/api/v1/credits/balance", http.StatusAccepted, `{"queued":true}`},
		{"/api/v1/capabilities", http.StatusNoContent, ``},
	} {
		r := httptest.NewRequest(http.MethodGet, tc.path, nil)
		failure, advisory := j.Response(ctx, r, tc.status, ansHeader("Content-Type", "application/json"), []byte(tc.body))
		if failure != nil {
			t.Errorf("%s answering %d fails the normative view on its status: %v", tc.path, tc.status, failure)
		}
		if advisory == nil {
			t.Errorf("%s answering %d: the reference view says nothing of a status it does not list", tc.path, tc.status)
		}
	}
}

// The capability detail's layout is not shown: a detail that nests the capability's fields, its
// config_schema and its example_config one level deeper fails no gate (issue 35: the gate demanded
// them at the top of the answer).
func TestNormativeCapabilityDetailLayoutOpen(t *testing.T) {
	ctx := context.Background()
	j, err := NewJudge(ctx)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"ok":true,"result":{"capability":{"capability_id":"tts","category":"tool","output_kind":"audio","status":"available",` +
		`"config_schema":{"type":"object","additionalProperties":false,"properties":{}},"example_config":{}}}}`
	r := httptest.NewRequest(http.MethodGet, "/api/v1/capabilities/tts", nil)
	failure, advisory := j.Response(ctx, r, http.StatusOK, ansHeader("Content-Type", "application/json"), []byte(body))
	if failure != nil {
		t.Fatalf("a nested capability detail fails the normative view: %v", failure)
	}
	if advisory == nil {
		t.Fatal("the reference view says nothing of a detail laid out otherwise")
	}
}
