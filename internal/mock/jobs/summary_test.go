package jobs

import (
	"fmt"
	"testing"
)

// TestChargeSummaryWording: the summary every read carries, built without fmt, says what the
// fmt forms said, in each of its three cases.
func TestChargeSummaryWording(t *testing.T) {
	for _, held := range []int64{0, 1, 4, 600, -3} {
		for _, charged := range []*int64{nil, summaryInt(int64(0)), summaryInt(int64(2)), summaryInt(int64(700))} {
			c := int64(0)
			if charged != nil {
				c = *charged
			}
			for _, v := range []struct {
				view View
				want string
			}{
				{View{CreditsHeld: held, CreditsCharged: charged}, fmt.Sprintf("%d credits are held; the final charge is settled when the job ends and is never more than the hold.", held)},
				{View{CreditsHeld: held, CreditsCharged: charged, Terminal: true, Status: StatusFailed}, fmt.Sprintf("Nothing was charged: the job failed and its %d held credits were released.", held)},
				{View{CreditsHeld: held, CreditsCharged: charged, Terminal: true, Status: StatusCompleted}, fmt.Sprintf("Charged %d credits; %d held credits were released.", c, max(held-c, 0))},
			} {
				if got := v.view.ChargeSummary(); got != v.want {
					t.Errorf("ChargeSummary() = %q, want %q", got, v.want)
				}
			}
		}
	}
}

func summaryInt(v int64) *int64 { return &v }
