package specs

import (
	"context"
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
)

// The upload bucket's filler that needs an upload of its own (the calls that count against a
// bucket, and its refusal, are conformance/internal/buckets').

// fillFinalizes finalizes upload id (its bytes in place) n times, each answering 200 (a repeat
// answers the stored result): n upload calls that change nothing after the first.
func fillFinalizes(ctx context.Context, c *framework.Client, id string, n int) {
	GinkgoHelper()
	for i := 0; i < n; i++ {
		r := uploads.Finalize(ctx, c, id)
		Expect(r.Status).To(Equal(http.StatusOK), fmt.Sprintf("finalize %d of %d, inside the bucket", i+1, n)+r.Describe())
	}
}
