package mock

import (
	"bytes"
	"flag"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/jobs"
	"github.com/mediaspec/mediaspec/internal/mock/ratelimit"
	"github.com/mediaspec/mediaspec/internal/mock/workspace"
	"github.com/mediaspec/mediaspec/mock/clock"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestAnswersGolden pins the exact bytes and headers of the answers on the hot read path and of
// the refusals of the key check (testdata/answers.golden; refresh with -update): a change made for
// speed must not change a byte of what a client sees.
func TestAnswersGolden(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
	s, err := New(Config{Seed: 7, Clock: clk, Logger: slog.New(slog.DiscardHandler), NoControl: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetPublicURL("http://127.0.0.1:18400")
	ws, _ := s.svc.Registry.Get(s.DefaultWorkspaceID())
	_, limited, err := s.svc.Registry.CreateKey(ws, workspace.KeyParams{
		Scopes: []workspace.Scope{workspace.ScopeRead}, Buckets: map[ratelimit.Bucket]int{ratelimit.AgentRead: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	info := s.Info()
	var out bytes.Buffer
	do := func(name, method, path string, hdr ...string) {
		t.Helper()
		r := httptest.NewRequest(method, path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Add(hdr[i], hdr[i+1])
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		fmt.Fprintf(&out, "=== %s: %s %s\n%d\n", name, method, path, w.Code)
		keys := make([]string, 0, len(w.Header()))
		for k := range w.Header() {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&out, "%s: %s\n", k, strings.Join(w.Header()[k], " | "))
		}
		out.Write(w.Body.Bytes())
	}
	bearer := func(k string) []string { return []string{"Authorization", "Bearer " + k} }
	subs := map[string]string{}
	two := 2
	for _, c := range []struct {
		name, capability string
		config           map[string]any
		variants         *int
	}{
		{"tts", "tts", map[string]any{"script": "Hot coffee <& twelve hours>, \"quoted\" \u2028 é."}, nil},
		{"image", "image_fast", map[string]any{"prompt": "A red kite over a grey sea."}, &two},
		{"text", "hook_ideas", map[string]any{"product": "A <b>flask</b> that keeps tea hot & \"fresh\"."}, nil},
	} {
		a, err := s.svc.Jobs.Submit(jobs.SubmitParams{WorkspaceID: ws.ID(), Plan: fixtures.PlanPro, CapabilityID: c.capability,
			Config: c.config, Variants: c.variants})
		if err != nil {
			t.Fatalf("submit %s: %v", c.name, err)
		}
		subs[c.name] = a.GenerationID
	}
	do("running", "GET", "/api/v1/generations/"+subs["tts"], bearer(info.ReadKey)...)
	clk.Advance(time.Hour)
	for _, name := range []string{"tts", "image", "text"} {
		do("completed "+name, "GET", "/api/v1/generations/"+subs[name], bearer(info.ReadKey)...)
	}
	do("x-api-key", "GET", "/api/v1/generations/"+subs["tts"], "X-API-Key", info.GenerateKey)
	do("head", "HEAD", "/api/v1/generations/"+subs["tts"], bearer(info.ReadKey)...)
	do("list", "GET", "/api/v1/generations?limit=5", bearer(info.ReadKey)...)
	do("balance", "GET", "/api/v1/credits/balance", bearer(info.ReadKey)...)
	do("unknown generation", "GET", "/api/v1/generations/gen_00000000000000000000000000000000", bearer(info.ReadKey)...)
	do("no key", "GET", "/api/v1/generations/"+subs["tts"])
	do("malformed key", "GET", "/api/v1/generations/"+subs["tts"], bearer("sk_live_short")...)
	do("unknown key", "GET", "/api/v1/generations/"+subs["tts"], bearer("sk_live_"+strings.Repeat("Zz9", 14))...)
	do("two keys", "GET", "/api/v1/generations/"+subs["tts"], append(bearer(info.ReadKey), "X-API-Key", info.GenerateKey)...)
	do("scope", "POST", "/api/v1/generations", bearer(info.ReadKey)...)
	do("bucket 1", "GET", "/api/v1/generations/"+subs["tts"], bearer(limited)...)
	do("bucket 2", "GET", "/api/v1/generations/"+subs["tts"], bearer(limited)...)
	do("no route", "GET", "/api/v1/nope", bearer(info.ReadKey)...)
	do("wrong method", "DELETE", "/api/v1/generations/"+subs["tts"], bearer(info.ReadKey)...)
	do("outside", "GET", "/elsewhere")
	for _, p := range []string{"/api/v1/generations/../credits/balance", "/api/v1//credits/balance", "/api/v1/credits/balance/",
		"/api/v1/credits/./balance", "/api/v1/x/..", "/api/v1/.", "/api/v1/", "/api/v1", "/api/v1/credits/balance?x=1&y=%2F",
		"/api/v1/credits%2Fbalance", "/api/v1/%63redits/balance"} {
		do("path "+p, "GET", p, bearer(info.ReadKey)...)
	}

	golden := filepath.Join("testdata", "answers.golden")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to make it)", err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		got := strings.Split(out.String(), "\n")
		exp := strings.Split(string(want), "\n")
		for i := range max(len(got), len(exp)) {
			g, e := "", ""
			if i < len(got) {
				g = got[i]
			}
			if i < len(exp) {
				e = exp[i]
			}
			if g != e {
				t.Fatalf("answers differ from %s at line %d:\ngot:  %s\nwant: %s", golden, i+1, g, e)
			}
		}
	}
}
