package specs

import (
	"context"
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/openshape"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
)

// The specs' door to conformance/internal/openshape: every read of an answer whose layout the text
// does not show goes through these helpers, and no spec names the reference's own choice of such a
// layout (fence_test.go).

// recordView reads an answer whose record the text does not lay out (an asset) as the object that
// carries key (asset_id), wherever it sits.
func recordView(r *framework.Response, key, what string) *framework.Response {
	GinkgoHelper()
	o, err := openshape.Holding(r.Doc(), key)
	Expect(err).NotTo(HaveOccurred(), fmt.Sprintf("%s carries %s", what, key)+r.Describe())
	return r.View(o)
}

// linkIn returns the first http(s) link of an answer that is not laid out in the text (a
// download answer), under a key named url first.
func linkIn(r *framework.Response, what string) string {
	GinkgoHelper()
	links := openshape.Links(r.Doc())
	Expect(links).NotTo(BeEmpty(), what+" carries a link"+r.Describe())
	return links[0]
}

// balance is the credit balance as the target declares its layout (shapes balance.*).
type balance struct {
	r               *framework.Response
	available, held int64
	hasHeld, hasSum bool
	total           int64
}

// readBalance reads GET /credits/balance and the declared values of its not-shown answer: the
// available credits always (the spec skips naming balance.available when the target declares no
// pointer), held and the total when declared.
func readBalance(ctx context.Context, c *framework.Client) balance {
	GinkgoHelper()
	availPtr := c.Shape("balance.available")
	r := c.Get(ctx, "/credits/balance").ExpectOK(http.StatusOK)
	b := balance{r: r}
	var err error
	b.available, err = openshape.IntAt(r.Doc(), availPtr)
	Expect(err).NotTo(HaveOccurred(), "the balance answer at the declared balance.available"+r.Describe())
	if ptr, ok := c.ShapeIf("balance.held"); ok {
		b.held, err = openshape.IntAt(r.Doc(), ptr)
		Expect(err).NotTo(HaveOccurred(), "the balance answer at the declared balance.held"+r.Describe())
		b.hasHeld = true
	}
	if ptr, ok := c.ShapeIf("balance.total"); ok {
		b.total, err = openshape.IntAt(r.Doc(), ptr)
		Expect(err).NotTo(HaveOccurred(), "the balance answer at the declared balance.total"+r.Describe())
		b.hasSum = true
	}
	return b
}

// heldOf is the held credits of b; without a declared balance.held the spec skips naming it.
func (b balance) heldOf(c *framework.Client) int64 {
	GinkgoHelper()
	if !b.hasHeld {
		c.Shape("balance.held")
	}
	return b.held
}

// openRows returns the rows of a list answer whose layout the text does not show (the workflow
// run list): the one array beside next_cursor, or of the answer when it has no next_cursor.
func openRows(r *framework.Response) []any {
	GinkgoHelper()
	return paging.RowsOf(r, paging.Open).Rows
}

// inputsKey is the body field of a workflow invoke that carries the run's inputs (shape
// invoke.inputs: "Workflow endpoints (invoke, templates, runs): request and answer shapes: not
// shown"); the spec skips naming the shape when the target declares none.
func inputsKey(c *framework.Client) string {
	GinkgoHelper()
	return c.Shape("invoke.inputs")
}

// runRecord is the workflow run record of a run read: the object carrying workflow_run_id,
// wherever the answer puts it (workflow run records: not shown).
func runRecord(r *framework.Response) map[string]any {
	GinkgoHelper()
	o, err := openshape.Holding(r.Doc(), "workflow_run_id")
	Expect(err).NotTo(HaveOccurred(), "the run read carries the run (its workflow_run_id)"+r.Describe())
	return o
}

// runView is r read as its run record (runRecord).
func runView(r *framework.Response) *framework.Response {
	GinkgoHelper()
	return r.View(runRecord(r))
}

// invokeStandIn is an invoke body for a call judged before its body is read (a key check): empty
// inputs under the declared inputs field (none when the target declares none) and maxCredits.
func invokeStandIn(c *framework.Client, maxCredits int) map[string]any {
	return standIn(c, "invoke.inputs", map[string]any{}, map[string]any{"max_credits": maxCredits})
}

// fromURLStandIn is an import body for a call judged before its body is read (a key check): a
// public link under the declared link field, or an empty body when the target declares none.
func fromURLStandIn(c *framework.Client) map[string]any {
	return standIn(c, "from_url.link", "https://cdn.example.com/media/product.png", map[string]any{})
}

// standIn sets body[the declared field of shape] to v when the target declares one.
func standIn(c *framework.Client, shape string, v any, body map[string]any) map[string]any {
	if k, ok := c.ShapeIf(shape); ok {
		body[k] = v
	}
	return body
}

// importedID is the asset id an import answers (POST /uploads/from-url: answer shape not shown):
// the one ast_ id of the answer, wherever it sits.
func importedID(r *framework.Response) string {
	GinkgoHelper()
	found := openshape.IDs(r.Doc(), "ast_")
	Expect(found).To(HaveLen(1), "an import answers the imported file's one asset id (ast_)"+r.Describe())
	return found[0]
}
