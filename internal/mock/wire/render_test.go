package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/internal/mock/apierr"
)

func render(t *testing.T, err error) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/api/v1/x", nil)
	Write(rec, req, err)
	var env map[string]map[string]any
	if e := json.Unmarshal(rec.Body.Bytes(), &env); e != nil {
		t.Fatalf("body %q: %v", rec.Body.String(), e)
	}
	if len(env) != 1 || env["error"] == nil {
		t.Fatalf("envelope %q has no single error key", rec.Body.String())
	}
	return rec, env["error"]
}

func TestWriteRateLimited(t *testing.T) {
	rec, b := render(t, apierr.RateLimited(7, "slow down"))
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "7" {
		t.Fatalf("status %d Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	if rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("headers %v", rec.Header())
	}
	if b["ok"] != false || b["code"] != "rate_limited" || b["retryable"] != true ||
		b["retry_after_seconds"] != float64(7) || b["credits_charged"] != float64(0) || b["message"] != "slow down" {
		t.Fatalf("body %v", b)
	}
}

func TestWriteOmitsUnsetOptionals(t *testing.T) {
	rec, b := render(t, apierr.NotFound("gone"))
	if rec.Code != 404 || rec.Header().Get("Retry-After") != "" {
		t.Fatalf("status %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	for _, k := range []string{"field", "fields", "retry_after_seconds", "limit", "in_flight", "capability_status",
		"required_plan", "shortfall", "blocked_reason", "asset_ids", "accepted_content_types"} {
		if _, ok := b[k]; ok {
			t.Errorf("unset optional %q rendered", k)
		}
	}
	if _, ok := b["credits_charged"]; !ok {
		t.Fatal("credits_charged missing")
	}
}

func TestWriteOptionalFields(t *testing.T) {
	_, b := render(t, apierr.MaxCreditsExceeded(10, 55, "m"))
	lim := b["limit"].(map[string]any)
	if lim["bound_by"] != "max_credits" || lim["required_credits"] != float64(55) || lim["limit_credits"] != float64(10) {
		t.Fatalf("limit %v", lim)
	}
	if b["field"] != "max_credits" {
		t.Fatalf("field %v", b["field"])
	}
	_, b = render(t, apierr.SpendLimitExceeded(apierr.BoundOrgDaily, 2000, 0, "m"))
	lim = b["limit"].(map[string]any)
	if lim["bound_by"] != "org_daily" || lim["remaining_credits"] != float64(0) {
		t.Fatalf("limit %v", lim)
	}
	if _, ok := lim["required_credits"]; ok {
		t.Fatal("required_credits on a spend limit refusal")
	}
	_, b = render(t, apierr.InsufficientCredits(12, "m"))
	if b["shortfall"] != float64(12) {
		t.Fatalf("shortfall %v", b["shortfall"])
	}
	rec, b := render(t, apierr.SubmissionInFlight(apierr.InFlight{GenerationID: "gen_1", Status: "rendering"}, 3, "m"))
	if rec.Header().Get("Retry-After") != "3" || b["in_flight"].(map[string]any)["generation_id"] != "gen_1" {
		t.Fatalf("in flight %v %v", rec.Header(), b)
	}
	_, b = render(t, apierr.RequiredPlan("business", "requires_plan", "m"))
	if b["required_plan"] != "business" || b["capability_status"] != "requires_plan" {
		t.Fatalf("plan %v", b)
	}
	_, b = render(t, apierr.InvalidConfigFields([]string{"config.a", "config.b"}, "m"))
	if fs := b["fields"].([]any); len(fs) != 2 {
		t.Fatalf("fields %v", b["fields"])
	}
}

func TestWriteUnknownErrorIsInternalAndLogged(t *testing.T) {
	var logbuf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&logbuf, nil))
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/api/v1/credits/balance", nil)
	req = req.WithContext(WithLogger(req.Context(), l))
	Write(rec, req, errors.New("disk on fire"))
	if rec.Code != 500 {
		t.Fatalf("status %d", rec.Code)
	}
	if strings.Contains(rec.Body.String(), "disk on fire") {
		t.Fatal("cause leaked into the body")
	}
	if !strings.Contains(logbuf.String(), "disk on fire") || !strings.Contains(logbuf.String(), "/api/v1/credits/balance") {
		t.Fatalf("not logged: %q", logbuf.String())
	}
	var env map[string]map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &env)
	if env["error"]["code"] != "internal_error" || env["error"]["retryable"] != true {
		t.Fatalf("body %v", env)
	}
}

func TestWrappedErrorRendersItsCode(t *testing.T) {
	rec, b := render(t, fmt.Errorf("context: %w", apierr.QuotaExceeded("used up")))
	if rec.Code != 429 || b["code"] != "quota_exceeded" || b["retryable"] != false {
		t.Fatalf("%d %v", rec.Code, b)
	}
}

func TestWriteHeadHasNoBody(t *testing.T) {
	rec := httptest.NewRecorder()
	e := apierr.NotFound("gone")
	e.Status = http.StatusMethodNotAllowed
	Write(rec, httptest.NewRequest(http.MethodHead, "/files/x", nil), e)
	if rec.Code != http.StatusMethodNotAllowed || rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%d %q %v", rec.Code, rec.Body.String(), rec.Header())
	}
}
