package proxy

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The judging's share of the CPU. The forwarding comes first: a client's load test through the
// proxy measures the server, not the judge. Judging an exchange costs several times what
// forwarding it does (decoding both bodies, the description's verdict, the audit), and Go has no
// goroutine priorities, so a judge that always keeps up takes the CPU the forwarding needs and the
// client sees a slow server. So the judging yields while the forwarding is busy: while at least
// busyInFlight requests are being forwarded (a load test; a functional client, a suite, has one or
// two in flight) the judging stages together may judge for only JudgeShare of each second of wall
// time, with a reserve of JudgeBurst; otherwise they judge freely. What arrives meanwhile waits in
// the bounded queue, and past the queue it is forwarded and counted as unjudged (Report.Unjudged,
// the summary's line): nothing is dropped silently. A functional run is judged whole; a load test
// is judged as far as the budget goes.
const (
	// DefaultJudgeShare is how much of one CPU's wall time the judging may take while the
	// forwarding is busy.
	DefaultJudgeShare = 0.1
	// JudgeBurst is the judging time the budget holds in reserve (what a burst may spend at once).
	JudgeBurst = 200 * time.Millisecond
)

// busyInFlight is how many requests in flight make the forwarding busy: two per CPU. It stays busy
// for busyFor after it last had that many (the count dips between a load test's requests).
func busyInFlight() int64 { return int64(2 * runtime.GOMAXPROCS(0)) }

const busyFor = 100 * time.Millisecond

// budget is a bucket of judging time, refilled at share per second of wall time up to JudgeBurst,
// and spent only while the forwarding is busy. The time of a judgement is its wall time: on a
// machine busy with other processes a judgement takes longer than its CPU time, so the judging
// yields more then, not less. Safe for concurrent use.
type budget struct {
	share  float64 // 0: unbounded
	busy   int64
	busyAt atomic.Int64 // when the forwarding last had busy requests in flight (UnixNano)
	now    func() time.Time
	sleep  func(time.Duration)

	mu      sync.Mutex // guards balance, last
	balance time.Duration
	last    time.Time
}

func newBudget(share float64) *budget {
	return &budget{share: share, busy: busyInFlight(), now: time.Now, sleep: time.Sleep, balance: JudgeBurst, last: time.Now()}
}

// forwarding notes that n requests are in flight.
func (b *budget) forwarding(n int64) {
	if b != nil && n >= b.busy {
		b.busyAt.Store(b.now().UnixNano())
	}
}

// refill adds the time earned since the last call; with b.mu held.
func (b *budget) refill(now time.Time) {
	b.balance += time.Duration(float64(now.Sub(b.last)) * b.share)
	b.last = now
	b.balance = min(b.balance, JudgeBurst)
}

// wait blocks while the forwarding is busy and the budget is spent. It reports whether the
// judgement that follows is to be counted (spent).
func (b *budget) wait() bool {
	if b == nil || b.share <= 0 {
		return false
	}
	for {
		if b.now().UnixNano()-b.busyAt.Load() > int64(busyFor) {
			return false
		}
		b.mu.Lock()
		b.refill(b.now())
		short := -b.balance
		b.mu.Unlock()
		if short < 0 {
			return true
		}
		// Look again within a few milliseconds: the forwarding may be idle sooner.
		b.sleep(min(time.Duration(float64(short)/b.share), 2*time.Millisecond) + 100*time.Microsecond)
	}
}

// spend takes d of judging from the budget.
func (b *budget) spend(d time.Duration) {
	b.mu.Lock()
	b.refill(b.now())
	b.balance = max(b.balance-d, -JudgeBurst)
	b.mu.Unlock()
}

// judged runs judge under the budget.
func (b *budget) judged(judge func()) {
	if !b.wait() {
		judge()
		return
	}
	start := b.now()
	judge()
	b.spend(b.now().Sub(start))
}
