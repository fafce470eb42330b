package mock

import (
	"log/slog"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/mock/clock"
)

// BenchmarkNewServer measures what every test that starts a mock pays: building a server and its
// start state.
func BenchmarkNewServer(b *testing.B) {
	for i := 0; i < b.N; i++ {
		s, err := New(Config{Seed: 1, Clock: clock.NewManual(time.Unix(0, 0)), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
