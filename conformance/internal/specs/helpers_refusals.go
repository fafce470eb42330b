package specs

import (
	"context"
	"fmt"
	"net/http"
	"unicode/utf8"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// Content-check refusals, the least way the run offers one: the natural input the profile
// declares (refused_prompt, flagged_upload: what the target's own checks refuse, with no test
// mechanism), else the outcome forced (Spec.Force: a test input or control's fault), else a skip
// naming the setting (the profile tier).

// refusedSubmit is a config the target's moderation refuses and the client whose submit of it
// meets the refusal.
type refusedSubmit struct {
	cfg     map[string]any
	c       *framework.Client
	natural bool // cfg carries the profile's refused_prompt (nothing forced)
}

// refusedOf is base, a valid config of capability detail d, made one the target's moderation
// refuses: with the profile's refused_prompt as its free text (the one thing changed, submitted
// with c), else base as it is with a moderation_block forced on d's capability for the calls of
// the returned client (with control, queued now: call it right before the submit that should
// meet it). It skips naming refused_prompt when the run offers neither, and when the prompt does
// not fit the field's maxLength (the submit would be refused as an invalid config first).
func refusedOf(ctx context.Context, s *framework.Spec, c *framework.Client, d *framework.Response, base map[string]any) refusedSubmit {
	GinkgoHelper()
	id := d.String("capability_id")
	prompt, ok := s.RefusedPrompt()
	if !ok {
		s.LacksNaturalInput("refused_prompt", "a prompt the target's moderation refuses", "a moderation_block")
		return refusedSubmit{cfg: catalogue.Clone(base), c: s.Force(ctx, c, framework.Outcome{Kind: "moderation_block", CapabilityID: id})}
	}
	key := catalogue.TextKey(d)
	if key == "" {
		s.Lacks("capability %s's config_schema names no free-text field to send refused_prompt in", id)
	}
	if limit := catalogue.MaxLength(answer.SchemaProps(d), key, 0); limit > 0 && utf8.RuneCountInString(prompt) > limit {
		framework.SkipFor(framework.NotDeclared(fmt.Sprintf("unsupported: refused_prompt is %d characters, over the %d that %s's %s takes: "+
			"declare a shorter one (a submit would be refused as an invalid config before moderation)", utf8.RuneCountInString(prompt), limit, id, key)))
	}
	return refusedSubmit{cfg: catalogue.WithChanges(base, map[string]any{key: prompt}), c: c, natural: true}
}

// expectBlocked submits rf's config as capability id with max_credits need and judges its 422
// moderation_blocked as refuse does. With the profile's refused_prompt, a submit the target
// accepts shows that its moderation lets that prompt pass: the profile's mistake, which no server
// is failed for, so the started job's hold is counted against the budget and the spec skips
// naming refused_prompt. A forced block has no such way out.
func (rf refusedSubmit) expectBlocked(ctx context.Context, s *framework.Spec, id string, need int64) *framework.Response {
	GinkgoHelper()
	return refuseBy(ctx, rf.c, submitBody(id, rf.cfg, need, nil), func(r *framework.Response) {
		GinkgoHelper()
		if rf.natural && r.Status/100 == 2 {
			s.Spend(int(need))
			framework.SkipFor(framework.NotDeclared(fmt.Sprintf("unsupported: the target accepted a submit of %s with the "+
				"profile's refused_prompt (HTTP %d): its moderation does not refuse that prompt; declare one it refuses", id, r.Status)))
		}
		r.ExpectError(http.StatusUnprocessableEntity, "moderation_blocked")
	})
}

// flaggedSamples are the sample images whose finalize the suite flags by force; with the
// profile's flagged_upload, the declared image alone (once).
func flaggedSamples(s *framework.Spec) []string {
	if s.HasFlaggedUpload() {
		return []string{"flagged_upload"}
	}
	return []string{"image.png", "image.jpg"}
}

// flaggedUpload reserves, PUTs and finalizes, with c, an image the target's content check flags:
// the profile's flagged_upload (the check flags it on its own), else the sample image sample with
// the scan_flag outcome forced on its finalize. It skips naming flagged_upload when the run offers
// neither. It returns the asset id, the finalize answer and the manifest entry to judge it by
// (an image, outcome flagged).
func flaggedUpload(ctx context.Context, s *framework.Spec, c *framework.Client, sample string) (string, *framework.Response, fixtures.File) {
	GinkgoHelper()
	if name, ct, data, ok := s.FlaggedUpload(); ok {
		id := uploads.ReservePut(ctx, s, c, name, ct, data)
		fx := fixtures.File{Name: name, ContentType: ct, Kind: "image", Outcome: fixtures.OutcomeFlagged}
		fin := uploads.Finalize(ctx, c, id)
		if fin.Status == http.StatusOK && fin.Field("scan_status") == "clean" {
			// The target's check passed the declared file: the profile's mistake, not the server's.
			framework.SkipFor(framework.NotDeclared(fmt.Sprintf("unsupported: the target's content check passed the profile's "+
				"flagged_upload %s (scan_status clean): declare an image it flags", name)))
		}
		return id, fin, fx
	}
	s.LacksNaturalInput("flagged_upload", "an image the target's content check flags", "a scan_flag")
	fx, data := fixtures.Get(sample)
	Expect(fx.Kind).To(Equal("image"), "the content check of the forced scan_flag is an image's")
	id := uploads.ReservePut(ctx, s, c, fx.Name, fx.ContentType, data)
	fin := uploads.Finalize(ctx, s.Force(ctx, c, framework.Outcome{Kind: "scan_flag"}), id)
	fx.Outcome = fixtures.OutcomeFlagged
	return id, fin, fx
}

// expectFlagged checks a finalize answer of a flagged upload in brief: 200, flagged.
func expectFlagged(fin *framework.Response) {
	GinkgoHelper()
	fin.ExpectOK(http.StatusOK)
	Expect(fin.String("scan_status")).To(Equal("flagged"), "the content check flags the image"+fin.Describe())
}
