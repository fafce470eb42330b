package uploads

import (
	"context"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// Reservation is a valid POST /uploads body.
func Reservation() map[string]any {
	return map[string]any{"filename": "conformance.png", "content_type": "image/png", "size_bytes": 1024}
}

// Reserve calls POST /uploads and requires 201.
func Reserve(ctx context.Context, c *framework.Client, name, ct string, size int, extra ...any) *framework.Response {
	GinkgoHelper()
	body := map[string]any{"filename": name, "content_type": ct, "size_bytes": size}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	return c.Post(ctx, "/uploads", body).ExpectOK(http.StatusCreated)
}

// Put PUTs data to an upload link with no key.
func Put(ctx context.Context, s *framework.Spec, link string, data []byte, ct string) *framework.Response {
	GinkgoHelper()
	return s.Link(ctx, http.MethodPut, link, framework.RawBody(data, ct))
}

// Finalize calls POST /uploads/{id}/finalize.
func Finalize(ctx context.Context, c *framework.Client, id string) *framework.Response {
	GinkgoHelper()
	return c.Post(ctx, "/uploads/"+id+"/finalize", nil)
}

// Fixture reserves a fixture as its manifest type, PUTs it and finalizes it; it returns the
// asset id and the finalize answer.
func Fixture(ctx context.Context, s *framework.Spec, c *framework.Client, name string) (string, *framework.Response) {
	GinkgoHelper()
	f, data := fixtures.Get(name)
	return Bytes(ctx, s, c, f.Name, f.ContentType, data)
}

// Bytes reserves data as a file of type ct, PUTs it (ReservePut) and finalizes it; it
// returns the asset id and the finalize answer, unchecked.
func Bytes(ctx context.Context, s *framework.Spec, c *framework.Client, name, ct string, data []byte) (string, *framework.Response) {
	GinkgoHelper()
	id := ReservePut(ctx, s, c, name, ct, data)
	return id, Finalize(ctx, c, id)
}

// ReservePut reserves data as a file of type ct and PUTs it, requiring the PUT to be accepted; it
// returns the asset id, for a finalize the caller makes (with a client of its own: a forced
// outcome, say) or leaves out.
func ReservePut(ctx context.Context, s *framework.Spec, c *framework.Client, name, ct string, data []byte) string {
	GinkgoHelper()
	r := Reserve(ctx, c, name, ct, len(data))
	put := Put(ctx, s, r.String("upload_url"), data, ct)
	Expect(put.Status).To(BeNumerically("<", 300), "a PUT keeping every rule of the reservation is accepted"+put.Describe())
	return r.String("asset_id")
}

// Clean is Bytes requiring the finalize to answer 200, clean and usable.
func Clean(ctx context.Context, s *framework.Spec, c *framework.Client, name, ct string, data []byte) (string, *framework.Response) {
	GinkgoHelper()
	id, fin := Bytes(ctx, s, c, name, ct, data)
	fin.ExpectOK(http.StatusOK)
	Expect(fin.String("scan_status")).To(Equal("clean"), "the upload "+name+" is clean"+fin.Describe())
	Expect(fin.Bool("usable")).To(BeTrue(), "the uploaded file is usable"+fin.Describe())
	return id, fin
}

// ExpectFinalizeOutcome checks a finalize answer against the manifest entry of its file, each
// check charged to the rule it checks.
func ExpectFinalizeOutcome(s *framework.Spec, r *framework.Response, f fixtures.File, id string) {
	GinkgoHelper()
	if f.Outcome == fixtures.OutcomeRefused {
		s.Step(refusalRule(f), "ERR-024")
		r.ExpectError(http.StatusBadRequest, "invalid_config")
		return
	}
	// A flagged file's finalize answers 200 too (UPLOAD-024), not a refusal.
	if f.Outcome == fixtures.OutcomeFlagged {
		s.Step("UPLOAD-017", "UPLOAD-022", "UPLOAD-024")
	} else {
		s.Step("UPLOAD-017", "UPLOAD-022")
	}
	r.ExpectOK(http.StatusOK)
	Expect(r.String("asset_id")).To(Equal(id), r.Describe())
	Expect(r.String("next_action")).NotTo(BeEmpty(), r.Describe())
	switch {
	case f.Outcome == fixtures.OutcomeFlagged:
		s.Step("UPLOAD-024", "UPLOAD-026")
	case f.Kind != "image":
		s.Step("UPLOAD-021", "UPLOAD-023", "UPLOAD-026")
	default:
		s.Step("UPLOAD-023", "UPLOAD-026")
	}
	Expect(r.String("scan_status")).To(Equal(f.Outcome), "scan_status of "+f.Name+r.Describe())
	s.Step("UPLOAD-025")
	Expect(r.Bool("usable")).To(Equal(f.Outcome == fixtures.OutcomeClean), "usable is true only when clean"+r.Describe())
	s.Step("UPLOAD-028")
	Expect(r.String("kind")).To(Equal(f.Kind), "kind is measured from the bytes"+r.Describe())
	s.Step("UPLOAD-029")
	ExpectDuration(r, r.Field("duration_ms"), f)
}

// refusalRule is the rule a sample file refused at finalize breaks, by its manifest reason.
func refusalRule(f fixtures.File) string {
	switch {
	case f.Reason == "pixel_bounds" && strings.Contains(f.Name, "wide"):
		return "UPLOAD-032"
	case f.Reason == "pixel_bounds":
		return "UPLOAD-033"
	case f.Reason == "signature_mismatch" && f.Kind == "image" && strings.HasPrefix(f.ContentType, "image/"):
		return "UPLOAD-031" // an image whose decoded type is another image type
	case f.Reason == "truncated" && f.Kind == "image":
		return "UPLOAD-031" // an image that does not decode
	}
	return "UPLOAD-030"
}

// ExpectDuration checks a duration_ms value against the manifest (null for images and for files
// that cannot be probed; else within the manifest's tolerance).
func ExpectDuration(r *framework.Response, v any, f fixtures.File) {
	GinkgoHelper()
	if f.DurationMS == nil {
		Expect(v).To(BeNil(), "duration_ms of "+f.Name+" is null"+r.Describe())
		return
	}
	ms, ok := framework.AsInt(v)
	Expect(ok).To(BeTrue(), "duration_ms of "+f.Name+" is an integer"+r.Describe())
	Expect(ms).To(BeNumerically("~", *f.DurationMS, 50), "duration_ms of "+f.Name+r.Describe())
}

// Client returns a client for a spec that makes about n upload calls: with control, a key of
// a fresh workspace whose upload buckets leave room for them; without, a shared client, the main
// key and the second workspace's key in turn (it waits out bucket refusals).
func Client(ctx context.Context, s *framework.Spec, n int) *framework.Client {
	GinkgoHelper()
	if !s.HasControl() {
		return s.SpreadClient()
	}
	return Key(ctx, s, n)
}

// Key makes a fresh workspace (through control) and a key whose upload buckets leave room
// for n calls.
func Key(ctx context.Context, s *framework.Spec, n int) *framework.Client {
	GinkgoHelper()
	c, _ := Workspace(ctx, s, n)
	return c
}

// Workspace is Key also returning the workspace (to scope faults to it).
func Workspace(ctx context.Context, s *framework.Spec, n int) (*framework.Client, *framework.TestWorkspace) {
	GinkgoHelper()
	ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
	c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"},
		Buckets: map[string]int{"uploads": n, "reservations": n, "agent_read": max(n, 120)}})
	return c, ws
}

// PutForFinalize is ReservePut of the sample PNG in c's workspace: it returns the asset id of a
// stored file, ready to finalize.
func PutForFinalize(ctx context.Context, s *framework.Spec, c *framework.Client) string {
	GinkgoHelper()
	f, data := fixtures.Get("image.png")
	return ReservePut(ctx, s, c, f.Name, f.ContentType, data)
}
