package specs

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
	"github.com/mediaspec/mediaspec/receiver"
)

// Specs added by the mutation pass over uploads, assets and webhook deliveries: each closes a gap
// a plausible wrong server slipped through (a text result carried in the event body, asset links
// that expire before the 600 s they advertise).

func mutationDeliverySpecs(f *framework.Framework) {
	Describe("mutation pass: deliveries and assets", func() {
		f.Rule("EVT-019", "EVT-022").Needs(framework.Receiver, framework.Spends).It(
			"a text result's generation.completed carries no outputs and not the text itself", func(ctx context.Context, s *framework.Spec) {
				sp := newSpender(ctx, s)
				h := registerHook(ctx, s, sp.c, "generation.completed", "generation.failed")
				d := textCapability(ctx, sp.c)
				if namesUpload(objectAt(d, "example_config")) {
					Skip("unsupported: the text capability's example_config needs an upload")
				}
				j := submit(ctx, s, sp.c, d.String("capability_id"), cheapConfig(d), nil)
				w := s.Finish(ctx, sp.c, j.id)
				Expect(w.String("generation.status")).To(Equal("completed"), w.Describe())
				text := w.String("generation.output_text")
				Expect(text).NotTo(BeEmpty(), "the generation read carries the text result"+w.Describe())
				ev, err := s.Hooks().Await(ctx, receiver.Match{Type: "generation.completed", Path: h.path, ResourceID: j.id}, arrival(s))
				Expect(err).NotTo(HaveOccurred(), "no generation.completed for "+j.id)
				data := checkEnvelope(s, ev)
				Expect(data["output_kind"]).To(Equal("text"), string(ev.Raw))
				Expect(data["outputs"]).To(BeEmpty(), "outputs is empty for a text result: "+string(ev.Raw))
				noKeyAnywhere(data, "data", "output_text", "result", "text", "url")
				// The text itself, under any name: look for it (JSON-escaped) in the raw body. A very
				// short text could occur by chance, so only a text of some length is looked for.
				quoted, _ := json.Marshal(text)
				if needle := strings.Trim(string(quoted), `"`); len(needle) >= 16 {
					Expect(strings.Contains(string(ev.Raw), needle)).To(BeFalse(), "the event body carries the text result: "+string(ev.Raw))
				}
			})

		f.Rule("ASSET-008", "ASSET-009").Needs(framework.Control, framework.Slow, framework.Uploads).It(
			"an asset read's and a download's links last the 600 s they state: they serve the file 590 s later and not after 600", func(ctx context.Context, s *framework.Spec) {
				c := uploadClient(ctx, s, 10)
				id, r := uploadFixture(ctx, s, c, "image.png")
				r.ExpectOK(http.StatusOK)
				_, want := fixtures.Get("image.png")
				now := serviceNow(ctx, s)
				a := c.Get(ctx, "/assets/"+id).ExpectOK(http.StatusOK)
				dl := c.Get(ctx, "/assets/"+id+"/download").ExpectOK(http.StatusOK)
				links := map[string]string{"asset.url": a.String("asset.url"), "download url": dl.String("url")}
				for what, at := range map[string]*framework.Response{"asset.url_expires_at": a, "expires_at": dl} {
					exp, err := time.Parse(time.RFC3339, at.String(what))
					Expect(err).NotTo(HaveOccurred(), at.Describe())
					Expect(exp.Sub(now)).To(BeNumerically("~", 600*time.Second, 2*time.Second), what+" is 600 s after the read"+at.Describe())
				}
				s.Advance(ctx, 590)
				for what, link := range links {
					got := s.FetchLink(ctx, link)
					Expect(got.Status).To(Equal(http.StatusOK), "the "+what+" 590 s after the read"+got.Describe())
					Expect(got.Body).To(Equal(want), "the "+what+" serves the uploaded bytes")
				}
				s.Advance(ctx, 11)
				for what, link := range links {
					got := s.FetchLink(ctx, link)
					Expect(got.Status).To(BeNumerically(">=", 400), "the "+what+" more than 600 s after the read is refused"+got.Describe())
				}
			})
	})
}
