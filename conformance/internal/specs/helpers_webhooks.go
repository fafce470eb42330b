package specs

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/mediaspec/mediaspec/internal/contract"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/receiver"
	"github.com/mediaspec/mediaspec/spec/judge"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Webhook helpers: endpoint registration and reads, and the deliveries the receiver records.

// The forms of a webhook's id, a delivery's id and a signing secret, as patterns for MatchRegexp.
var (
	webhookIDPattern  = judge.IDPattern("wh_")
	deliveryIDPattern = judge.IDPattern("whd_")
)

const secretPattern = `^whsec_[A-Za-z0-9+/=]{24,}$`

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
	return registerHookAt(ctx, s, c, path, u, events...)
}

// registerHookAt is registerHook for url u, which reaches the receiver at path (NamedURL).
func registerHookAt(ctx context.Context, s *framework.Spec, c *framework.Client, path, u string, events ...string) hook {
	GinkgoHelper()
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
		rows = append(rows, answer.AsObject(r, v, fmt.Sprintf("webhooks[%d]", i)))
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
	Expect(answer.String(r, m, "webhook_id", what)).To(MatchRegexp(webhookIDPattern), what+".webhook_id"+r.Describe())
	answer.String(r, m, "url", what)
	answer.Strings(r, m, "events", what)
	Expect(answer.String(r, m, "status", what)).To(answer.OneOf("active", "failing", "disabled"), what+".status"+r.Describe())
	Expect(answer.Int(r, m, "consecutive_failures", what)).To(BeNumerically(">=", 0), r.Describe())
	answer.NullableString(r, m, "description", what)
	for _, k := range []string{"created_at", "updated_at"} {
		Expect(answer.String(r, m, k, what)).NotTo(BeEmpty(), what+"."+k+r.Describe())
	}
	Expect(m).NotTo(HaveKey("secret"), what+" carries the secret"+r.Describe())
}

// retryWaits are the documented waits before attempts 2 to 5.
var retryWaits = contract.RetryWaits()

// firstRetryWait is the first retry's wait with a tenth more, which a spec waits out on a
// clock it cannot advance (pastFirstRetry).
var firstRetryWait = retryWaits[0] + retryWaits[0]/10

// arrival is how long (real time, divided by the time scale) a spec waits for a delivery.
func arrival(s *framework.Spec) time.Duration {
	return time.Duration(float64(60*time.Second)/s.TimeScale()) + 30*time.Second
}

// quietWindow is how long (real time) a spec without the control API's delivery history watches
// for something that must not arrive. With the history the spec reads the target's own evidence
// instead (settled).
const quietWindow = 2 * time.Second

// sendTest queues webhook.test for endpoint id through control and returns the delivery id.
func sendTest(ctx context.Context, s *framework.Spec, id string) string {
	GinkgoHelper()
	return sendTestBody(ctx, s, id, nil)
}

// sendTestMessage queues webhook.test with data.message set to message (control's optional body).
// It skips the spec when the control API refuses the body.
func sendTestMessage(ctx context.Context, s *framework.Spec, id, message string) string {
	GinkgoHelper()
	return sendTestBody(ctx, s, id, map[string]any{"message": message})
}

// testHookAfter is the service time after its registration at which a webhook_test test input has
// the endpoint sent its webhook.test: the suite trusts the endpoint's secret, from the
// registration's answer, before the test arrives.
const testHookAfter = 5 * time.Second

// registerTestedHook registers an endpoint for events with c and has one webhook.test sent to it
// with data.message message ("": the target's default text), as the app's Send test button sends
// it: through control (POST /webhooks/{id}/test) where control is offered, else with a
// webhook_test test input on the registration. It returns the endpoint and the test's delivery id
// (the webhook-id of its first attempt, as the receiver saw it, without control).
func registerTestedHook(ctx context.Context, s *framework.Spec, c *framework.Client, message string, events ...string) (hook, string) {
	GinkgoHelper()
	ti, forced := s.AppAct(c, framework.Outcome{Kind: "webhook_test", Seconds: int(testHookAfter.Seconds()), Message: message})
	if !forced {
		h := registerHook(ctx, s, c, events...)
		if message == "" {
			return h, sendTest(ctx, s, h.id)
		}
		return h, sendTestMessage(ctx, s, h.id, message)
	}
	h := registerHook(ctx, s, ti, events...)
	wait := arrival(s) + time.Duration(float64(testHookAfter)/s.TimeScale())
	// The endpoint may hear other events first (credits.low of a workspace being spent): the test's
	// delivery is the first attempt of type webhook.test.
	tests := func() []receiver.Attempt {
		return slices.DeleteFunc(s.Hooks().Attempts(h.path), func(a receiver.Attempt) bool { return a.Type != "webhook.test" })
	}
	Eventually(tests).WithContext(ctx).WithTimeout(wait).
		WithPolling(100*time.Millisecond).ShouldNot(BeEmpty(), "the webhook.test the registration's test input asked for did not arrive")
	id := tests()[0].DeliveryID
	Expect(id).To(MatchRegexp(deliveryIDPattern), "the webhook.test attempt's webhook-id")
	return h, id
}

func sendTestBody(ctx context.Context, s *framework.Spec, id string, body any) string {
	GinkgoHelper()
	r, err := s.Control().Call(ctx, http.MethodPost, "/webhooks/"+id+"/test", body)
	Expect(err).NotTo(HaveOccurred())
	if body != nil && r.Status == http.StatusBadRequest {
		s.Lacks("the control API does not take a webhook.test message (POST /webhooks/{id}/test answered 400)")
	}
	if r.Status == http.StatusNotFound {
		// The endpoint exists (the spec registered it), so a 404 means the operation is missing.
		var doc map[string]any
		_ = json.Unmarshal(r.Body, &doc)
		s.Lacks("the control API does not send webhook.test (POST /webhooks/{id}/test answered 404)")
	}
	Expect(r.Status).To(Equal(http.StatusAccepted), "control POST /webhooks/{id}/test"+r.Describe())
	var doc struct {
		DeliveryID string `json:"delivery_id"`
	}
	Expect(json.Unmarshal(r.Body, &doc)).To(Succeed(), r.Describe())
	Expect(doc.DeliveryID).To(MatchRegexp(deliveryIDPattern), r.Describe())
	return doc.DeliveryID
}

// controlHook calls a control webhook operation (rotate, enable, disable) and returns the answer.
func controlHook(ctx context.Context, s *framework.Spec, id, op string) map[string]any {
	GinkgoHelper()
	r, err := s.Control().Call(ctx, http.MethodPost, "/webhooks/"+id+"/"+op, nil)
	Expect(err).NotTo(HaveOccurred())
	if r.Status == http.StatusNotFound {
		s.Lacks("the control API does not offer POST /webhooks/{id}/%s", op)
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

// deliveryRecord is one delivery of the control API's history (GET /webhooks/{id}/deliveries).
type deliveryRecord struct {
	ID        string `json:"delivery_id"`
	EventType string `json:"event_type"`
	Status    string `json:"status"`
	Attempts  []struct {
		Attempt int       `json:"attempt"`
		SentAt  time.Time `json:"sent_at"`
	} `json:"attempts"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
}

// quietAt reports whether the delivery gets no further attempt before the clock passes now: it is
// finished, or its next attempt is scheduled later (control.yaml, Delivery.status; a delivery
// failed on the service's own side stays pending with a later next_attempt_at).
func (d deliveryRecord) quietAt(now time.Time) bool {
	switch d.Status {
	case "delivered", "exhausted", "dropped":
		return true
	case "retrying", "pending":
		return d.NextAttemptAt != nil && d.NextAttemptAt.After(now)
	}
	return false
}

// faultLeft reads the events fault id has left through control (GET /faults); 0 once used up.
func faultLeft(ctx context.Context, s *framework.Spec, id string) int64 {
	GinkgoHelper()
	r, err := s.Control().Call(ctx, http.MethodGet, "/faults", nil)
	Expect(err).NotTo(HaveOccurred())
	Expect(r.Status).To(Equal(http.StatusOK), "control GET /faults"+r.Describe())
	for i := range r.Array("faults") {
		if r.String(fmt.Sprintf("faults.%d.fault_id", i)) == id {
			return r.Int(fmt.Sprintf("faults.%d.remaining", i))
		}
	}
	return 0
}

// history reads every delivery of endpoint hookID from the control API, newest first. ok is false
// when the endpoint has no history to read (deleted: 404).
func history(ctx context.Context, s *framework.Spec, hookID string) (out []deliveryRecord, ok bool) {
	GinkgoHelper()
	path := "/webhooks/" + hookID + "/deliveries?limit=100"
	for range 100 {
		r, err := s.Control().Call(ctx, http.MethodGet, path, nil)
		Expect(err).NotTo(HaveOccurred())
		if r.Status == http.StatusNotFound {
			return nil, false
		}
		Expect(r.Status).To(Equal(http.StatusOK), "control GET /webhooks/{id}/deliveries"+r.Describe())
		var page struct {
			Deliveries []deliveryRecord `json:"deliveries"`
			Next       *string          `json:"next_cursor"`
		}
		Expect(json.Unmarshal(r.Body, &page)).To(Succeed(), r.Describe())
		out = append(out, page.Deliveries...)
		if page.Next == nil {
			return out, true
		}
		path = "/webhooks/" + hookID + "/deliveries?limit=100&cursor=" + *page.Next
	}
	Fail("the delivery history of " + hookID + " did not end within 100 pages")
	return nil, false
}

// settled waits until every delivery of endpoint hookID is quiet on the target's clock (nothing due
// or in flight) and returns the history; ok is false when the endpoint has none (deleted).
func settled(ctx context.Context, s *framework.Spec, hookID string) (out []deliveryRecord, ok bool) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		now := s.ClockNow(ctx)
		out, ok = history(ctx, s, hookID)
		for _, d := range out {
			g.Expect(d.quietAt(now)).To(BeTrue(), fmt.Sprintf("delivery %s is %s with its next attempt at %v (now %s)", d.ID, d.Status, d.NextAttemptAt, now))
		}
	}).WithContext(ctx).WithTimeout(arrival(s)).WithPolling(50 * time.Millisecond).Should(Succeed())
	return out, ok
}

// recordOf returns delivery id of a settled history; it fails the spec when the history lacks it.
func recordOf(list []deliveryRecord, id string) deliveryRecord {
	GinkgoHelper()
	for _, d := range list {
		if d.ID == id {
			return d
		}
	}
	Fail("the delivery history has no " + id)
	return deliveryRecord{}
}

// noMore checks that delivery id of endpoint hookID got exactly n attempts and gets no more until
// the clock moves: with the control API, from the target's own history once the delivery is quiet
// (and the receiver holds the same n); without it, by watching the receiver for quietWindow.
func noMore(ctx context.Context, s *framework.Spec, hookID, id string, n int, why string) {
	GinkgoHelper()
	if s.HasControl() {
		if list, ok := settled(ctx, s, hookID); ok {
			Expect(recordOf(list, id).Attempts).To(HaveLen(n), why+" (the target's delivery history)")
			Expect(s.Hooks().AttemptsFor(id)).To(HaveLen(n), why)
			return
		}
	}
	Consistently(func() int { return len(s.Hooks().AttemptsFor(id)) }).WithContext(ctx).
		WithTimeout(quietWindow).WithPolling(50*time.Millisecond).Should(Equal(n), why)
}

// nothingFor checks that endpoint hookID (and its receiver path) gets no event matching m: with
// the control API, the receiver holds none once the endpoint's history is quiet (every attempt made
// was answered before the target recorded it); without it, by watching the receiver for
// quietWindow.
func nothingFor(ctx context.Context, s *framework.Spec, hookID string, m receiver.Match, why string) {
	GinkgoHelper()
	if s.HasControl() {
		if _, ok := settled(ctx, s, hookID); ok {
			Expect(s.Hooks().Find(m)).To(BeEmpty(), why)
			return
		}
	}
	Consistently(func() int { return len(s.Hooks().Find(m)) }).WithContext(ctx).
		WithTimeout(quietWindow).WithPolling(50*time.Millisecond).Should(BeZero(), why)
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
	Expect(h.Values("content-type")).To(HaveLen(1), "content-type")
	mt, _, err := mime.ParseMediaType(h.Get("content-type"))
	Expect(err == nil && mt == "application/json").To(BeTrue(), "content-type is application/json: "+h.Get("content-type"))
	// <Service>-Webhooks/1.0: the service's name is its own (the text does not give it).
	Expect(h.Values("user-agent")).To(ConsistOf(MatchRegexp(`^[^\s/]+-Webhooks/1\.0$`)), "user-agent is <Service>-Webhooks/1.0")
	Expect(h.Get("webhook-id")).To(MatchRegexp(deliveryIDPattern), "webhook-id")
	Expect(h.Get("webhook-timestamp")).To(MatchRegexp(`^[0-9]+$`), "webhook-timestamp")
	// The Standard Webhooks scheme lets one header carry several signatures, space-delimited (a
	// sender rotating keys): each is v1, then base64; one that verifies is enough (issue 35).
	Expect(h.Get("webhook-signature")).To(MatchRegexp(`^v1,[A-Za-z0-9+/]+=*( v1,[A-Za-z0-9+/]+=*)*$`), "webhook-signature")
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

// awaitDelivered waits for the verified event m on m.Path like Hooks().Await. When none came but the
// receiver refused an attempt on that path because its webhook-id and envelope id differ, the
// failure is charged to DLV-003 and ID-009 (the ids must be equal), not to the caller's step: the
// event never arrived only because the ids disagree.
func awaitDelivered(ctx context.Context, s *framework.Spec, m receiver.Match) receiver.Event {
	GinkgoHelper()
	ev, err := s.Hooks().Await(ctx, m, arrival(s))
	if err != nil {
		for _, a := range s.Hooks().Attempts(m.Path) {
			if a.Verdict == receiver.VerdictIDMismatch {
				s.Step("DLV-003", "ID-009")
				Fail("webhook-id is the delivery id and equals the body id, but the receiver refused an attempt: " + a.Detail)
			}
		}
	}
	Expect(err).NotTo(HaveOccurred(), fmt.Sprintf("no %s for %s on %s", m.Type, m.ResourceID, m.Path))
	return ev
}

// eventData decodes ev's data without judging the rest of the body, so a payload rule's own check
// can run (and be charged) before checkEnvelope's schema check, which would fail on the same
// mistake under another rule.
func eventData(ev receiver.Event) map[string]any {
	GinkgoHelper()
	var data map[string]any
	Expect(json.Unmarshal(ev.Data, &data)).To(Succeed(), "data is a JSON object: "+string(ev.Raw))
	Expect(data).NotTo(BeNil(), "data is a JSON object: "+string(ev.Raw))
	return data
}

// checkEnvelope validates the whole body against the x-webhooks schema of its type and checks the
// envelope keys are there.
func checkEnvelope(s *framework.Spec, ev receiver.Event) map[string]any {
	GinkgoHelper()
	var doc map[string]any
	Expect(json.Unmarshal(ev.Raw, &doc)).To(Succeed())
	// The envelope holds id, type, created_at and data; further keys are new response fields,
	// which ship without warning (Versioning), so they are allowed.
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

// advanceSettled moves the target's clock seconds on once it has recorded the answers of the
// attempts of endpoint hookID so far (settled), for a spec that then awaits the retry due: an
// answer that has reached the receiver but not yet the target when the clock jumps ends its
// attempt as unanswered, and the retry is then due a whole wait after the jump (seen under load,
// as a retry that never came).
func advanceSettled(ctx context.Context, s *framework.Spec, hookID string, seconds float64) {
	GinkgoHelper()
	settled(ctx, s, hookID)
	s.Advance(ctx, seconds)
}

// exhaustAll drives the deliveries ids (all failing) through their five attempts, moving the clock
// through the retry schedule.
func exhaustAll(ctx context.Context, s *framework.Spec, hookID string, ids []string) {
	GinkgoHelper()
	for n := 1; n <= 5; n++ {
		for _, id := range ids {
			attempts(ctx, s, id, n)
		}
		if n < 5 {
			advanceSettled(ctx, s, hookID, retryWaits[n-1].Seconds())
		}
	}
	// The target has recorded the last answers once its history is quiet.
	settled(ctx, s, hookID)
}

// admitted is a webhook URL the target was seen to admit, so that a refusal of it changed in one
// way has that one cause (issue 12 item 6).
type admitted struct {
	url  string
	host string // the hostname mapped through the control API's resolver override; "" when none
	// how says which URL it is, for failure messages.
	how string
}

// https reports whether the admitted URL is an https URL.
func (a admitted) https() bool { return strings.HasPrefix(a.url, "https://") }

// mappedHost returns a fresh hostname under .test (RFC 6761: never in public DNS).
func mappedHost() string { return "wh-" + framework.RandomHex(12) + ".conformance.test" }

// admittedURL finds a webhook URL the target admits and proves it by registering it with c (and
// deleting it again): with the control API's resolver override, an https URL on a fresh name mapped
// to the receiver's loopback address (127.0.0.1); else the receiver's own URL. It skips the spec
// when the run has neither (no URL known to be admitted, so a refusal could have another cause).
func admittedURL(ctx context.Context, s *framework.Spec, c *framework.Client) admitted {
	GinkgoHelper()
	var tried []string
	try := func(a admitted) bool {
		r := c.Post(ctx, "/webhooks", map[string]any{"url": a.url, "events": []string{"credits.low"}}, framework.Invalid())
		if r.Status != http.StatusCreated {
			tried = append(tried, fmt.Sprintf("%s (HTTP %d)", a.how, r.Status))
			return false
		}
		c.Delete(ctx, "/webhooks/"+r.String("webhook.webhook_id")).ExpectOK(http.StatusOK)
		return true
	}
	if s.HasControl() {
		host := mappedHost()
		if s.TryMapHost(ctx, host, "127.0.0.1") {
			a := admitted{url: "https://" + host + "/mediaspec-hooks", host: host, how: "an https URL on a name the resolver override maps to 127.0.0.1"}
			if s.HasReceiver() {
				if _, u, ok := s.Hooks().NamedURL(host); ok {
					a.url = u
				}
			}
			if try(a) {
				return a
			}
		} else {
			tried = append(tried, "no resolver override")
		}
	}
	if s.HasReceiver() {
		_, u := s.Hooks().NewURL()
		if a := (admitted{url: u, how: "the receiver's URL"}); try(a) {
			return a
		}
	}
	what := "nothing to try: no control API and no receiver"
	if len(tried) > 0 {
		what = "tried: " + strings.Join(tried, ", ")
	}
	reason := "no webhook URL this target admits (" + what + "; a receiver the target accepts or the control API's resolver override is needed), so a refusal could have another cause"
	if s.HasControl() {
		s.Lacks("%s", reason) // the reference mock offers the resolver override
	}
	framework.SkipFor(framework.Unsupported(framework.Receiver, reason))
	return admitted{}
}

// withUserinfo returns raw with a username (and, when password, a password) before its host.
func withUserinfo(raw string, password bool) string {
	GinkgoHelper()
	u, err := url.Parse(raw)
	Expect(err).NotTo(HaveOccurred())
	u.User = url.User("user")
	if password {
		u.User = url.UserPassword("user", "secret")
	}
	return u.String()
}

// withHost returns raw with its host name replaced by host (an address or a name), its port kept.
func withHost(raw, host string) string {
	GinkgoHelper()
	u, err := url.Parse(raw)
	Expect(err).NotTo(HaveOccurred())
	if port := u.Port(); port != "" {
		u.Host = net.JoinHostPort(host, port)
	} else {
		u.Host = host
	}
	return u.String()
}

// padTo returns raw with its path lengthened to exactly n characters in all.
func padTo(raw string, n int) string {
	GinkgoHelper()
	Expect(len(raw)).To(BeNumerically("<", n-1), "the admitted URL is already longer than "+fmt.Sprint(n))
	return raw + "/" + strings.Repeat("a", n-len(raw)-1)
}

// must returns the list of a settled history, failing the spec when the endpoint has none.
func must(list []deliveryRecord, ok bool) []deliveryRecord {
	GinkgoHelper()
	Expect(ok).To(BeTrue(), "the endpoint has no delivery history (deleted?)")
	return list
}

// firstRetry is the settle window of expectOnce: past the first retry's wait (5 minutes), so a
// second delivery a target schedules as a retry (or on its next tick) has come by then.
var firstRetry = retryWaits[0] + time.Second

// expectOnce is the counting-"once" check every event spec shares (issue 37): where the text says an
// event reaches an endpoint once per trigger (batch.settled "fires once", credits.low once per
// refill, each generation's event once per endpoint, webhook.test only when sent), the receiver
// holds exactly n distinct deliveries matching m (event type, endpoint path and resource) once the
// deliveries have settled. Attempts repeating a webhook-id are retries, which the text allows: the
// receiver records each id once, so only a second delivery with a fresh id counts.
//
// The settle window: the endpoint is read through the API with c (a call the caller would make
// next, and a target that sends on its next request has sent by its answer), then, with the
// control API, the target's clock moves past the first retry and the endpoint's deliveries are
// read quiet on it. Without the control API the count is taken after the read, without a real-time
// wait (a keys-only run judges what came, and sleeps for nothing).
func expectOnce(ctx context.Context, s *framework.Spec, c *framework.Client, h hook, m receiver.Match, n int, why string) {
	GinkgoHelper()
	m.Path = h.path
	hookRow(ctx, c, h.id)
	if s.HasControl() {
		advanceSettled(ctx, s, h.id, firstRetry.Seconds())
		settled(ctx, s, h.id)
	} else {
		fmt.Fprintf(GinkgoWriter, "counting %s without a settle window (no control API to move the target's clock): a second delivery later than the endpoint read is not seen\n", m)
	}
	got := s.Hooks().Find(m)
	ids := make([]string, 0, len(got))
	for _, e := range got {
		ids = append(ids, e.ID)
	}
	Expect(got).To(HaveLen(n), fmt.Sprintf("%s: %d distinct deliveries (%s) of %s, want %d (a repeat with a fresh webhook-id is a second event, not a retry)", why, len(got), strings.Join(ids, ", "), m, n))
}

// Deliveries without the control API (issue 36): a spec about how the target sends (retries,
// failed attempts, what ends a delivery) needs a delivery, and the receiver's own answers make an
// attempt fail (500, a redirect, a dropped connection, no answer within 10 s), so only the trigger
// and the clock need the control API. Without it the trigger is an event the caller can cause, a
// cheap generation's generation.completed, and the retry waits pass on the target's real clock
// (--real-time; the wall time is printed).

// deliveryHooks registers n endpoints at fresh receiver paths, each behaving as behaviors[i] (nil:
// 204), subscribed to what fireAt sends them: credits.low with the control API (webhook.test needs
// no subscription and nothing else fires in the spec's workspace), generation.completed without.
func deliveryHooks(ctx context.Context, s *framework.Spec, c *framework.Client, behaviors ...receiver.Behavior) []hook {
	GinkgoHelper()
	event := "generation.completed"
	if s.HasControl() {
		event = "credits.low"
	}
	out := make([]hook, 0, len(behaviors))
	for _, b := range behaviors {
		h := registerHook(ctx, s, c, event)
		if b != nil {
			s.Hooks().Behave(h.path, b)
		}
		out = append(out, h)
	}
	return out
}

// fireAt makes one delivery reach each of hooks (deliveryHooks) and returns their ids, once each
// first attempt has arrived: with the control API, webhook.test sent to each (the app's Send
// test); without it, one cheap image generation of c's workspace, finished, whose
// generation.completed every endpoint gets (c must be the client that registered them).
func fireAt(ctx context.Context, s *framework.Spec, c *framework.Client, hooks ...hook) []string {
	GinkgoHelper()
	ids := make([]string, len(hooks))
	if s.HasControl() {
		for i, h := range hooks {
			ids[i] = sendTest(ctx, s, h.id)
			attempts(ctx, s, ids[i], 1)
		}
		return ids
	}
	d := catalogue.ImageModel(ctx, c)
	j := submit(ctx, s, c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
	s.Finish(ctx, c, j.id)
	for i, h := range hooks {
		var first receiver.Attempt
		Eventually(func() bool {
			for _, a := range s.Hooks().Attempts(h.path) {
				if a.Type == "generation.completed" && a.ResourceID == j.id {
					first = a
					return true
				}
			}
			return false
		}).WithContext(ctx).WithTimeout(arrival(s)).WithPolling(50*time.Millisecond).
			Should(BeTrue(), "no generation.completed attempt of "+j.id+" reached "+h.path)
		ids[i] = first.DeliveryID
	}
	return ids
}

// pastFirstRetry lets the first retry's wait (5 minutes, with a tenth more) pass on the target's
// clock once the target has recorded the answers so far: with the control API, it moves the clock
// once every endpoint of hookIDs is settled; without it, it waits the time out (the spec needs
// RealTime).
func pastFirstRetry(ctx context.Context, s *framework.Spec, hookIDs ...string) {
	GinkgoHelper()
	wait := firstRetryWait
	if s.HasControl() {
		for _, id := range hookIDs {
			settled(ctx, s, id)
		}
		s.Advance(ctx, wait.Seconds())
		return
	}
	s.WaitOut(ctx, wait)
}
