package clients_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/mock"
	"github.com/mediaspec/mediaspec/spec"
)

// Every request example of the REST description succeeds against the mock: each operation's body
// example (with its path parameters' examples) is sent with a generate key and must get a 2XX
// answer that matches the description. Two examples name things only a real deployment has, and
// the test stands in for them: the public file link of POST /uploads/from-url and the public
// receiver URL of POST /webhooks become loopback servers, and the saved workflow of
// POST /workflows/{id}/invoke is first saved from the same template through the control API.
func TestRequestExamplesSucceedAgainstTheMock(t *testing.T) {
	ctx := context.Background()
	doc, err := spec.LoadOpenAPI(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v, err := spec.NewValidator(doc)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mock.New(mock.Config{Seed: 17, TimeScale: 1000, ControlToken: "ctl_examples",
		AllowLoopbackWebhooks: true, AllowLoopbackFetch: true, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	srv.SetPublicURL(ts.URL)
	info := srv.Info()

	png, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "media", "files", "image.png"))
	if err != nil {
		t.Fatal(err)
	}
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(png)
	}))
	defer files.Close()
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer hooks.Close()

	savedWorkflow := func(template string) string {
		body, _ := json.Marshal(map[string]any{"template_key": template, "name": "Example workflow"})
		req, _ := http.NewRequest("POST", info.ControlURL+"/workspaces/"+info.DefaultWorkspaceID+"/workflows", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+info.ControlToken)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out struct {
			WorkflowID string `json:"workflow_id"`
		}
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || out.WorkflowID == "" {
			t.Fatalf("saving a workflow through the control API: status %d, %v", res.StatusCode, err)
		}
		return out.WorkflowID
	}

	paths := doc.Paths.InMatchingOrder()
	sort.Strings(paths)
	replayed := 0
	for _, path := range paths {
		op := doc.Paths.Value(path).Post
		if op == nil || op.RequestBody == nil {
			continue
		}
		mt := op.RequestBody.Value.Content.Get("application/json")
		if mt == nil || mt.Example == nil {
			t.Errorf("POST %s has no request example", path)
			continue
		}
		body := map[string]any{}
		b, _ := json.Marshal(mt.Example)
		_ = json.Unmarshal(b, &body)
		urlPath := path
		for _, p := range op.Parameters {
			if p.Value == nil || p.Value.In != "path" {
				continue
			}
			val, _ := p.Value.Example.(string)
			if path == "/workflows/{id}/invoke" {
				val = savedWorkflow("hero_image")
			}
			if val == "" {
				t.Fatalf("POST %s: path parameter %s has no example", path, p.Value.Name)
			}
			urlPath = strings.ReplaceAll(urlPath, "{"+p.Value.Name+"}", val)
		}
		switch path {
		case "/uploads/from-url":
			body["url"] = files.URL + "/media/product.png"
		case "/webhooks":
			body["url"] = hooks.URL + "/mediaspec"
		}
		b, _ = json.Marshal(body)
		req, _ := http.NewRequest("POST", info.BaseURL+urlPath, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+info.GenerateKey)
		req.Header.Set("Content-Type", "application/json")
		if err := v.ValidateRequest(ctx, req, b); err != nil {
			t.Errorf("POST %s: the example request breaks the description: %v", path, err)
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode/100 != 2 {
			t.Errorf("POST %s: the request example answers %d: %s", path, res.StatusCode, got)
			continue
		}
		if err := v.ValidateResponse(ctx, req, res.StatusCode, res.Header, got); err != nil {
			t.Errorf("POST %s: %v", path, err)
		}
		replayed++
	}
	t.Logf("%d request examples replayed against the mock", replayed)
}
