package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The proxy's cost per exchange, side by side with the bare mock: the same calls straight to the
// mock and through the proxy (which judges every exchange it can: past its bounded queue an
// exchange is forwarded unjudged, and counted). Each benchmark reports the median, the 90th and
// 99th percentiles of one exchange as the client sees it (median-µs, p90-µs, p99-µs) and, through
// the proxy, the exchanges left unjudged; the difference of the medians is what the proxy adds.
//
//	go test -run '^$' -bench . -benchtime 2000x ./proxy/

func BenchmarkBareMockRead(b *testing.B) { benchCall(b, false, "GET", "/api/v1/credits/balance", nil) }
func BenchmarkProxyRead(b *testing.B)    { benchCall(b, true, "GET", "/api/v1/credits/balance", nil) }
func BenchmarkBareMockEstimate(b *testing.B) {
	benchCall(b, false, "POST", "/api/v1/estimates", estimateBody)
}
func BenchmarkProxyEstimate(b *testing.B) {
	benchCall(b, true, "POST", "/api/v1/estimates", estimateBody)
}
func BenchmarkBareMockList(b *testing.B) {
	benchCall(b, false, "GET", "/api/v1/capabilities?limit=50", nil)
}
func BenchmarkProxyList(b *testing.B) {
	benchCall(b, true, "GET", "/api/v1/capabilities?limit=50", nil)
}

// estimateBody marks the estimate benchmarks: the body is the example config of an image
// capability, read from the catalogue.
var estimateBody = []byte("estimate")

const perKey = 50

func benchCall(b *testing.B, through bool, method, path string, body []byte) {
	tg := startTarget(b, nil)
	// A key's buckets hold 120 reads and 60 estimates a minute: a key per perKey calls.
	keys := benchKeys(b, tg, b.N/perKey+1)
	if bytes.Equal(body, estimateBody) {
		capID, cfg := imageCapability(b, &client{t: b, base: tg.direct, key: tg.info.GenerateKey})
		body, _ = json.Marshal(map[string]any{"capability_id": capID, "config": cfg})
	}
	origin := tg.direct
	if through {
		origin = tg.through
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	one := func(key string) (time.Duration, int) {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, _ := http.NewRequest(method, origin+path, rd)
		req.Header.Set("Authorization", "Bearer "+key)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return time.Since(start), res.StatusCode
	}
	if _, status := one(keys[0]); status != 200 {
		b.Fatalf("%s %s answered %d", method, path, status)
	}
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		d, status := one(keys[i/perKey])
		if status != 200 {
			b.Fatalf("call %d answered %d", i, status)
		}
		durations = append(durations, d)
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds()), "median-µs")
	b.ReportMetric(float64(durations[len(durations)*9/10].Microseconds()), "p90-µs")
	b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds()), "p99-µs")
	if through {
		if n := tg.proxy.Report().Exchanges; n < int64(b.N) {
			b.Fatalf("%d exchanges through the proxy, want %d", n, b.N)
		}
		if err := tg.proxy.Sync(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(tg.proxy.Report().Unjudged), "unjudged")
	}
}

// benchKeys makes n generate keys in the default workspace through the control API (straight to
// the mock, so that the proxy judges only the measured calls).
func benchKeys(b *testing.B, tg *target, n int) []string {
	b.Helper()
	keys := make([]string, n)
	c := &client{t: b, base: tg.direct, key: tg.info.ControlToken}
	for i := range keys {
		a := c.do("POST", "/_control/v1/workspaces/"+tg.info.DefaultWorkspaceID+"/keys", map[string]any{"scopes": []string{"read", "generate"}})
		if a.status != 201 {
			b.Fatalf("make a key: %d %s", a.status, a.raw)
		}
		keys[i] = a.str("key")
	}
	return keys
}

// The burst benchmarks: many clients at once (8 per core), the same 50-row capability page, so the
// judging of large answers competes with the forwarding. A proxy whose judging falls behind shows it
// here, in the p99 (and, past its bounded queue, in the report's unjudged count).
func BenchmarkBareMockBurst(b *testing.B) { benchBurst(b, false) }
func BenchmarkProxyBurst(b *testing.B)    { benchBurst(b, true) }

func benchBurst(b *testing.B, through bool) {
	const path = "/api/v1/capabilities?limit=50"
	tg := startTarget(b, nil)
	keys := benchKeys(b, tg, b.N/perKey+1)
	origin := tg.direct
	if through {
		origin = tg.through
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var mu sync.Mutex
	durations := make([]time.Duration, 0, b.N)
	var next atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		local := make([]time.Duration, 0, 256)
		for pb.Next() {
			i := next.Add(1) - 1
			req, _ := http.NewRequest("GET", origin+path, nil)
			req.Header.Set("Authorization", "Bearer "+keys[int(i)/perKey])
			start := time.Now()
			res, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			local = append(local, time.Since(start))
			if res.StatusCode != 200 {
				b.Errorf("call %d answered %d", i, res.StatusCode)
				return
			}
		}
		mu.Lock()
		durations = append(durations, local...)
		mu.Unlock()
	})
	b.StopTimer()
	if len(durations) == 0 {
		return
	}
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Microseconds()), "median-µs")
	b.ReportMetric(float64(durations[len(durations)*99/100].Microseconds()), "p99-µs")
	if through {
		if err := tg.proxy.Sync(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(tg.proxy.Report().Unjudged), "unjudged")
	}
}
