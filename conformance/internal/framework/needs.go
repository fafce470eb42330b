package framework

import (
	"encoding/json"
	"fmt"
	"sync"

	. "github.com/onsi/ginkgo/v2" //nolint:revive

	"github.com/mediaspec/mediaspec/report"
)

// Need is something a spec requires of the target or the run beyond a plain API key. Its string is
// the Ginkgo label the spec carries and the name rules.yaml uses.
//
// Every need that the target offers sits in one tier of an ordered list (Tier, least first: keys <
// profile < test-inputs < test-helpers < control), so a spec declares the least it needs and a run
// that offers a tier judges every spec at or below it. The needs that are run settings (Spends,
// Slow) and Uploads (the public API every target has) are no tier: they are at the keys tier, and
// a run turns them on or off (--budget, --slow) whatever its target offers.
type Need string

// The needs of rules.yaml and the specs.
const (
	Control         Need = "control"          // the test-control API (tier control)
	Receiver        Need = "receiver"         // a webhook receiver the target can reach (tier profile: its address)
	SecondWorkspace Need = "second-workspace" // a key of another workspace (tier profile: a pre-made key)
	ReadKey         Need = "read-key"         // a read-only key of the main workspace (tier profile)
	TestInputs      Need = "test-inputs"      // an outcome forced by a test input or control's /faults (tier test-inputs; Spec.Force)
	Profile         Need = "profile"          // a setting of the target's profile (a key role, an id, a limit); the accessor that reads it skips
	Spends          Need = "spends"           // the spec spends credits (a run setting: --budget)
	Slow            Need = "slow"             // the spec takes long, minutes of target time (a run setting: --slow)
	Uploads         Need = "uploads"          // the spec uploads files through signed links (the public API: keys)
	RealTime        Need = "real-time"        // the spec waits out a window of the target's clock: control's clock, or --real-time (a run setting)
	// Long: the spec waits out hours of the target's clock (a webhook delivery's 14.5-hour retry
	// schedule): control's clock, or --real-time with --long (a run setting, for a nightly job or a
	// target whose clock runs fast).
	Long Need = "long"
)

// AllNeeds lists every Need, in label order: the needs above, then the key roles of the profile
// (RoleNeeds, roles.go).
var AllNeeds = append([]Need{Control, TestInputs, Receiver, SecondWorkspace, ReadKey, Profile, Spends, Slow, Uploads, RealTime, Long}, RoleNeeds...)

// Tier is one step of the ordered list of what a target offers (report.Tier): keys < profile <
// test-inputs < test-helpers < control.
type Tier = report.Tier

// The tiers, least first (report.Tiers).
const (
	TierKeys        = report.TierKeys
	TierProfile     = report.TierProfile
	TierTestInputs  = report.TierTestInputs
	TierTestHelpers = report.TierTestHelpers
	TierControl     = report.TierControl
)

// needReport is the report's name (report.Need*) of each need: the reports group what was not
// judged by it, and its tier is report.TierOfNeed of it.
var needReport = map[Need]string{
	Control: report.NeedControl, TestInputs: report.NeedTestInputs, Receiver: report.NeedReceiver, SecondWorkspace: report.NeedSecondWorkspace,
	ReadKey: report.NeedReadKey, Profile: report.NeedProfile, Spends: report.NeedBudget, Slow: report.NeedSlow,
	Uploads: report.NeedOther, RealTime: report.NeedSlow, Long: report.NeedSlow,
	// The key roles (roles.go): settings of the profile, which the control API can make instead.
	RevokedKey: report.NeedProfile, ExpiredKey: report.NeedProfile, BudgetKey: report.NeedProfile,
	LowBalanceKey: report.NeedProfile, NoAgentAPIKey: report.NeedProfile,
	GenerateOnlyKey: report.NeedProfile, DeletedWorkspaceKey: report.NeedProfile, AllowanceUsedKey: report.NeedProfile,
	BusinessKey: report.NeedProfile, SiblingKey: report.NeedProfile, LongListsKey: report.NeedProfile,
	HighLimitKey: report.NeedProfile, LimitedKey: report.NeedProfile,
}

// Report is the report's name of the need (report.Need*): report.NeedOther for one it does not
// know.
func (n Need) Report() string {
	if r, ok := needReport[n]; ok {
		return r
	}
	return report.NeedOther
}

// Tier is the tier that offers the need; ok is false for the run settings (Spends, Slow) and
// Uploads, which every target offers (they count as keys).
func (n Need) Tier() (t Tier, ok bool) { return report.TierOfNeed(n.Report()) }

// TierOf is the tier a spec with needs requires: the highest tier among them, keys when none has
// one.
func TierOf(needs []Need) Tier {
	t := TierKeys
	for _, n := range needs {
		if nt, ok := n.Tier(); ok && t.Less(nt) {
			t = nt
		}
	}
	return t
}

// SkipReason is a typed skip reason (report.SkipReason): its kind, the need it lacks and that
// need's tier, and the text the console prints.
type SkipReason = report.SkipReason

// Unsupported is the reason of a spec the target (or the run) cannot serve: it lacks n. The text
// is printed after "unsupported: ".
func Unsupported(n Need, text string) SkipReason {
	return report.NewSkip(report.SkipUnsupported, n.Report(), "unsupported: "+text)
}

// Disabled is the reason of a spec the run's configuration turned off (n is Spends or Slow). The
// text is printed after "disabled: ".
func Disabled(n Need, text string) SkipReason {
	return report.NewSkip(report.SkipDisabled, n.Report(), "disabled: "+text)
}

// NotDeclared is the reason of a spec that needs a setting of the target's profile (a path, a
// header, an id, a key role) the target does not declare; text, printed whole, names the setting.
func NotDeclared(text string) SkipReason {
	return report.NewSkip(report.SkipUnsupported, report.NeedProfile, text)
}

// OverBudget is the reason of a spec the run's credit budget cannot pay for; text is printed whole.
func OverBudget(text string) SkipReason {
	return report.NewSkip(report.SkipDisabled, report.NeedBudget, text)
}

// NotRun is the reason of a spec the run did not start (the target stopped answering); text is
// printed whole.
func NotRun(text string) SkipReason { return report.NewSkip(report.SkipNotRun, report.NeedOther, text) }

// LacksState is the reason of a spec the target cannot serve for a state it does not hold (no
// unpriced capability, no outputs field the spec reads, ...): no tier offers it. The text is
// printed after "unsupported: ".
func LacksState(text string) SkipReason {
	return report.NewSkip(report.SkipUnsupported, report.NeedOther, "unsupported: "+text)
}

// Undecidable is the reason of a spec whose state could not be observed this time (a running clock
// passed it). The text is printed after "undecidable: ".
func Undecidable(text string) SkipReason {
	return report.NewSkip(report.SkipUndecidable, report.NeedOther, "undecidable: "+text)
}

// StrictOnlySkip is the reason of a spec that would assert only the reference's own choice, judged
// with --strict; text is printed as it is.
func StrictOnlySkip(text string) SkipReason {
	return report.NewSkip(report.SkipStrictOnly, report.NeedStrictOnly, text)
}

// SkipEntry is the name of the report entry that carries a skipped spec's typed reason (JSON).
const SkipEntry = "skip-reason"

// SkipFor skips the running spec with r: the reports read its kind, need and tier from a report
// entry, and print its text.
func SkipFor(r SkipReason, callerSkip ...int) {
	if b, err := json.Marshal(r); err == nil {
		AddReportEntry(SkipEntry, string(b), ReportEntryVisibilityNever)
	}
	skip := 1
	if len(callerSkip) > 0 {
		skip += callerSkip[0]
	}
	Skip(r.Text, skip)
}

// Capabilities is what a run can offer specs. The zero value offers nothing.
type Capabilities struct {
	Control bool // the control API answers (the control tier)
	// TestInputs: the target offers test-mode inputs (the profile's features: [test-inputs]).
	TestInputs      bool
	Receiver        bool // a webhook receiver the target can reach
	SecondWorkspace bool // a key of a second workspace
	ReadKey         bool // a read-only key of the first workspace
	Budget          int  // credits the run may spend in total
	Slow            bool // the run allows slow specs (--slow)
	Uploads         bool // the target takes uploads
	// ReceiverWhy says why Receiver is false when the run did set one up and the target refused
	// it (or the selected specs need none); "" gives the generic reason.
	ReceiverWhy string
	// RealTime is --real-time: specs may wait out the target's windows in real time.
	RealTime bool
	// Long is --long: specs may wait out hours of the target's clock in real time (with RealTime).
	Long bool
	// Roles are the key roles (RoleNeeds) the profile declares; the control API meets them all.
	Roles map[Need]bool
}

// Offered is the tiers a run with configuration c offers (report.ProfileName names them): keys
// always; profile when c declares a setting of the target's profile (Declared: key roles, ids,
// limits, shapes, the receiver's address, features); test-inputs when c offers the feature (or
// control, which queues the same outcomes); control with a control URL.
func (c Config) Offered() []Tier {
	out := []Tier{TierKeys}
	if len(c.Declared()) > 0 {
		out = append(out, TierProfile)
	}
	if c.Offers(FeatureTestInputs) || c.ControlURL != "" {
		out = append(out, TierTestInputs)
	}
	if c.ControlURL != "" {
		out = append(out, TierControl)
	}
	return out
}

// Unmet returns the text of Lack's reason, or "" when every need is met.
func (c Capabilities) Unmet(needs []Need) string {
	if r, ok := c.Lack(needs); ok {
		return r.Text
	}
	return ""
}

// Lack returns the reason the first unmet need cannot be met (ok false when every need is met).
// Its kind is unsupported when the target or the run lacks a facility and disabled when
// configuration turned it off, so reports can tell the two apart from a failure.
func (c Capabilities) Lack(needs []Need) (r SkipReason, ok bool) {
	for _, n := range needs {
		switch n {
		case Control:
			if !c.Control {
				return Unsupported(n, "needs the control API: no --control-url given"), true
			}
		case TestInputs:
			if !c.TestInputs && !c.Control {
				return Unsupported(n, "needs test-mode inputs (the profile's features: [test-inputs] with its test_keys) or the control API to force an outcome: neither is offered"), true
			}
		case Receiver:
			if !c.Receiver {
				if c.ReceiverWhy != "" {
					return Unsupported(n, "needs a webhook receiver the target can reach: "+c.ReceiverWhy), true
				}
				return Unsupported(n, "needs a webhook receiver the target can reach: none is configured"), true
			}
		case SecondWorkspace:
			if !c.SecondWorkspace {
				return Unsupported(n, "needs a key of a second workspace: no --other-key given and no control API to make one"), true
			}
		case ReadKey:
			if !c.ReadKey {
				return Unsupported(n, "needs a read-only key: no --read-key given and no control API to make one"), true
			}
		case Profile: // the accessor of the setting skips when the profile lacks it
		case Spends:
			if c.Budget <= 0 {
				return Disabled(n, "spends credits and the credit budget is 0 (set --budget)"), true
			}
		case Slow:
			if !c.Slow {
				return Disabled(n, "slow spec; pass --slow to run it"), true
			}
		case RealTime:
			if !c.Control && !c.RealTime {
				return Disabled(n, "waits out a minute or more of the target's clock in real time (a rate bucket's window, a webhook retry's wait), which a target without the control API's clock cannot skip; pass --real-time to run it (a nightly job)"), true
			}
		case Long:
			if !c.Control && !c.Long {
				return Disabled(n, "waits out hours of the target's clock in real time (a webhook delivery's retry schedule, 5, 30, 120 and 720 minutes: about 14.5 hours), which a target without the control API's clock cannot skip; pass --real-time --long to run it (a nightly job, or a target whose clock runs faster: time_scale)"), true
			}
		case Uploads:
			if !c.Uploads {
				return Unsupported(n, "needs uploads through signed links"), true
			}
		default:
			if r, role, lacks := c.roleLack(n); role {
				if lacks {
					return r, true
				}
				continue
			}
			return Unsupported(n, fmt.Sprintf("unknown need %q", n)), true
		}
	}
	return SkipReason{}, false
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
