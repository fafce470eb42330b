package uploads

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
)

// slowScan queues a slow_scan fault (spec/control.yaml) in ws: the content scan of its next
// finalize whose bytes pass every check lasts seconds of service time.
func slowScan(ctx context.Context, s *framework.Spec, ws *framework.TestWorkspace, seconds int) {
	GinkgoHelper()
	s.QueueFaultIn(ctx, ws.ID, map[string]any{"kind": "slow_scan", "seconds": seconds}, "", 1, "")
}

// overlappingFinalizes starts two finalize calls of id at once while a slow scan runs: one takes
// the file and holds it while the scan runs, so the other must answer at once. It returns the
// first answer (the refused one on a right server) and a channel of the holder's answer, which
// comes once the service clock reaches the end of the scan or of the two-minute hold. A call still
// held when the spec ends is released by moving the clock past the hold.
func overlappingFinalizes(ctx context.Context, s *framework.Spec, c *framework.Client, id string) (
	*framework.Response, <-chan *framework.Response) {
	GinkgoHelper()
	answers, exited, cancel := finalizeTwice(c, id, 5*time.Minute)
	DeferCleanup(func(ctx SpecContext) {
		select {
		case <-exited:
		default:
			s.Advance(ctx, 121)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
			}
		}
		cancel()
	})
	return firstAnswer(answers, fmt.Sprintf("two finalize calls of %s made at once while its scan runs: neither answered within 20 s "+
		"(wall time) with the service clock standing still; one of them must answer 429 rate_limited at once", id)), answers
}

// finalizeTwice makes two finalize calls of id through c at once, on a context of their own that
// lasts timeout, so a spec ending early never cuts them off mid-call. It returns the channel of
// their answers, one closed once both returned, and the context's cancel.
func finalizeTwice(c *framework.Client, id string, timeout time.Duration) (
	answers chan *framework.Response, exited chan struct{}, cancel context.CancelFunc,
) {
	answers = make(chan *framework.Response, 2)
	fctx, cancel := context.WithTimeout(context.Background(), timeout)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			answers <- Finalize(fctx, c, id)
		}()
	}
	exited = make(chan struct{})
	go func() { wg.Wait(); close(exited) }()
	return answers, exited, cancel
}

// firstAnswer is the first of answers, failing with why when none comes within 20 s of wall time.
func firstAnswer(answers <-chan *framework.Response, why string) *framework.Response {
	GinkgoHelper()
	select {
	case first := <-answers:
		return first
	case <-time.After(20 * time.Second):
		Fail(why)
	}
	return nil
}

// FinalizeHold is how long a finalize holds the file while its content scan runs: "another
// finalize runs for this file, held up to 2 minutes" (the text's finalize errors: 429
// rate_limited). LongScan is the scan a spec asks for to outlast it on a target without the
// control API's clock: the spec waits it out in real time.
const (
	FinalizeHold = 2 * time.Minute
	LongScan     = 5 * time.Minute
)

// SlowFinalizes reserves and PUTs the sample PNG, then makes two finalize calls of it at once while
// its content scan lasts seconds: a slow_scan fault of control in a fresh workspace
// (overlappingFinalizes), else a slow_scan test input on both calls (overlappingForced).
// It returns the client, the asset id, the answer of the call that must not hold the file, and a
// channel of the holder's answer.
func SlowFinalizes(ctx context.Context, s *framework.Spec, seconds int) (
	*framework.Client, string, *framework.Response, <-chan *framework.Response,
) {
	GinkgoHelper()
	if s.HasControl() {
		c, ws := Workspace(ctx, s, 20)
		id := PutForFinalize(ctx, s, c)
		slowScan(ctx, s, ws, seconds)
		first, held := overlappingFinalizes(ctx, s, c, id)
		return c, id, first, held
	}
	c := Client(ctx, s, 20)
	id := PutForFinalize(ctx, s, c)
	first, held := overlappingForced(ctx, s, c, id, seconds)
	return c, id, first, held
}

// overlappingForced is overlappingFinalizes for a target whose slow scan is a test input
// (spec/testmode.yaml) of one call, not a fault of its workspace: both calls carry slow_scan with a
// scan of seconds and are made at once. Whichever reaches the target first scans slowly and holds
// the file; the other meets no scan (another finalize runs for this file), and a test input "on a
// request that meets no such event ... changes nothing", so it must answer at once, whichever of the
// two it is (no call is assumed to arrive first). It returns the first answer and a channel of the
// other's.
func overlappingForced(ctx context.Context, s *framework.Spec, c *framework.Client, id string, seconds int) (
	*framework.Response, <-chan *framework.Response,
) {
	GinkgoHelper()
	slow := s.Force(ctx, c, framework.Outcome{Kind: "slow_scan", Seconds: seconds})
	answers, exited, cancel := finalizeTwice(slow, id, FinalizeHold+time.Duration(float64(seconds)*float64(time.Second)/s.TimeScale()))
	go func() { <-exited; cancel() }()
	return firstAnswer(answers, fmt.Sprintf("two finalize calls of %s made at once, each with a slow_scan test input of %d s: neither "+
		"answered within 20 s (wall time); the one that does not scan must answer 429 rate_limited at once", id, seconds)), answers
}

// HeldAnswer returns the answer of the finalize overlappingFinalizes left holding, once the clock
// was moved to release it.
func HeldAnswer(held <-chan *framework.Response, what string) *framework.Response {
	GinkgoHelper()
	return firstAnswer(held, "the finalize that held the file did not answer within 20 s (wall time) after "+what)
}
