package wrongservers

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// In mode c a receiver's URL is registered through the webhook proxy and shown back as it was
// sent; a delivery to the rewritten URL reaches the receiver at its own path; a URL the rewrite
// would take over 2048 characters is left alone.
func TestViaHookProxyRoutesDeliveriesThroughTheProxy(t *testing.T) {
	var got []string // what each receiver saw
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = append(got, r.URL.RequestURI()) }))
	defer rcv.Close()
	hooks := httptest.NewServer(forwardVia(nil))
	defer hooks.Close()

	var registered string
	mock := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var d map[string]any
		_ = json.NewDecoder(r.Body).Decode(&d)
		registered, _ = d["url"].(string)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "webhook": map[string]any{"url": registered}})
	})
	h := viaHookProxy(hooks.URL, mock)
	register := func(u string) string {
		body, _ := json.Marshal(map[string]any{"url": u, "events": []string{"generation.completed"}})
		r := httptest.NewRequest(http.MethodPost, apiPrefix+"/webhooks", strings.NewReader(string(body)))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Body.String()
	}
	own := rcv.URL + "/hooks/a?x=1"
	answer := register(own)
	if !strings.HasPrefix(registered, hooks.URL+viaPrefix) {
		t.Fatalf("the mock was given %q, not a URL through the webhook proxy", registered)
	}
	if !strings.Contains(answer, `"url":"`+own+`"`) {
		t.Errorf("the answer does not show the URL as sent: %s", answer)
	}
	resp, err := http.Post(registered, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if len(got) != 1 || got[0] != "/hooks/a?x=1" {
		t.Errorf("the receiver saw %v, want one delivery to /hooks/a?x=1", got)
	}
	long := rcv.URL + "/" + strings.Repeat("a", maxHookURL-len(rcv.URL)-1)
	register(long)
	if registered != long {
		t.Errorf("a URL of %d characters was rewritten to one of %d", len(long), len(registered))
	}
	register("https://example.com/hook")
	if registered != "https://example.com/hook" {
		t.Errorf("a public URL was rewritten: %s", registered)
	}
}
