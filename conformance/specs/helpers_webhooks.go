package specs

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
	"github.com/mediaspec/mediaspec/receiver"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Webhook helpers: endpoint registration and reads, and the deliveries the receiver records.

var (
	webhookIDPattern  = regexp.MustCompile(`^wh_[0-9a-f]{32}$`)
	deliveryIDPattern = regexp.MustCompile(`^whd_[0-9a-f]{32}$`)
	secretPattern     = regexp.MustCompile(`^whsec_[A-Za-z0-9+/=]{24,}$`)
)

// hook is an endpoint a spec registered at the run's receiver. It is deleted when the spec ends.
type hook struct {
	id, path, url, secret string
	r                     *framework.Response // the registration answer
}

// registerHook registers an endpoint at a fresh path of the receiver with c, subscribed to events,
// requires 201, trusts its secret and deletes it when the spec ends (a 404 then is fine: the spec
// may have deleted it).
func registerHook(ctx context.Context, s *framework.Spec, c *framework.Client, events ...string) hook {
	GinkgoHelper()
	path, u := s.Hooks().NewURL()
	r := c.Post(ctx, "/webhooks", map[string]any{"url": u, "events": events}).ExpectOK(http.StatusCreated)
	h := hook{id: r.String("webhook.webhook_id"), path: path, url: u, secret: r.String("secret"), r: r}
	s.Hooks().Trust(h.secret)
	DeferCleanup(func(ctx SpecContext) {
		d := c.Delete(ctx, "/webhooks/"+h.id)
		Expect(d.Status).To(BeElementOf(http.StatusOK, http.StatusNotFound), "clean up the spec's webhook endpoint"+d.Describe())
	})
	return h
}

// listHooks reads GET /webhooks and returns its rows.
func listHooks(ctx context.Context, c *framework.Client) (*framework.Response, []map[string]any) {
	GinkgoHelper()
	r := c.Get(ctx, "/webhooks").ExpectOK(http.StatusOK)
	var rows []map[string]any
	for i, v := range r.Array("webhooks") {
		rows = append(rows, asObject(r, v, fmt.Sprintf("webhooks[%d]", i)))
	}
	return r, rows
}

// hookRow returns the listed row of endpoint id, or nil.
func hookRow(ctx context.Context, c *framework.Client, id string) map[string]any {
	GinkgoHelper()
	_, rows := listHooks(ctx, c)
	for _, row := range rows {
		if row["webhook_id"] == id {
			return row
		}
	}
	return nil
}

// checkHookRow checks the fields every endpoint object carries.
func checkHookRow(r *framework.Response, m map[string]any, what string) {
	GinkgoHelper()
	Expect(stringField(r, m, "webhook_id", what)).To(MatchRegexp(webhookIDPattern.String()), what+".webhook_id"+r.Describe())
	stringField(r, m, "url", what)
	stringList(r, m, "events", what)
	Expect(stringField(r, m, "status", what)).To(oneOf("active", "failing", "disabled"), what+".status"+r.Describe())
	Expect(intField(r, m, "consecutive_failures", what)).To(BeNumerically(">=", 0), r.Describe())
	nullableString(r, m, "description", what)
	for _, k := range []string{"created_at", "updated_at"} {
		Expect(stringField(r, m, k, what)).NotTo(BeEmpty(), what+"."+k+r.Describe())
	}
	Expect(m).NotTo(HaveKey("secret"), what+" carries the secret"+r.Describe())
}

// retryWaits are the documented waits before attempts 2 to 5.
var retryWaits = []time.Duration{5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 12 * time.Hour}

// arrival is how long (real time, divided by the time scale) a spec waits for a delivery.
func arrival(s *framework.Spec) time.Duration {
	return time.Duration(float64(60*time.Second)/s.TimeScale()) + 30*time.Second
}

// quiet is the real time a spec waits to see that nothing more arrives.
const quiet = 400 * time.Millisecond

// sendTest queues webhook.test for endpoint id through control and returns the delivery id.
func sendTest(ctx context.Context, s *framework.Spec, id string) string {
	GinkgoHelper()
	r, err := s.Control().Call(ctx, http.MethodPost, "/webhooks/"+id+"/test", nil)
	Expect(err).NotTo(HaveOccurred())
	if r.Status == http.StatusNotFound {
		// The endpoint exists (the spec registered it), so a 404 means the operation is missing.
		var doc map[string]any
		_ = json.Unmarshal(r.Body, &doc)
		Skip("unsupported: the control API does not send webhook.test (POST /webhooks/{id}/test answered 404)")
	}
	Expect(r.Status).To(Equal(http.StatusAccepted), "control POST /webhooks/{id}/test"+r.Describe())
	var doc struct {
		DeliveryID string `json:"delivery_id"`
	}
	Expect(json.Unmarshal(r.Body, &doc)).To(Succeed(), r.Describe())
	Expect(doc.DeliveryID).To(MatchRegexp(deliveryIDPattern.String()), r.Describe())
	return doc.DeliveryID
}

// controlHook calls a control webhook operation (rotate, enable, disable) and returns the answer.
func controlHook(ctx context.Context, s *framework.Spec, id, op string) map[string]any {
	GinkgoHelper()
	r, err := s.Control().Call(ctx, http.MethodPost, "/webhooks/"+id+"/"+op, nil)
	Expect(err).NotTo(HaveOccurred())
	if r.Status == http.StatusNotFound {
		Skip("unsupported: the control API does not offer POST /webhooks/{id}/" + op)
	}
	Expect(r.Status).To(Equal(http.StatusOK), "control POST /webhooks/{id}/"+op+r.Describe())
	var doc map[string]any
	Expect(json.Unmarshal(r.Body, &doc)).To(Succeed(), r.Describe())
	return doc
}

// attempts waits for n attempts of delivery id and returns them.
func attempts(ctx context.Context, s *framework.Spec, id string, n int) []receiver.Attempt {
	GinkgoHelper()
	atts, err := s.Hooks().AwaitAttempts(ctx, id, n, arrival(s))
	Expect(err).NotTo(HaveOccurred(), fmt.Sprintf("attempt %d of delivery %s did not arrive", n, id))
	return atts
}

// noMore checks, after a short real wait, that delivery id has exactly n attempts.
func noMore(s *framework.Spec, id string, n int, why string) {
	GinkgoHelper()
	time.Sleep(quiet)
	Expect(s.Hooks().AttemptsFor(id)).To(HaveLen(n), why)
}

// timestampOf reads an attempt's webhook-timestamp.
func timestampOf(a receiver.Attempt) int64 {
	GinkgoHelper()
	n, err := strconv.ParseInt(a.Header.Get("webhook-timestamp"), 10, 64)
	Expect(err).NotTo(HaveOccurred(), "webhook-timestamp is integer Unix seconds: "+a.Header.Get("webhook-timestamp"))
	return n
}

// checkAttempt checks one delivery POST: the headers, and the signature against secret on the raw
// body (not merely any secret the receiver trusts).
func checkAttempt(a receiver.Attempt, secret string) {
	GinkgoHelper()
	h := a.Header
	Expect(a.Method).To(Equal(http.MethodPost))
	Expect(h.Values("content-type")).To(Equal([]string{"application/json"}), "content-type")
	Expect(h.Values("user-agent")).To(Equal([]string{"Mediaspec-Webhooks/1.0"}), "user-agent")
	Expect(h.Get("webhook-id")).To(MatchRegexp(deliveryIDPattern.String()), "webhook-id")
	Expect(h.Get("webhook-timestamp")).To(MatchRegexp(`^[0-9]+$`), "webhook-timestamp")
	Expect(h.Get("webhook-signature")).To(MatchRegexp(`^v1,[A-Za-z0-9+/]+=*$`), "webhook-signature")
	for name := range h {
		if strings.Contains(strings.ToLower(name), "signature") {
			Expect(strings.ToLower(name)).To(Equal("webhook-signature"), "a second signature header: "+name)
		}
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	Expect(err).NotTo(HaveOccurred())
	Expect(wh.VerifyIgnoringTimestamp(a.Body, h)).To(Succeed(), "webhook-signature verifies against the raw body with the endpoint's secret")
	Expect(a.Verdict.Accepted()).To(BeTrue(), "the receiver refused the attempt: "+string(a.Verdict)+" "+a.Detail)
	var env map[string]any
	Expect(json.Unmarshal(a.Body, &env)).To(Succeed(), "the body is JSON")
	Expect(env["id"]).To(Equal(h.Get("webhook-id")), "webhook-id equals the body id")
}

// checkEnvelope validates the whole body against the x-webhooks schema of its type and checks the
// envelope keys.
func checkEnvelope(s *framework.Spec, ev receiver.Event) map[string]any {
	GinkgoHelper()
	var doc map[string]any
	Expect(json.Unmarshal(ev.Raw, &doc)).To(Succeed())
	Expect(doc).To(HaveLen(4), "the envelope is {id, type, created_at, data}: "+string(ev.Raw))
	for _, k := range []string{"id", "type", "created_at", "data"} {
		Expect(doc).To(HaveKey(k), string(ev.Raw))
	}
	sch := s.EventSchema(ev.Type)
	Expect(sch).NotTo(BeNil(), "x-webhooks names no schema for "+ev.Type)
	Expect(sch.VisitJSON(doc)).To(Succeed(), "the "+ev.Type+" body breaks its x-webhooks schema: "+string(ev.Raw))
	data, ok := doc["data"].(map[string]any)
	Expect(ok).To(BeTrue(), string(ev.Raw))
	return data
}

// hookStatus reads an endpoint's status and consecutive_failures from GET /webhooks.
func hookStatus(ctx context.Context, c *framework.Client, id string) (string, int64) {
	GinkgoHelper()
	row := hookRow(ctx, c, id)
	Expect(row).NotTo(BeNil(), "endpoint "+id+" is not listed")
	n, _ := framework.AsInt(row["consecutive_failures"])
	return row["status"].(string), n
}

// exhaustAll drives the deliveries ids (all failing) through their five attempts, moving the clock
// through the retry schedule.
func exhaustAll(ctx context.Context, s *framework.Spec, ids []string) {
	GinkgoHelper()
	for n := 1; n <= 5; n++ {
		for _, id := range ids {
			attempts(ctx, s, id, n)
		}
		if n < 5 {
			s.Advance(ctx, retryWaits[n-1].Seconds())
		}
	}
	// Let the target record the last answers before the caller reads the endpoint.
	time.Sleep(quiet)
}
