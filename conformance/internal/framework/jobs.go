package framework

import (
	"github.com/mediaspec/mediaspec/conformance/internal/openshape"

	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
)

// Jobs a spec started on a shared key. Without control, specs share the configured keys, and a
// job one spec leaves running would hold its key's one slot (the next spec's submit answers 409
// submission_in_flight) and settle later, moving the balance another spec reads. So every job a
// shared-key call starts — a 201 or 202 naming generation_id, generation_ids or workflow_run_id —
// is remembered, and after each spec (settleJobs, an AfterEach) the run waits, in parallel, until
// every one of them has ended. With control, specs get keys and workspaces of their own and move
// the service clock themselves, so nothing is tracked.

// settleLimit is the most real time settleJobs waits for one job.
const settleLimit = 15 * time.Minute

// runPoll is how often settleJobs reads a workflow run that is still going (runs have no wait).
const runPoll = 2 * time.Second

// finishedRunStatuses are the workflow run statuses that end a run.
var finishedRunStatuses = []string{"completed", "partial", "failed", "canceled"}

// trackedJob is a generation or workflow run a shared-key call started.
type trackedJob struct {
	c   *Client
	run bool // a workflow run (wfr_), else a generation
	id  string
}

// jobTracker holds the jobs started since the last settle.
type jobTracker struct {
	mu   sync.Mutex // guards jobs
	jobs []trackedJob

	stopOnce sync.Once
	stopped  chan struct{} // closed by Stop (made by done)

	abandoned atomic.Int64 // jobs a stopped run did not wait for (AbandonedJobs)
}

// AbandonedJobs is how many jobs started on a shared key the run left running because it was
// stopped (settleAll): they end on their own, and until then the key's one slot may be taken.
func (f *Framework) AbandonedJobs() int { return int(f.jobs.abandoned.Load()) }

// done is closed when the run has been stopped (Framework.Stop).
func (t *jobTracker) done() chan struct{} {
	t.stopOnce.Do(func() { t.stopped = make(chan struct{}) })
	return t.stopped
}

// Stop tells the framework that the run was stopped (Ctrl-C, the run's timeout): waits for the
// jobs of a shared key (settleJobs) end at once instead of waiting, in real time, for jobs whose
// outcome no spec will read. Safe to call more than once and concurrently.
func (f *Framework) Stop() {
	ch := f.jobs.done()
	f.jobs.mu.Lock()
	defer f.jobs.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

func (t *jobTracker) add(j trackedJob) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, x := range t.jobs {
		if x.id == j.id {
			return
		}
	}
	t.jobs = append(t.jobs, j)
}

func (t *jobTracker) take() []trackedJob {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.jobs
	t.jobs = nil
	return out
}

// track remembers the jobs a shared-key call started, when the run has no control.
func (c *Client) track(method string, r *Response) {
	if !c.shared || c.f.controlRoot != nil || method != http.MethodPost || r == nil {
		return
	}
	if r.Status != http.StatusCreated && r.Status != http.StatusAccepted {
		return
	}
	doc, err := r.object()
	if err != nil {
		return
	}
	if id, ok := doc["generation_id"].(string); ok && id != "" {
		c.f.jobs.add(trackedJob{c: c, id: id})
	}
	if list, ok := doc["generation_ids"].([]any); ok {
		for _, v := range list {
			if id, ok := v.(string); ok && id != "" {
				c.f.jobs.add(trackedJob{c: c, id: id})
			}
		}
	}
	if strings.Contains(r.Exchange.URL, "/invoke") {
		// The run an invoke started: named by its Location, or the one wfr_ id of its answer
		// (the invoke answer's shape is not shown).
		if id, ok := openshape.RunID(r.Header.Get("Location"), doc); ok {
			c.f.jobs.add(trackedJob{c: c, run: true, id: id})
		}
	}
}

// settleJobs waits until every job tracked since the last call has ended, all at once, and fails
// the spec naming the jobs that did not end or could not be read.
func (f *Framework) settleJobs(sctx SpecContext) {
	if err := f.settleAll(sctx); err != nil {
		Fail("a job the spec started on a shared key did not end, so the next spec would see it: " + err.Error())
	}
}

// settleAll waits until every job tracked since the last call has ended, or the run is stopped
// (Stop): then it returns nil at once, whatever the jobs do, so a stopped run ends on time (a
// real-time render left running held --timeout 5s to 15 s and more).
func (f *Framework) settleAll(sctx context.Context) error {
	jobs := f.jobs.take()
	stopped := f.jobs.done()
	if len(jobs) == 0 {
		return nil
	}
	select {
	case <-stopped:
		f.jobs.abandoned.Add(int64(len(jobs)))
		return nil // the run was stopped: no spec will read what they leave
	default:
	}
	ctx, cancel := context.WithCancel(sctx)
	defer cancel()
	go func() {
		select {
		case <-stopped:
			cancel()
		case <-ctx.Done():
		}
	}()
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = j.settle(ctx)
		}()
	}
	wg.Wait()
	select {
	case <-stopped:
		for _, err := range errs {
			if err != nil {
				f.jobs.abandoned.Add(1)
			}
		}
		return nil
	default:
	}
	return errors.Join(errs...)
}

// settle waits until the job has ended: a generation through GET /generations/{id}/wait until
// still_running is false, a workflow run by reading it until its status is a finished one.
func (j trackedJob) settle(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, settleLimit)
	defer cancel()
	path := "/generations/" + j.id + "/wait"
	if j.run {
		path = "/workflow-runs/" + j.id
	}
	for {
		r, err := j.c.call(ctx, http.MethodGet, path, nil)
		if err != nil {
			return err
		}
		if r.Status != http.StatusOK {
			return fmt.Errorf("GET %s answered %d%s", path, r.Status, r.Describe())
		}
		doc, err := r.object()
		if err != nil {
			return fmt.Errorf("GET %s: %w", path, err)
		}
		if !j.run {
			if still, ok := doc["still_running"].(bool); ok && !still {
				return nil
			}
		} else {
			// The run record is the object carrying workflow_run_id, wherever the answer puts it
			// (workflow run records: not shown); its status is one of the run statuses.
			st, _ := openshape.RunStatus(doc)
			if slices.Contains(finishedRunStatuses, st) {
				return nil
			}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s had not ended after %s", strings.TrimPrefix(path, "/"), settleLimit)
		}
		if j.run {
			select {
			case <-ctx.Done():
			case <-time.After(runPoll):
			}
		}
	}
}

// Memo returns what compute returned the first time the run asked for key with c's key, when the run shares
// keys without control: then the catalogue a spec reads is the same for every spec, and reading it
// again would only spend the shared key's buckets. With control each spec's workspace may differ
// (its plan, its own uploads), so compute runs every time. A compute that fails or skips the spec
// stores nothing.
func (c *Client) Memo(key string, compute func() any) any {
	f := c.f
	if f.controlRoot != nil {
		return compute()
	}
	return f.memoize(c.key+"\x00"+key, compute)
}
