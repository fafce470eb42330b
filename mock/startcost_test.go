package mock

import (
	"log/slog"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/mock/clock"
)

// TestNewLeavesTheCatalogueForLater holds the start of a mock to what its probes need: building a
// server does not read, check or compile the capability catalogue (~90,000 allocations when it
// did); the first request that needs it does. Counted in allocations, not time.
func TestNewLeavesTheCatalogueForLater(t *testing.T) {
	allocs := testing.AllocsPerRun(3, func() {
		s, err := New(Config{Seed: 1, Clock: clock.NewManual(time.Unix(0, 0)), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	})
	if allocs > 10000 {
		t.Errorf("mock.New allocates %.0f times: is it reading the catalogue (fixtures.Load) again?", allocs)
	}
}
