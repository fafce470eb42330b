package mock_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/mediaspec/mediaspec/mock"
	"github.com/mediaspec/mediaspec/mock/clock"
)

// The mock embedded in a client's own tests: a Server is an http.Handler, so httptest serves it on
// 127.0.0.1:0; its start state prints the keys to call it with, and a manual clock moves service
// time only when the test says so.
func ExampleNew() {
	s, err := mock.New(mock.Config{
		Seed:      7,
		Clock:     clock.NewManual(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)),
		Logger:    slog.New(slog.DiscardHandler),
		NoControl: true,
	})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	srv := httptest.NewServer(s)
	defer srv.Close()
	s.SetPublicURL(srv.URL)

	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/capabilities/tts", nil)
	req.Header.Set("Authorization", "Bearer "+s.Info().ReadKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var body struct {
		OK           bool   `json:"ok"`
		CapabilityID string `json:"capability_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		panic(err)
	}
	fmt.Println(resp.StatusCode, body.OK, body.CapabilityID)
	// Output: 200 true tts
}
