package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/mock"
	"github.com/mediaspec/mediaspec/mock/clock"
)

// target is the mock in process (manual clock, control API on) with the proxy in front.
type target struct {
	mock    *mock.Server
	info    mock.StartInfo
	direct  string // the mock's origin
	proxy   *Proxy
	through string // the proxy's origin
}

// startTarget starts the mock on 127.0.0.1:0, wraps it with wrap (nil: unchanged) and puts a proxy
// in front. File links point at the proxy, so uploads and downloads pass through it too.
func startTarget(t testing.TB, wrap func(http.Handler) http.Handler) *target {
	t.Helper()
	return startTargetWith(t, wrap, Config{})
}

// startTargetWith is startTarget with the proxy's Config (its Upstream is set here).
func startTargetWith(t testing.TB, wrap func(http.Handler) http.Handler, cfg Config) *target {
	t.Helper()
	srv, err := mock.New(mock.Config{
		Seed:                  7,
		Clock:                 clock.NewManual(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)),
		ControlToken:          "ctl_proxy_tests",
		Logger:                slog.New(slog.DiscardHandler),
		AllowLoopbackWebhooks: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	var h http.Handler = srv
	if wrap != nil {
		h = wrap(srv)
	}
	up := httptest.NewServer(h)
	t.Cleanup(up.Close)
	cfg.Upstream = up.URL + "/api/v1"
	p, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(p)
	t.Cleanup(func() { front.Close(); p.Close() })
	srv.SetPublicURL(front.URL)
	return &target{mock: srv, info: srv.Info(), direct: up.URL, proxy: p, through: front.URL}
}

// client calls the API through the proxy with one key.
type client struct {
	t    testing.TB
	base string // origin
	key  string
	hdr  map[string]string
}

func (tg *target) client(t testing.TB, key string) *client {
	return &client{t: t, base: tg.through, key: key}
}

// answer is one decoded answer.
type answer struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (a answer) str(path ...string) string {
	v := dig(a.body, path...)
	s, _ := v.(string)
	return s
}

func dig(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// do sends method path (relative to /api/v1 unless it starts with /_) with an optional JSON body.
func (c *client) do(method, path string, body any) answer {
	c.t.Helper()
	url := c.base + "/api/v1" + path
	if strings.HasPrefix(path, "/_") || strings.HasPrefix(path, "http") {
		url = c.base + path
		if strings.HasPrefix(path, "http") {
			url = path
		}
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	a := answer{status: res.StatusCode, header: res.Header, raw: raw}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	_ = dec.Decode(&a.body)
	return a
}

// control calls the mock's control API through the proxy.
func (tg *target) control(t testing.TB, method, path string, body any) answer {
	t.Helper()
	c := &client{t: t, base: tg.through, key: tg.info.ControlToken}
	return c.do(method, "/_control/v1"+path, body)
}

// findings syncs the proxy and returns its findings.
func (tg *target) findings(t testing.TB) []Finding {
	t.Helper()
	if err := tg.proxy.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	return tg.proxy.Report().Findings
}

// imageCapability is an available image capability and its example config.
func imageCapability(t testing.TB, c *client) (string, map[string]any) {
	t.Helper()
	cursor := ""
	for range 20 {
		q := "/capabilities?limit=50"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		a := c.do("GET", q, nil)
		rows, _ := a.body["capabilities"].([]any)
		for _, r := range rows {
			m, _ := r.(map[string]any)
			if m["output_kind"] == "image" && m["status"] == "available" && m["category"] == "image" {
				id, _ := m["capability_id"].(string)
				d := c.do("GET", "/capabilities/"+id, nil)
				cfg, _ := d.body["example_config"].(map[string]any)
				if cfg != nil {
					return id, cfg
				}
			}
		}
		next, _ := a.body["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	t.Fatal("no available image capability")
	return "", nil
}

// goodWalk is a well-behaved client's session: catalogue, estimate, submit at max_credits_needed,
// wait (moving the manual clock), read, list, balance, actors paged by their cursor, webhooks. It
// returns the generation id.
func goodWalk(t testing.TB, tg *target, c *client) string { return walkAPI(t, tg, c, true) }

// walkAPI is goodWalk; with strict false a wrong answer does not stop it (a wrong server's).
func walkAPI(t testing.TB, tg *target, c *client, strict bool) string {
	t.Helper()
	fail := t.Fatalf
	if !strict {
		fail = func(string, ...any) {}
	}
	capID, cfg := imageCapability(t, c)
	est := c.do("POST", "/estimates", map[string]any{"capability_id": capID, "config": cfg})
	if est.status != 200 {
		fail("estimate: %d %s", est.status, est.raw)
	}
	needed, _ := est.body["max_credits_needed"].(json.Number)
	n, _ := needed.Int64()
	sub := c.do("POST", "/generations", map[string]any{"capability_id": capID, "config": cfg, "max_credits": n})
	if sub.status != 201 {
		fail("submit: %d %s", sub.status, sub.raw)
	}
	gen := sub.str("generation_id")
	c.do("GET", "/generations/"+gen, nil)
	for range 10 {
		tg.control(t, "POST", "/clock/advance", map[string]any{"seconds": 30})
		w := c.do("GET", "/generations/"+gen+"/wait", nil)
		if w.status != 200 {
			fail("wait: %d %s", w.status, w.raw)
			break
		}
		if sr, _ := w.body["still_running"].(bool); !sr {
			break
		}
	}
	c.do("GET", "/generations/"+gen, nil)
	c.do("GET", "/generations?limit=5", nil)
	c.do("GET", "/credits/balance", nil)
	a := c.do("GET", "/actors?limit=2", nil)
	if next := a.str("next_cursor"); next != "" {
		c.do("GET", "/actors?limit=2&cursor="+next, nil)
	}
	c.do("GET", "/voices?limit=3", nil)
	c.do("GET", "/webhooks", nil)
	c.do("GET", "/presets?limit=2", nil)
	return gen
}
