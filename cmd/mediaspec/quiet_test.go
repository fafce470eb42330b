package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// mock --quiet logs nothing for ordinary traffic: no request line, and no line for an upload
// refused at finalize (issue 26: that one still came through). Without --quiet both are logged.
func TestMockQuietLogsNoRefusedFinalize(t *testing.T) {
	for _, quiet := range []bool{true, false} {
		t.Run(fmt.Sprintf("quiet=%v", quiet), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			args := []string{"mock", "--addr", "127.0.0.1:0", "--json"}
			if quiet {
				args = append(args, "--quiet")
			}
			pr, pw := io.Pipe()
			var logs lockedBuilder
			done := make(chan error, 1)
			go func() {
				done <- Run(ctx, args, pw, &logs)
				_ = pw.Close()
			}()
			line, err := bufio.NewReader(pr).ReadString('\n')
			if err != nil {
				t.Fatalf("no start line: %v", err)
			}
			go func() { _, _ = io.Copy(io.Discard, pr) }()
			var info struct {
				BaseURL     string `json:"base_url"`
				GenerateKey string `json:"generate_key"`
			}
			if err := json.Unmarshal([]byte(line), &info); err != nil {
				t.Fatal(err)
			}
			refuseAnUpload(t, info.BaseURL, info.GenerateKey)
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			got := logs.String()
			if quiet && got != "" {
				t.Errorf("--quiet logged:\n%s", got)
			}
			if !quiet && (!strings.Contains(got, "upload refused at finalize") || !strings.Contains(got, "/finalize")) {
				t.Errorf("without --quiet the refusal and the request are not logged:\n%s", got)
			}
		})
	}
}

// refuseAnUpload reserves an upload of a truncated PNG, puts its bytes and finalizes it: the
// finalize is refused.
func refuseAnUpload(t *testing.T, base, key string) {
	t.Helper()
	body, err := os.ReadFile("../../fixtures/media/files/truncated.png")
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	call := func(method, url, ctype string, b []byte, auth bool) map[string]any {
		req, _ := http.NewRequest(method, url, bytes.NewReader(b))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if auth {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(res.Body).Decode(&m)
		return m
	}
	up := call("POST", base+"/uploads", "application/json",
		fmt.Appendf(nil, `{"filename":"t.png","content_type":"image/png","size_bytes":%d}`, len(body)), true)
	asset, _ := up["asset_id"].(string)
	link, _ := up["upload_url"].(string)
	if asset == "" || link == "" {
		t.Fatalf("reserve: %v", up)
	}
	call("PUT", link, "image/png", body, false)
	if fin := call("POST", base+"/uploads/"+asset+"/finalize", "", nil, true); fin["error"] == nil {
		t.Fatalf("finalize of a truncated PNG was not refused: %v", fin)
	}
}
