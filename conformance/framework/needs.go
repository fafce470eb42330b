package framework

import (
	"fmt"
	"sync"
)

// Need is something a spec requires of the target or the run beyond a plain API key. Its string is
// the Ginkgo label the spec carries and the name rules.yaml uses.
type Need string

// The needs of rules.yaml.
const (
	Control         Need = "control"          // the test-control API
	Receiver        Need = "receiver"         // a webhook receiver the target can reach
	SecondWorkspace Need = "second-workspace" // a key of another workspace
	ReadKey         Need = "read-key"         // a read-only key of the main workspace
	Spends          Need = "spends"           // the spec spends credits
	Slow            Need = "slow"             // the spec takes long (minutes of target time)
	Uploads         Need = "uploads"          // the spec uploads files through signed links
)

// AllNeeds lists every Need, in label order.
var AllNeeds = []Need{Control, Receiver, SecondWorkspace, ReadKey, Spends, Slow, Uploads}

// Capabilities is what a run can offer specs. The zero value offers nothing.
type Capabilities struct {
	Control         bool
	Receiver        bool
	SecondWorkspace bool
	ReadKey         bool
	Budget          int // credits the run may spend in total
	Slow            bool
	Uploads         bool
	// ReceiverWhy says why Receiver is false when the run did set one up and the target refused
	// it (or the selected specs need none); "" gives the generic reason.
	ReceiverWhy string
}

// Unmet returns the reason the first unmet need cannot be met, or "" when every need is met. The
// reason starts with "unsupported:" when the target or the run lacks a facility and with
// "disabled:" when configuration turned it off, so reports can tell the two apart from a failure.
func (c Capabilities) Unmet(needs []Need) string {
	for _, n := range needs {
		switch n {
		case Control:
			if !c.Control {
				return "unsupported: needs the control API: no --control-url given"
			}
		case Receiver:
			if !c.Receiver {
				if c.ReceiverWhy != "" {
					return "unsupported: needs a webhook receiver the target can reach: " + c.ReceiverWhy
				}
				return "unsupported: needs a webhook receiver the target can reach: none is configured"
			}
		case SecondWorkspace:
			if !c.SecondWorkspace {
				return "unsupported: needs a key of a second workspace: no --other-key given and no control API to make one"
			}
		case ReadKey:
			if !c.ReadKey {
				return "unsupported: needs a read-only key: no --read-key given and no control API to make one"
			}
		case Spends:
			if c.Budget <= 0 {
				return "disabled: spends credits and the credit budget is 0 (set --budget)"
			}
		case Slow:
			if !c.Slow {
				return "disabled: slow spec; pass --slow to run it"
			}
		case Uploads:
			if !c.Uploads {
				return "unsupported: needs uploads through signed links"
			}
		default:
			return fmt.Sprintf("unsupported: unknown need %q", n)
		}
	}
	return ""
}

// Budget tracks the credits a run has spent against its limit. It is safe for concurrent use.
type Budget struct {
	mu    sync.Mutex // guards spent
	limit int
	spent int
	// take and give, when set (Share), reserve and return credits of a budget another process
	// keeps: the processes of a split run share the run's one budget.
	take func(n int) error
	give func(n int)
}

// Share makes b reserve and return credits through take and give (the budget of the parent of a
// split run) instead of its own limit; Spent still counts what b took.
func (b *Budget) Share(take func(n int) error, give func(n int)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.take, b.give = take, give
}

// NewBudget returns a Budget that allows limit credits in total.
func NewBudget(limit int) *Budget { return &Budget{limit: limit} }

// Take reserves n credits. It refuses, reserving nothing, when n is negative or the total would
// exceed the limit; the error says how much is left.
func (b *Budget) Take(n int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n < 0 {
		return fmt.Errorf("cannot spend %d credits", n)
	}
	if b.take != nil {
		if err := b.take(n); err != nil {
			return err
		}
		b.spent += n
		return nil
	}
	if b.spent+n > b.limit {
		return fmt.Errorf("disabled: spending %d credits would exceed the credit budget (%d of %d left; raise --budget)", n, b.limit-b.spent, b.limit)
	}
	b.spent += n
	return nil
}

// Give returns n credits taken earlier (a hold released, a charge lower than reserved).
func (b *Budget) Give(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.give != nil {
		b.give(min(n, b.spent))
	}
	b.spent -= n
	if b.spent < 0 {
		b.spent = 0
	}
}

// Spent is the credits reserved so far.
func (b *Budget) Spent() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent
}
