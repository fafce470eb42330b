package wrongservers

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// newDeliveryID is a fresh whd_ id.
func newDeliveryID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "whd_" + hex.EncodeToString(b)
}

// eventType is the type of a delivery's envelope.
func eventType(b []byte) string {
	d, _ := decodeObject(b)
	t, _ := d["type"].(string)
	return t
}

// attempts counts the attempts of each delivery id.
type attempts struct {
	mu sync.Mutex // guards n
	n  map[string]int
}

func (c *attempts) next(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[id]++
	return c.n[id]
}

// twice delivers events of type typ a second time as a new delivery (a fresh id).
func twice(typ string) Wrap {
	return func(env *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b := requestBody(r)
			if eventType(b) != typ {
				next.ServeHTTP(w, r)
				return
			}
			c := r.Clone(r.Context())
			a := serve(next, r)
			sendAgain(env, next, c, b, func(h http.Header, d map[string]any) {
				id := newDeliveryID()
				h.Set("Webhook-Id", id)
				d["id"] = id
			})
			a.send(w)
		})
	}
}

// signedBy signs every delivery with sign (secret, id, timestamp, body) instead of the scheme.
func signedBy(sign func(secret, id, ts string, body []byte) string) Wrap {
	return func(env *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b := requestBody(r)
			if s, ok := env.Secret(r.URL.Path); ok {
				r.Header.Set("Webhook-Signature", sign(s, r.Header.Get("Webhook-Id"), r.Header.Get("Webhook-Timestamp"), b))
			}
			next.ServeHTTP(w, r)
		})
	}
}

// signingServers get deliveries wrong: signatures, timestamps, ids, retries and payloads.
var signingServers = []Server{
	{
		Name: "dlv-secret-string-as-key", Rules: []string{"DLV-006"},
		Mistake: "the HMAC is keyed with the whsec_ string's bytes, not the bytes it encodes",
		Hooks: signedBy(func(secret, id, ts string, body []byte) string {
			return "v1," + base64.StdEncoding.EncodeToString(macOf([]byte(secret), id, ts, body))
		}),
	},
	{
		Name: "dlv-signature-hex", Rules: []string{"DLV-006"},
		Mistake: "the signature is the hex digest of the HMAC, not base64",
		Hooks: signedBy(func(secret, id, ts string, body []byte) string {
			key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
			return "v1," + hex.EncodeToString(macOf(key, id, ts, body))
		}),
	},
	{
		Name: "dlv-timestamp-ms", Rules: []string{"DLV-005", "RECV-003"},
		Mistake: "webhook-timestamp is in Unix milliseconds (signed as sent)",
		Hooks: deliveryEdit(func(_ *Env, h http.Header, _ map[string]any) bool {
			ts, err := strconv.ParseInt(h.Get("Webhook-Timestamp"), 10, 64)
			if err != nil {
				return false
			}
			h.Set("Webhook-Timestamp", strconv.FormatInt(ts*1000, 10))
			return true
		}),
	},
	{
		Name: "dlv-second-attempt-lost", Rules: []string{"DLV-014", "DLV-015"},
		Mistake: "the retry schedule skips its first step: attempt 2 comes at the 30-minute step",
		Hooks: func(env *Env, next http.Handler) http.Handler {
			var n attempts
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if n.next(r.Header.Get("Webhook-Id")) == 2 {
					w.WriteHeader(http.StatusInternalServerError) // never reaches the receiver
					return
				}
				next.ServeHTTP(w, r)
			})
		},
	},
	{
		Name: "dlv-sixth-attempt", Rules: []string{"DLV-018"},
		Mistake: "the attempt counter is checked after sending, so an exhausted delivery is sent a sixth time",
		Hooks: func(env *Env, next http.Handler) http.Handler {
			var n attempts
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b := requestBody(r)
				c := r.Clone(r.Context())
				k := n.next(r.Header.Get("Webhook-Id")) // counted as sent, before its answer
				a := serve(next, r)
				if k == 5 && !success(a.status) {
					sendAgain(env, next, c, b, func(http.Header, map[string]any) {})
				}
				a.send(w)
			})
		},
	},
	{
		Name: "dlv-one-id-per-event", Rules: []string{"DLV-029"},
		Mistake: "the delivery id is made per event, so every endpoint gets the same id for one event",
		Hooks: func(env *Env, next http.Handler) http.Handler {
			var ids memo[string]
			return deliveryEdit(func(_ *Env, h http.Header, d map[string]any) bool {
				data := obj(d, "data")
				key, _ := d["type"].(string)
				for _, k := range []string{"generation_id", "batch_group_id", "workflow_run_id", "available_credits"} {
					if v, ok := data[k]; ok && v != nil {
						key += "/" + stringOrNumber(v)
						break
					}
				}
				created, _ := d["created_at"].(string)
				key += "/" + created
				id, ok := ids.get(key)
				if !ok {
					ids.put(key, h.Get("Webhook-Id"))
					return false
				}
				h.Set("Webhook-Id", id)
				d["id"] = id
				return true
			})(env, next)
		},
	},
	{
		Name: "evt-completed-before-capture", Rules: []string{"EVT-001"},
		Mistake: "generation.completed is sent when the render completes, before the charge is captured",
		Hooks: deliveryEdit(func(_ *Env, _ http.Header, d map[string]any) bool {
			c := obj(obj(d, "data"), "credits")
			if d["type"] != "generation.completed" || c == nil {
				return false
			}
			c["credits_charged"] = nil
			c["settlement"] = "open"
			c["terminal"] = false
			return true
		}),
	},
	{
		Name: "evt-failed-error-null", Rules: []string{"EVT-002", "EVT-026"},
		Mistake: "generation.failed carries error null (the error is only on the generation read)",
		Hooks: deliveryEdit(func(_ *Env, _ http.Header, d map[string]any) bool {
			if d["type"] != "generation.failed" {
				return false
			}
			obj(d, "data")["error"] = nil
			return true
		}),
	},
	{
		Name: "evt-canceled-run-completed", Rules: []string{"EVT-005", "EVT-031"},
		Mistake: "a canceled run is announced as workflow_run.completed (it ended without an error)",
		Hooks: deliveryEdit(func(_ *Env, _ http.Header, d map[string]any) bool {
			if d["type"] != "workflow_run.failed" || obj(d, "data")["status"] != "canceled" {
				return false
			}
			d["type"] = "workflow_run.completed"
			return true
		}),
	},
	{
		Name: "evt-batch-settled-twice", Rules: []string{"EVT-003"},
		Mistake: "batch.settled is sent by each sibling that finds the batch done, so it can fire twice",
		Hooks:   twice("batch.settled"),
	},
	{
		Name: "evt-credits-low-twice", Rules: []string{"EVT-006"},
		Mistake: "credits.low fires on every check that finds the balance low, not once per refill",
		Hooks:   twice("credits.low"),
	},
	{
		Name: "evt-null-fields-omitted", Rules: []string{"EVT-021", "EVT-024", "EVT-025"},
		Mistake: "generation event data is encoded with omitempty: null batch and workflow fields are left out",
		Hooks: deliveryEdit(func(_ *Env, _ http.Header, d map[string]any) bool {
			data := obj(d, "data")
			if data == nil || data["generation_id"] == nil {
				return false
			}
			for _, k := range []string{"batch_group_id", "batch_index", "workflow_run_id"} {
				if v, ok := data[k]; ok && v == nil {
					delete(data, k)
				}
			}
			return true
		}),
	},
}

// stringOrNumber renders a JSON scalar for a key.
func stringOrNumber(v any) string {
	switch x := v.(type) {
	case string:
		return x
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}
