package wrongservers

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mediaspec/mediaspec/internal/contract"
)

// delivery is one webhook attempt on its way from the mock to the suite's receiver.
type delivery struct {
	r    *http.Request
	id   string
	ts   string
	body []byte
}

// sign sets webhook-signature for d's id, timestamp and body with the endpoint's secret (Standard
// Webhooks: v1, base64 HMAC-SHA256 of id.timestamp.body keyed with the secret's bytes). Without a
// known secret it leaves the header as the mock signed it.
func (d *delivery) sign(env *Env) {
	if secret, ok := env.Secret(d.r.URL.Path); ok {
		d.signWith(secret)
	}
}

// signWith sets webhook-signature for d's id, timestamp and body with secret.
func (d *delivery) signWith(secret string) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(d.id + "." + d.ts + "."))
	mac.Write(d.body)
	d.r.Header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
}

// deliveriesVia changes each delivery before the receiver sees it; resign re-signs it after the
// change (a server that changes the payload before signing), else the mock's signature stays (a
// server that changes it after).
func deliveriesVia(resign bool, edit func(env *Env, d *delivery)) Wrap {
	return func(env *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			d := &delivery{r: r, id: r.Header.Get("webhook-id"), ts: r.Header.Get("webhook-timestamp"), body: requestBody(r)}
			edit(env, d)
			r.Header.Set("webhook-id", d.id)
			r.Header.Set("webhook-timestamp", d.ts)
			if resign {
				d.sign(env)
			}
			setRequestBody(r, d.body)
			next.ServeHTTP(w, r)
		})
	}
}

// payload changes the decoded envelope of each delivery, signed after the change.
func payload(edit func(envelope, data map[string]any)) Wrap {
	return deliveriesVia(true, func(_ *Env, d *delivery) {
		v, ok := decodeObject(d.body)
		if !ok {
			return
		}
		edit(v, obj(v, "data"))
		if b, err := json.Marshal(v); err == nil {
			d.body = b
		}
	})
}

// receiverAnswers changes the receiver's answers as the mock sees them.
func receiverAnswers(edit func(a *answer)) Wrap {
	return func(_ *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a := serve(next, r)
			edit(a)
			a.send(w)
		})
	}
}

// firstStamps remembers each delivery's first timestamp.
type firstStamps struct {
	mu    sync.Mutex // guards first
	first map[string]string
}

func (f *firstStamps) of(id, ts string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.first == nil {
		f.first = map[string]string{}
	}
	if t, ok := f.first[id]; ok {
		return t
	}
	f.first[id] = ts
	return ts
}

var deliveryServers = []Server{
	{
		Name: "dlv-reencoded-body", Rules: []string{"DLV-006"},
		Mistake: "the body is re-encoded (indented) after it was signed",
		Hooks: deliveriesVia(false, func(_ *Env, d *delivery) {
			var buf bytes.Buffer
			if json.Indent(&buf, d.body, "", "  ") == nil {
				d.body = buf.Bytes()
			}
		}),
	},
	{
		Name: "dlv-first-timestamp-on-retries", Rules: []string{"DLV-005"},
		Mistake: "retries keep the first attempt's webhook-timestamp (signed with it)",
		Hooks: func(env *Env, next http.Handler) http.Handler {
			var f firstStamps
			return deliveriesVia(true, func(_ *Env, d *delivery) { d.ts = f.of(d.id, d.ts) })(env, next)
		},
	},
	{
		Name: "dlv-stale-timestamp", Rules: []string{"DLV-005", "RECV-003"},
		Mistake: "webhook-timestamp is the event time, minutes old on the first attempt",
		Hooks: deliveriesVia(true, func(_ *Env, d *delivery) {
			if n, err := strconv.ParseInt(d.ts, 10, 64); err == nil {
				d.ts = strconv.FormatInt(n-int64(2*contract.TimestampTolerance/time.Second), 10)
			}
		}),
	},
	{
		Name: "dlv-user-agent", Rules: []string{"DLV-002"},
		Mistake: "deliveries go out with Go's default user-agent",
		Hooks: requests(func(*http.Request) bool { return true }, func(_ *Env, r *http.Request) {
			r.Header.Set("User-Agent", "Go-http-client/1.1")
		}),
	},
	{
		Name: "dlv-extra-signature-header", Rules: []string{"DLV-007"},
		Mistake: "deliveries also carry a legacy X-Signature header",
		Hooks: requests(func(*http.Request) bool { return true }, func(_ *Env, r *http.Request) {
			r.Header.Set("X-Signature", "sha256="+r.Header.Get("webhook-signature"))
		}),
	},
	{
		Name: "dlv-new-id-per-attempt", Rules: []string{"DLV-004"},
		Mistake: "each retry gets a new webhook-id (the attempt id, not the delivery id)",
		Hooks: func(env *Env, next http.Handler) http.Handler {
			var mu sync.Mutex
			seen := map[string]int{}
			return payload(func(v, _ map[string]any) {
				id := stringOf(v["id"])
				mu.Lock()
				n := seen[id]
				seen[id]++
				mu.Unlock()
				if n > 0 && len(id) > 4 {
					v["id"] = id[:len(id)-1] + strconv.Itoa(n%10)
				}
			})(env, deliveriesVia(true, func(_ *Env, d *delivery) {
				if v, ok := decodeObject(d.body); ok {
					d.id = stringOf(v["id"])
				}
			})(env, next))
		},
	},
	{
		Name: "recv-old-secret-after-rotation", Rules: []string{"RECV-006"},
		Mistake: "pending retries keep the signing secret they were queued with; a rotation applies to new events only",
		Hooks: func(env *Env, next http.Handler) http.Handler {
			var first memo[string] // webhook-id -> the secret its first attempt was signed with
			return deliveriesVia(false, func(env *Env, d *delivery) {
				if s, ok := first.get(d.id); ok {
					d.signWith(s)
				} else if s, ok := env.Secret(d.r.URL.Path); ok {
					first.put(d.id, s)
				}
			})(env, next)
		},
	},
	{
		Name: "evt-link-in-payload", Rules: []string{"EVT-018"},
		Mistake: "generation event outputs carry their download url",
		Hooks: payload(func(_, data map[string]any) {
			for _, o := range rows(data, "outputs") {
				o["url"] = "https://files.example.test/" + stringOf(o["asset_id"])
			}
		}),
	},
	{
		Name: "evt-wallet-in-credits", Rules: []string{"EVT-023"},
		Mistake: "event credits carry wallet_balance (the read answer's object reused)",
		Hooks: payload(func(_, data map[string]any) {
			if c := obj(data, "credits"); c != nil {
				c["wallet_balance"] = json.Number("1000")
			}
		}),
	},
	{
		Name: "evt-no-disclosure", Rules: []string{"EVT-020", "EVT-021"},
		Mistake: "event data leaves out disclosure",
		Hooks: payload(func(_, data map[string]any) {
			delete(data, "disclosure")
		}),
	},
	{
		Name: "evt-created-at-send-time", Rules: []string{"EVT-017"},
		Mistake: "the envelope created_at is the time of the attempt, not of the event",
		Hooks: func(env *Env, next http.Handler) http.Handler {
			return deliveriesVia(true, func(_ *Env, d *delivery) {
				v, ok := decodeObject(d.body)
				n, err := strconv.ParseInt(d.ts, 10, 64)
				if !ok || err != nil {
					return
				}
				v["created_at"] = time.Unix(n, 0).UTC().Format(time.RFC3339)
				if b, err := json.Marshal(v); err == nil {
					d.body = b
				}
			})(env, next)
		},
	},
	{
		Name: "evt-text-in-payload", Rules: []string{"EVT-019"},
		Mistake: "text results ride along in the event as output_text",
		Hooks: payload(func(_, data map[string]any) {
			if data != nil && data["generation_id"] != nil {
				data["output_text"] = "a caption"
			}
		}),
	},
	{
		Name: "evt-error-on-completed", Rules: []string{"EVT-026"},
		Mistake: "error is {} instead of null on generation.completed",
		Hooks: payload(func(v, data map[string]any) {
			if v["type"] == "generation.completed" && data != nil {
				data["error"] = map[string]any{"code": nil, "message": ""}
			}
		}),
	},
	{
		Name: "dlv-4xx-counts-as-success", Rules: []string{"DLV-009"},
		Mistake: "only 5XX answers are retried; a 4XX ends the delivery",
		Hooks: receiverAnswers(func(a *answer) {
			if a.status >= 400 && a.status < 500 {
				a.status = http.StatusOK
			}
		}),
	},
	{
		Name: "dlv-2xx-body-read", Rules: []string{"DLV-020"},
		Mistake: "a 2XX whose body is not JSON {\"ok\":true} is treated as a failure",
		Hooks: receiverAnswers(func(a *answer) {
			if a.status >= 200 && a.status < 300 && !bytes.Contains(a.body, []byte(`"ok"`)) {
				a.status = http.StatusInternalServerError
			}
		}),
	},
	{
		Name: "dlv-redirect-followed", Rules: []string{"DLV-012"},
		Mistake: "redirects are followed (Go's default client policy)",
		Hooks: func(env *Env, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body := requestBody(r)
				// The redirect is followed as soon as its status line arrives, as a client does: the
				// receiver may take a while to end the answer after sending it.
				hw := &headWatch{answer: &answer{header: http.Header{}}, head: make(chan struct{})}
				done := make(chan struct{})
				go func() {
					defer close(done)
					defer func() {
						// Once the redirect was followed and answered, the answer's copy is cut short.
						if p := recover(); p != nil && p != http.ErrAbortHandler {
							panic(p)
						}
					}()
					next.ServeHTTP(hw, r)
					hw.once.Do(func() { close(hw.head) })
				}()
				<-hw.head
				if loc := hw.header.Get("Location"); hw.status >= 300 && hw.status < 400 && loc != "" {
					if req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, loc, bytes.NewReader(body)); err == nil && strings.HasPrefix(loc, "http://127.0.0.1:") {
						req.Header = r.Header.Clone()
						if resp, err := http.DefaultClient.Do(req); err == nil {
							_ = resp.Body.Close()
							w.WriteHeader(resp.StatusCode)
							return
						}
					}
				}
				<-done
				hw.send(w)
			})
		},
	},
	{
		Name: "dlv-text-plain", Rules: []string{"DLV-001"},
		Mistake: "deliveries are sent as text/plain",
		Hooks: requests(func(*http.Request) bool { return true }, func(_ *Env, r *http.Request) {
			r.Header.Set("Content-Type", "text/plain; charset=utf-8")
		}),
	},
	{
		Name: "evt-batch-ids-empty-strings", Rules: []string{"EVT-024"},
		Mistake: "batch_group_id and batch_index are \"\" and 0 instead of null outside a batch",
		Hooks: payload(func(_, data map[string]any) {
			if data != nil && data["generation_id"] != nil && data["batch_group_id"] == nil {
				data["batch_group_id"], data["batch_index"] = "", json.Number("0")
			}
		}),
	},
	{
		Name: "evt-no-purpose", Rules: []string{"EVT-021"},
		Mistake: "generation event data leaves out purpose",
		Hooks: payload(func(_, data map[string]any) {
			if data != nil && data["generation_id"] != nil {
				delete(data, "purpose")
			}
		}),
	},
	{
		Name: "dlv-body-id-differs", Rules: []string{"DLV-003", "ID-009", "EVT-016"},
		Mistake: "the envelope id is the event id, not the delivery id the webhook-id header carries",
		Hooks: payload(func(v, _ map[string]any) {
			if id, ok := v["id"].(string); ok {
				v["id"] = "evt_" + strings.TrimPrefix(id, "whd_")
			}
		}),
	},
}

// headWatch is an answer that also says when its status line was written (head is closed once).
type headWatch struct {
	*answer
	once sync.Once
	head chan struct{}
}

func (h *headWatch) WriteHeader(code int) {
	h.answer.WriteHeader(code)
	h.once.Do(func() { close(h.head) })
}

func (h *headWatch) Write(b []byte) (int, error) {
	n, err := h.answer.Write(b)
	h.once.Do(func() { close(h.head) })
	return n, err
}
