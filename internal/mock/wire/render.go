package wire

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/mediaspec/mediaspec/internal/mock/apierr"
)

// body is the rendered `error` object.
type body struct {
	OK                   bool             `json:"ok"`
	Code                 apierr.Code      `json:"code"`
	Message              string           `json:"message"`
	Retryable            bool             `json:"retryable"`
	CreditsCharged       int64            `json:"credits_charged"`
	Field                string           `json:"field,omitempty"`
	Fields               []string         `json:"fields,omitempty"`
	RetryAfterSeconds    int              `json:"retry_after_seconds,omitempty"`
	Limit                *apierr.Limit    `json:"limit,omitempty"`
	InFlight             *apierr.InFlight `json:"in_flight,omitempty"`
	CapabilityStatus     string           `json:"capability_status,omitempty"`
	RequiredPlan         string           `json:"required_plan,omitempty"`
	Shortfall            int64            `json:"shortfall,omitempty"`
	BlockedReason        string           `json:"blocked_reason,omitempty"`
	AssetIDs             []string         `json:"asset_ids,omitempty"`
	AcceptedContentTypes []string         `json:"accepted_content_types,omitempty"`
}

type loggerKey struct{}

// WithLogger returns ctx carrying the logger Write uses for unexpected errors.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

func loggerFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok && l != nil {
		return l
	}
	return slog.Default()
}

func normalize(err error) *apierr.Error {
	var e *apierr.Error
	if errors.As(err, &e) {
		if e.Status == 0 {
			e.Status, e.Retryable = apierr.StatusOf(e.Code)
		}
		return e
	}
	return apierr.Internal(err, "The service failed on its side; nothing was charged. Try again.")
}

func toBody(e *apierr.Error) body {
	return body{
		OK: false, Code: e.Code, Message: e.Message, Retryable: e.Retryable,
		Field: e.Field, Fields: e.Fields, RetryAfterSeconds: e.RetryAfterSeconds,
		Limit: e.Limit, InFlight: e.InFlight, CapabilityStatus: e.CapabilityStatus,
		RequiredPlan: e.RequiredPlan, Shortfall: e.Shortfall, BlockedReason: e.BlockedReason,
		AssetIDs: e.AssetIDs, AcceptedContentTypes: e.AcceptedContentTypes,
	}
}

// Write is the one error renderer: it writes err as the `{"error":{...}}`
// envelope with its status (the error table's for the code, unless the
// *apierr.Error carries another),
// Content-Type application/json, Cache-Control no-store and, when
// RetryAfterSeconds > 0, a Retry-After header with the same number; a HEAD
// answer has no body. An error that is not an *apierr.Error (and an
// internal_error with a cause) is logged at error level with the request's
// method and path.
func Write(w http.ResponseWriter, r *http.Request, err error) {
	e := normalize(err)
	if e.Code == apierr.CodeInternalError && e.Err != nil {
		ctx := context.Background()
		method, path := "", ""
		if r != nil {
			ctx, method, path = r.Context(), r.Method, r.URL.Path
		}
		loggerFrom(ctx).ErrorContext(ctx, "internal error", "method", method, "path", path, "err", e.Err)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	if e.RetryAfterSeconds > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfterSeconds))
	}
	w.WriteHeader(e.Status)
	if r != nil && r.Method == http.MethodHead {
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]body{"error": toBody(e)})
}

// Encode is the status and body Write gives err, for an answer written outside a
// ResponseWriter (the mock's connection writes it in place of net/http's own text answers).
func Encode(err error) (int, []byte) {
	e := normalize(err)
	b, _ := json.Marshal(map[string]body{"error": toBody(e)}) // the body always encodes
	return e.Status, append(b, '\n')
}
