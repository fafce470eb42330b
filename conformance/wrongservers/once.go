package wrongservers

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Wrong servers that send an event a second time, later, as a new delivery (a fresh webhook-id):
// the text says once (batch.settled fires once, credits.low once per refill, each generation's
// event once per endpoint). The second copy is not a retry of the first (a retry keeps its id):
// it is what a server sends whose event outbox is flushed on its next API request and marks an
// event sent only under its new delivery row, so the flush finds it again. The copy arrives before
// the answer to the caller's next API call, so a spec that counts deliveries after a read sees it.

// outbox holds, per run (one Env), the deliveries waiting to be sent again and the handler that
// reaches the suite's receiver.
type outbox struct {
	mu      sync.Mutex // guards next, pending, seen
	next    http.Handler
	pending []held
	calls   []func()        // further sends due on the next API request
	seen    map[string]bool // webhook-ids held once already (their retries are not held again)
}

type held struct {
	r    *http.Request
	body []byte
}

var outboxes sync.Map // *Env -> *outbox

func outboxOf(env *Env) *outbox {
	v, _ := outboxes.LoadOrStore(env, &outbox{seen: map[string]bool{}})
	return v.(*outbox)
}

// hold keeps a copy of the first attempt of delivery r (body b) to send again later.
func (o *outbox) hold(r *http.Request, b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	id := r.Header.Get("Webhook-Id")
	if o.seen[id] {
		return
	}
	o.seen[id] = true
	c := r.Clone(context.Background())
	c.Header = r.Header.Clone()
	o.pending = append(o.pending, held{r: c, body: slices.Clone(b)})
}

// flush sends every held delivery once more, each as a new delivery (a fresh id, signed again).
func (o *outbox) flush(env *Env) {
	o.mu.Lock()
	pending, next, calls := o.pending, o.next, o.calls
	o.pending, o.calls = nil, nil
	o.mu.Unlock()
	for _, call := range calls {
		call()
	}
	if next == nil {
		return
	}
	for _, h := range pending {
		setRequestBody(h.r, h.body)
		sendAgain(env, next, h.r, h.body, func(hd http.Header, d map[string]any) {
			id := newDeliveryID()
			hd.Set("Webhook-Id", id)
			d["id"] = id
		})
	}
}

// resentOnNextRequest is a server that sends each event whose type is one of types again, as a
// new delivery, when the next API request reaches it.
func resentOnNextRequest(name, mistake string, rules []string, types ...string) Server {
	return resentOnNextRequestIf(name, mistake, rules, func(d map[string]any) bool { return slices.Contains(types, stringOf(d["type"])) })
}

// resentOnNextRequestIf is resentOnNextRequest for the deliveries whose decoded body which
// picks: a server whose outbox mishandles one kind of event only.
func resentOnNextRequestIf(name, mistake string, rules []string, which func(d map[string]any) bool) Server {
	return Server{
		Name: name, Rules: rules, Mistake: mistake,
		Hooks: func(env *Env, next http.Handler) http.Handler {
			o := outboxOf(env)
			o.mu.Lock()
			o.next = next
			o.mu.Unlock()
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b := requestBody(r)
				if d, ok := decodeObject(b); ok && which(d) {
					o.hold(r, b)
				}
				next.ServeHTTP(w, r)
			})
		},
		API: func(env *Env, next http.Handler) http.Handler {
			o := outboxOf(env)
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				o.flush(env)
				next.ServeHTTP(w, r)
			})
		},
	}
}

// later queues call for the next API request.
func (o *outbox) later(call func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, call)
}

// welcomePing is a server that greets each new endpoint with a webhook.test nobody sent, on the
// next API request (by then the caller knows the secret): signed with the endpoint's secret and
// stamped with its created_at, the service's own time.
func welcomePing(env *Env, next http.Handler) http.Handler {
	o := outboxOf(env)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.flush(env)
		if !registerRoute(r) {
			next.ServeHTTP(w, r)
			return
		}
		a := serve(next, r)
		if d, ok := a.doc(); ok && a.status == http.StatusCreated {
			wh := obj(d, "webhook")
			secret, _ := d["secret"].(string)
			u, _ := wh["url"].(string)
			id, _ := wh["webhook_id"].(string)
			at, err := time.Parse(time.RFC3339, stringOf(wh["created_at"]))
			if u != "" && secret != "" && err == nil {
				o.later(func() { ping(u, secret, id, at) })
			}
		}
		a.send(w)
	})
}

// ping posts a signed webhook.test for endpoint id to u.
func ping(u, secret, id string, at time.Time) {
	did := newDeliveryID()
	body, err := json.Marshal(map[string]any{"id": did, "type": "webhook.test", "created_at": at.UTC().Format(time.RFC3339),
		"data": map[string]any{"webhook_id": id, "message": "Welcome: this endpoint is registered."}})
	if err != nil {
		return
	}
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return
	}
	ts := strconv.FormatInt(at.Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Mediaspec-Webhooks/1.0")
	req.Header.Set("Webhook-Id", did)
	req.Header.Set("Webhook-Timestamp", ts)
	req.Header.Set("Webhook-Signature", signWith(secret, did, ts, body))
	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if resp, err := client.Do(req); err == nil {
		_ = resp.Body.Close()
	}
}

var onceServers = []Server{
	resentOnNextRequest("evt-batch-settled-resent",
		"batch.settled is sent again, as a new delivery with a fresh webhook-id, by the outbox flush of the next API request (it fires twice)",
		[]string{"EVT-003"}, "batch.settled"),
	resentOnNextRequest("evt-credits-low-every-check",
		"the low-balance check runs again on the next API request and sends credits.low again, with a fresh webhook-id, while the balance is still low (every check, not once per refill)",
		[]string{"EVT-006"}, "credits.low"),
	resentOnNextRequest("evt-generation-event-resent",
		"each generation event (completed or failed) is sent again, as a new delivery with a fresh webhook-id, by the outbox flush of the next API request",
		[]string{"DLV-029"}, "generation.completed", "generation.failed"),
	// A generation event is once per endpoint whatever the generation made (issue 37 item 2): a
	// text result's and an image-variant job's events are counted like any other.
	resentOnNextRequestIf("evt-text-result-event-resent",
		"a text result's generation.completed is sent again, with a fresh webhook-id, by the outbox flush of the next API request (its no-outputs row is not marked sent)",
		[]string{"DLV-029"}, func(d map[string]any) bool {
			return d["type"] == "generation.completed" && obj(d, "data")["output_kind"] == "text"
		}),
	resentOnNextRequestIf("evt-image-variants-event-resent",
		"an image-model variants job's generation.completed is sent again, with a fresh webhook-id, once per extra output (one event per output, not per generation)",
		[]string{"DLV-029", "EVT-012"}, func(d map[string]any) bool {
			num, _ := obj(d, "data")["outputs_expected"].(json.Number)
			n, _ := num.Int64()
			return d["type"] == "generation.completed" && obj(d, "data")["output_kind"] == "image" && n >= 2
		}),
	resentOnNextRequest("evt-run-event-resent",
		"a workflow run's end event is sent again, as a new delivery with a fresh webhook-id, by the outbox flush of the next API request",
		[]string{"DLV-029"}, "workflow_run.completed", "workflow_run.failed"),
	resentOnNextRequest("evt-webhook-test-resent",
		"webhook.test is sent again, with a fresh webhook-id, by the outbox flush of the next API request (a test nobody sent)",
		[]string{"EVT-008"}, "webhook.test"),
	{
		Name: "evt-webhook-test-on-register", Rules: []string{"EVT-008"},
		Mistake: "every new endpoint is greeted with a webhook.test nobody sent (a welcome ping after registration)",
		API:     welcomePing,
	},
}
