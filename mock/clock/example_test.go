package clock_test

import (
	"fmt"
	"time"

	"github.com/mediaspec/mediaspec/mock/clock"
)

// A manual clock moves only on Advance, and fires the timers that fall due on the way.
func ExampleNewManual() {
	c := clock.NewManual(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))
	fired := make(chan struct{})
	c.AfterFunc(time.Minute, func() { close(fired) })
	c.Advance(90 * time.Second)
	<-fired
	fmt.Println(clock.Format(c.Now()))
	// Output: 2026-01-05T09:01:30Z
}
