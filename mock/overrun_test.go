package mock

import (
	"strconv"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/internal/mock/faults"
)

// A render_overrun fault makes the render cost more than its hold; settlement charges the hold and
// not a credit more (the real cost is never more than the hold), and releases nothing beyond it.
func TestRenderOverrunIsSettledAtTheHold(t *testing.T) {
	e := newEnv(t)
	info := e.s.Info()
	key := bearer(info.GenerateKey)
	overrun := faults.Spec{Kind: faults.RenderOverrun, CapabilityID: "tts", WorkspaceID: info.DefaultWorkspaceID}
	if _, err := e.s.svc.Faults.Add(overrun); err != nil {
		t.Fatal(err)
	}
	before := e.call("GET", "/api/v1/credits/balance", "", key)
	est := e.call("POST", "/api/v1/estimates", `{"capability_id":"tts","config":{"script":"An overrun is settled at the hold."}}`, key)
	need, _ := est.body["max_credits_needed"].(float64)
	price, _ := est.body["credits"].(float64)
	if est.code != 200 || need <= price {
		t.Fatalf("estimate %d %s", est.code, est.raw)
	}
	sub := e.call("POST", "/api/v1/generations", `{"capability_id":"tts","config":{"script":"An overrun is settled at the hold."},`+
		`"max_credits":`+strconv.FormatFloat(need, 'f', -1, 64)+`}`, key)
	if sub.code != 201 {
		t.Fatalf("submit %d %s", sub.code, sub.raw)
	}
	id, _ := sub.body["generation_id"].(string)
	e.clk.Advance(time.Hour)
	g := e.call("GET", "/api/v1/generations/"+id, "", key)
	gen, _ := g.body["generation"].(map[string]any)
	cr, _ := gen["credits"].(map[string]any)
	if gen["status"] != "completed" || cr["credits_charged"] != need || cr["credits_held"] != need {
		t.Fatalf("want completed and charged the hold %v: %s", need, g.raw)
	}
	after := e.call("GET", "/api/v1/credits/balance", "", key)
	if d := before.body["available_credits"].(float64) - after.body["available_credits"].(float64); d != need {
		t.Fatalf("available fell by %v, want the hold %v", d, need)
	}
}
