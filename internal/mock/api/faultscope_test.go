package api_test

import (
	"github.com/mediaspec/mediaspec/internal/mock/wired"
	"testing"

	"github.com/mediaspec/mediaspec/internal/mock/faults"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
)

// TestFaultWorkspaceScopeAndSlowRender: a render_fail fault scoped to
// another workspace is not taken by this workspace's job; a slow_render
// fault stretches the next job of its workspace and capability, whose slot
// is freed after 10 minutes while it still runs.
func TestFaultWorkspaceScopeAndSlowRender(t *testing.T) {
	f := newGenFixture(t)
	other := wired.Of(f.s).Registry.Create(workspace.CreateParams{Balance: 100})
	body := func(prompt string) map[string]any {
		return map[string]any{"capability_id": "image_fast", "config": map[string]any{"prompt": prompt}, "max_credits": 10}
	}
	if _, err := wired.Of(f.s).Faults.Add(faults.Spec{Kind: faults.RenderFail, WorkspaceID: other.ID()}); err != nil {
		t.Fatal(err)
	}
	id := f.mustSubmit(f.key, body("a")).body["generation_id"].(string)
	f.advance(60)
	if st := f.gen(f.key, id)["status"]; st != "completed" {
		t.Fatalf("another workspace's render_fail was taken: %v", st)
	}
	if left := wired.Of(f.s).Faults.List(); len(left) != 1 || left[0].WorkspaceID != other.ID() {
		t.Fatalf("faults left %+v", left)
	}
	wired.Of(f.s).Faults.Clear()

	// slow_render for another workspace is not taken either; one for this
	// workspace makes image_fast (15 s) run 900 s longer.
	if _, err := wired.Of(f.s).Faults.Add(faults.Spec{Kind: faults.SlowRender, WorkspaceID: other.ID(), Seconds: 900}); err != nil {
		t.Fatal(err)
	}
	if _, err := wired.Of(f.s).Faults.Add(faults.Spec{Kind: faults.SlowRender, WorkspaceID: f.ws.ID(), CapabilityID: "image_fast", Seconds: 900}); err != nil {
		t.Fatal(err)
	}
	slow := f.mustSubmit(f.key, body("b")).body["generation_id"].(string)
	if left := wired.Of(f.s).Faults.List(); len(left) != 1 || left[0].WorkspaceID != other.ID() {
		t.Fatalf("the slow_render fault of this workspace was not taken (or the other one was): %+v", left)
	}
	f.advance(60)
	if st := f.gen(f.key, slow)["status"]; st != "queued" {
		t.Fatalf("slow job after 60 s: %v, want queued (10%% of 915 s)", st)
	}
	wantErr(t, f.submit(f.key, body("c")), 409, "submission_in_flight")
	f.advance(540) // 600 s after the submit: the slot is free, the job still runs
	if st := f.gen(f.key, slow)["status"]; st != "rendering" {
		t.Fatalf("slow job after 600 s: %v, want rendering", st)
	}
	next := f.mustSubmit(f.key, body("c")).body["generation_id"].(string)
	f.advance(315)
	if st := f.gen(f.key, slow)["status"]; st != "completed" {
		t.Fatalf("slow job after 915 s: %v", st)
	}
	if st := f.gen(f.key, next)["status"]; st != "completed" {
		t.Fatalf("next job: %v (a slow_render fault affects one job)", st)
	}
}
