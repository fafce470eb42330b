package framework

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultRequestTimeout bounds one call when the run sets no other (mediaspec check
// --request-timeout): a call that has no answer by then fails its spec, naming the call.
const DefaultRequestTimeout = 30 * time.Second

// errRequestTimeout is the cause of a call context that ran out.
type errRequestTimeout struct {
	d    time.Duration
	name string // what set the limit; "" is the per-request timeout
}

func (e errRequestTimeout) Error() string {
	return fmt.Sprintf("no answer within %s (%s)", e.d, e.limit())
}

func (e errRequestTimeout) limit() string {
	if e.name == "" {
		return "the per-request timeout, --request-timeout"
	}
	return e.name
}

// SetRequestTimeout bounds every call the suite makes from now on; 0 leaves calls bounded only by
// the spec's own context. Call it before the run starts.
func (f *Framework) SetRequestTimeout(d time.Duration) { f.reqTimeout = d }

// callContext is ctx bounded by the per-request timeout.
func (f *Framework) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if f.reqTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, f.reqTimeout, errRequestTimeout{d: f.reqTimeout})
}

// callError names the per-request timeout when that is why err happened, so a silent server reads
// as "no answer within 30s", not as a bare "context deadline exceeded". It counts such calls in a
// row (answered calls reset the count).
func (f *Framework) callError(ctx context.Context, err error) error {
	var rt errRequestTimeout
	if cause := context.Cause(ctx); errors.As(cause, &rt) {
		f.silentCalls.Add(1)
		return rt
	}
	return err
}

// maxSilentCalls is how many calls in a row may go unanswered before the run stops asking: the
// specs left are skipped with the reason instead of each waiting out its own timeouts.
const maxSilentCalls = 3

// answered notes a call that had an answer.
func (f *Framework) answered() { f.silentCalls.Store(0) }

// Unresponsive is the reason to skip the remaining specs when the target stopped answering, or "".
func (f *Framework) Unresponsive() string {
	if f.dripCalls.Load() >= maxSilentCalls {
		return fmt.Sprintf("not run: the target drip-feeds its answers (%d answer bodies were still arriving after %s, the --request-timeout)", maxSilentCalls, f.reqTimeout)
	}
	if n := f.silentCalls.Load(); n >= maxSilentCalls {
		return fmt.Sprintf("not run: the target stopped answering (%d calls in a row had no complete answer within %s, the --request-timeout)", n, f.reqTimeout)
	}
	return ""
}
