package control

import (
	"bytes"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
	"github.com/mediaspec/mediaspec/internal/mock/webhook"
	"github.com/mediaspec/mediaspec/internal/mock/wire"
)

// Delivery history paging (GET /webhooks/{id}/deliveries).
const (
	deliveriesDefault = 25
	deliveriesMax     = 100
)

// RegisterWebhooks adds the app's webhook actions over s: POST /webhooks/{id}/test (202),
// /rotate, /enable, /disable, and GET /webhooks/{id}/deliveries. Endpoints of every workspace are
// reachable; an unknown or deleted id answers 404 not_found.
func (h *Handler) RegisterWebhooks(s *webhook.Service) {
	h.Handle("POST /webhooks/{id}/test", func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		data, err := wire.ReadBody(r, 0)
		if err != nil {
			return err
		}
		message := webhook.TestMessage
		if len(bytes.TrimSpace(data)) > 0 {
			var b struct {
				Message *string `json:"message"`
			}
			if err := wire.DecodeStrictBytes(data, &b); err != nil {
				return err
			}
			if b.Message != nil {
				if n := utf8.RuneCountInString(*b.Message); n < 1 || n > webhook.MaxTestMessage {
					return apierr.InvalidConfig("message", fmt.Sprintf("message is 1 to %d characters.", webhook.MaxTestMessage))
				}
				message = *b.Message
			}
		}
		did, err := s.SendTestMessage(id, message)
		if err != nil {
			return err
		}
		return wire.WriteJSON(w, http.StatusAccepted, map[string]any{"ok": true, "webhook_id": id, "delivery_id": did})
	})
	h.Handle("POST /webhooks/{id}/rotate", func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		secret, err := s.Rotate(id)
		if err != nil {
			return err
		}
		return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "webhook_id": id, "secret": secret})
	})
	status := func(f func(string) (webhook.Endpoint, error)) wire.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) error {
			ep, err := f(r.PathValue("id"))
			if err != nil {
				return err
			}
			return wire.WriteJSON(w, http.StatusOK, map[string]any{
				"ok": true, "webhook_id": ep.ID, "status": ep.Status, "consecutive_failures": ep.ConsecutiveFailures,
			})
		}
	}
	h.Handle("POST /webhooks/{id}/enable", status(s.Enable))
	h.Handle("POST /webhooks/{id}/disable", status(s.Disable))
	h.Handle("GET /webhooks/{id}/deliveries", func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		limit := wire.QueryLimit(q, "limit", deliveriesDefault, deliveriesMax)
		cursor, _ := wire.QueryString(q, "cursor")
		list, next, err := s.Deliveries(r.PathValue("id"), limit, cursor)
		if err != nil {
			return err
		}
		out := make([]map[string]any, len(list))
		for i, d := range list {
			out[i] = deliveryJSON(d)
		}
		var nc any
		if next != "" {
			nc = next
		}
		return wire.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "deliveries": out, "next_cursor": nc})
	})
}

func deliveryJSON(d webhook.Delivery) map[string]any {
	atts := make([]map[string]any, len(d.Attempts))
	for i, a := range d.Attempts {
		var code, msg any
		if a.StatusCode != 0 {
			code = a.StatusCode
		}
		if a.Error != "" {
			msg = a.Error
		}
		atts[i] = map[string]any{
			"attempt": a.Number, "sent_at": clock.Format(a.SentAt), "status_code": code, "error": msg,
			"duration_ms": a.Duration.Milliseconds(),
		}
	}
	var next any
	if d.NextAttempt != nil {
		next = clock.Format(*d.NextAttempt)
	}
	return map[string]any{
		"delivery_id": d.ID, "webhook_id": d.WebhookID, "event_type": d.EventType, "created_at": clock.Format(d.CreatedAt),
		"status": d.Status, "attempts": atts, "next_attempt_at": next,
	}
}
