package specs

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/openshape"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
)

// What a generation list row carries (GET /generations: "Row shape: not shown beyond the
// generation id, what it cost, when it was made and the asset ids of outputs"). The names are not
// shown, so the three are found by what they hold, not by our names; but the row carries them
// (issue 37: they were read only "when the row carries" our credits_charged).

// costWords are the words of a key that can name what a row cost.
var costWords = []string{"charge", "cost", "credit", "spent", "price", "paid"}

// costCandidates are the whole numbers of row (at any depth) under a key naming a cost, by path.
func costCandidates(row map[string]any) map[string]int64 {
	out := map[string]int64{}
	openshape.Paths(row, func(path, key string, v any) bool {
		if n, whole := framework.AsInt(v); whole && namesCost(key) {
			out[path] = n
		}
		return true
	})
	return out
}

func namesCost(k string) bool {
	k = strings.ToLower(k)
	for _, w := range costWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// stampsOf are the times of row (at any depth), by path.
func stampsOf(row map[string]any) map[string]time.Time {
	out := map[string]time.Time{}
	openshape.Paths(row, func(path, _ string, v any) bool {
		if x, ok := v.(string); ok {
			if t, err := answer.ParseStamp(x); err == nil {
				out[path] = t
			}
		}
		return true
	})
	return out
}

// expectRowCarries checks that row, the list row of the generation g reads, carries what it cost
// (a whole number equal to the read's credits_charged, under our credits_charged when the row has
// that key, else under any key naming a cost), when it was made (a time within a second of the
// read's created_at) and the asset ids of its outputs (the read's, when it names them; else one
// ast_ id per output). s charges the cost and the asset ids to GEN-054, the time to GEN-038.
func expectRowCarries(s *framework.Spec, p paging.Page, row map[string]any, g *framework.Response) {
	GinkgoHelper()
	gid, _ := row["generation_id"].(string)
	what := "the list row of " + gid
	s.Step("GEN-054")
	charged, whole := framework.AsInt(g.Field("generation.credits.credits_charged"))
	if whole {
		if v, has := row["credits_charged"]; has {
			n, ok := framework.AsInt(v)
			Expect(ok && n == charged).To(BeTrue(), fmt.Sprintf("%s: credits_charged is %v, the read's is %d", what, v, charged)+p.R.Describe())
		} else {
			got := costCandidates(row)
			found := false
			for _, n := range got {
				found = found || n == charged
			}
			Expect(found).To(BeTrue(), fmt.Sprintf("%s carries what it cost (%d credits, the read's credits_charged): no whole number under a key naming a cost or charge equals it (%v)", what, charged, got)+p.R.Describe())
		}
	}
	s.Step("GEN-038")
	created := answer.Time(g, "generation.created_at")
	times := stampsOf(row)
	near := false
	for _, t := range times {
		d := t.Sub(created)
		near = near || (d > -time.Second && d < time.Second)
	}
	Expect(near).To(BeTrue(), fmt.Sprintf("%s carries when it was made (%s, the read's created_at): no time of the row is that instant (%v)", what, created.Format(time.RFC3339Nano), times)+p.R.Describe())
	s.Step("GEN-054")
	outs := g.Array("generation.outputs")
	var assets []string
	for i := range outs {
		if v, _ := g.Lookup("generation.outputs." + strconv.Itoa(i) + ".asset_id"); v != nil {
			assets = append(assets, v.(string))
		}
	}
	got := openshape.IDs(row, "ast_")
	switch {
	case len(assets) > 0:
		Expect(got).To(ConsistOf(assets), what+" carries the asset ids of the outputs"+p.R.Describe())
	case g.String("generation.status") == "completed":
		Expect(got).To(HaveLen(len(outs)), fmt.Sprintf("%s carries the asset ids of its %d outputs", what, len(outs))+p.R.Describe())
	}
}
