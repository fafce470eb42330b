package specs

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// Upload helpers: reservations, file PUTs, finalizes, sample files and configs that name uploads.

// assetRowKeys are the fields every asset row carries.
var assetRowKeys = []string{"asset_id", "kind", "source", "file_name", "content_type", "size_bytes", "width", "height",
	"duration_ms", "scan_status", "usable", "generation_id", "created_at"}

// acceptedTypes are the accepted upload types of the interface spec with their kind and ceiling.
var acceptedTypes = []struct {
	ct, kind string
	max      int64
}{
	{"image/jpeg", "image", 20971520}, {"image/png", "image", 20971520}, {"image/webp", "image", 20971520},
	{"image/gif", "image", 20971520}, {"video/mp4", "video", 104857600}, {"video/webm", "video", 104857600},
	{"video/quicktime", "video", 104857600}, {"audio/mpeg", "audio", 26214400}, {"audio/mp3", "audio", 26214400},
	{"audio/wav", "audio", 26214400}, {"audio/x-wav", "audio", 26214400}, {"audio/webm", "audio", 26214400},
	{"audio/ogg", "audio", 26214400},
}

// uploadReservation is a valid POST /uploads body.
func uploadReservation() map[string]any {
	return map[string]any{"filename": "conformance.png", "content_type": "image/png", "size_bytes": 1024}
}

// reserve calls POST /uploads and requires 201.
func reserve(ctx context.Context, c *framework.Client, name, ct string, size int, extra ...any) *framework.Response {
	GinkgoHelper()
	body := map[string]any{"filename": name, "content_type": ct, "size_bytes": size}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	return c.Post(ctx, "/uploads", body).ExpectOK(http.StatusCreated)
}

// putFile PUTs data to an upload link with no key.
func putFile(ctx context.Context, s *framework.Spec, link string, data []byte, ct string) *framework.Response {
	GinkgoHelper()
	return s.Link(ctx, http.MethodPut, link, framework.RawBody(data, ct))
}

// finalizeUpload calls POST /uploads/{id}/finalize.
func finalizeUpload(ctx context.Context, c *framework.Client, id string) *framework.Response {
	GinkgoHelper()
	return c.Post(ctx, "/uploads/"+id+"/finalize", nil)
}

// uploadFixture reserves a fixture as its manifest type, PUTs it and finalizes it; it returns the
// asset id and the finalize answer.
func uploadFixture(ctx context.Context, s *framework.Spec, c *framework.Client, name string) (string, *framework.Response) {
	GinkgoHelper()
	f, data := fixtures.Get(name)
	return uploadBytes(ctx, s, c, f.Name, f.ContentType, data)
}

// uploadBytes reserves data as a file of type ct, PUTs it (reservePut) and finalizes it; it
// returns the asset id and the finalize answer, unchecked.
func uploadBytes(ctx context.Context, s *framework.Spec, c *framework.Client, name, ct string, data []byte) (string, *framework.Response) {
	GinkgoHelper()
	id := reservePut(ctx, s, c, name, ct, data)
	return id, finalizeUpload(ctx, c, id)
}

// reservePut reserves data as a file of type ct and PUTs it, requiring the PUT to be accepted; it
// returns the asset id, for a finalize the caller makes (with a client of its own: a forced
// outcome, say) or leaves out.
func reservePut(ctx context.Context, s *framework.Spec, c *framework.Client, name, ct string, data []byte) string {
	GinkgoHelper()
	r := reserve(ctx, c, name, ct, len(data))
	put := putFile(ctx, s, r.String("upload_url"), data, ct)
	Expect(put.Status).To(BeNumerically("<", 300), "a PUT keeping every rule of the reservation is accepted"+put.Describe())
	return r.String("asset_id")
}

// uploadClean is uploadBytes requiring the finalize to answer 200, clean and usable.
func uploadClean(ctx context.Context, s *framework.Spec, c *framework.Client, name, ct string, data []byte) (string, *framework.Response) {
	GinkgoHelper()
	id, fin := uploadBytes(ctx, s, c, name, ct, data)
	fin.ExpectOK(http.StatusOK)
	Expect(fin.String("scan_status")).To(Equal("clean"), "the upload "+name+" is clean"+fin.Describe())
	Expect(fin.Bool("usable")).To(BeTrue(), "the uploaded file is usable"+fin.Describe())
	return id, fin
}

// wavOf synthesizes a PCM WAVE file (8 kHz, mono, 8 bit: 8 bytes a millisecond) lasting ms
// milliseconds, so a spec can upload audio of exactly the length it needs.
func wavOf(ms int) []byte { return wavSized(44 + 8*ms) }

// wavSized synthesizes a PCM WAVE file as wavOf does, size bytes long in all (header included),
// so a spec can upload audio of exactly the size it needs; it lasts (size-44)/8 milliseconds.
func wavSized(size int) []byte {
	const rate = 8000
	n := size - 44
	b := make([]byte, 44+n)
	le := binary.LittleEndian
	copy(b[0:], "RIFF")
	le.PutUint32(b[4:], uint32(36+n))
	copy(b[8:], "WAVEfmt ")
	le.PutUint32(b[16:], 16)
	le.PutUint16(b[20:], 1) // PCM
	le.PutUint16(b[22:], 1) // mono
	le.PutUint32(b[24:], rate)
	le.PutUint32(b[28:], rate) // byte rate
	le.PutUint16(b[32:], 1)    // block align
	le.PutUint16(b[34:], 8)    // bits a sample
	copy(b[36:], "data")
	le.PutUint32(b[40:], uint32(n))
	for i := 0; i < n; i++ {
		b[44+i] = byte(128 + (i%16)*4) // a quiet sawtooth
	}
	return b
}

// withMarkerBox returns a copy of an ISO BMFF file (MP4, QuickTime) with a top-level free box
// appended holding the scanner marker: a valid file of the same type whose bytes carry the marker.
func withMarkerBox(b []byte) []byte {
	m, err := fixtures.Load()
	Expect(err).NotTo(HaveOccurred())
	Expect(m.ScannerMarker).NotTo(BeEmpty(), "the sample media manifest names the scanner marker")
	payload := []byte(" " + m.ScannerMarker + " ")
	box := make([]byte, 8, 8+len(payload))
	binary.BigEndian.PutUint32(box, uint32(8+len(payload)))
	copy(box[4:], "free")
	return append(append(append([]byte(nil), b...), box...), payload...)
}

// sampleFor returns a file of kind to upload: a synthesized WAV of ms milliseconds for audio, the
// sample MP4 for video, the sample PNG otherwise.
func sampleFor(kind string, ms int) (name, ct string, data []byte) {
	switch kind {
	case "audio":
		return "voice.wav", "audio/wav", wavOf(ms)
	case "video":
		f, b := fixtures.Get("video.mp4")
		return f.Name, f.ContentType, b
	}
	f, b := fixtures.Get("image.png")
	return f.Name, f.ContentType, b
}

// uploadRecording uploads seconds of audio as audio/wav and returns its asset id. It checks the
// service measured the length it was sent (within 50 ms).
func uploadRecording(ctx context.Context, s *framework.Spec, c *framework.Client, seconds int) string {
	GinkgoHelper()
	id, fin := uploadClean(ctx, s, c, fmt.Sprintf("voice-%ds.wav", seconds), "audio/wav", wavOf(seconds*1000))
	Expect(fin.String("kind")).To(Equal("audio"), fin.Describe())
	Expect(fin.Int("duration_ms")).To(BeNumerically("~", seconds*1000, 50), "the service measures the recording's length"+fin.Describe())
	return id
}

// uploadFace uploads the sample PNG and returns its asset id.
func uploadFace(ctx context.Context, s *framework.Spec, c *framework.Client) string {
	GinkgoHelper()
	f, data := fixtures.Get("image.png")
	id, _ := uploadClean(ctx, s, c, f.Name, f.ContentType, data)
	return id
}

// expectFinalizeOutcome checks a finalize answer against the manifest entry of its file, each
// check charged to the rule it checks.
func expectFinalizeOutcome(s *framework.Spec, r *framework.Response, f fixtures.File, id string) {
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
	expectDuration(r, r.Field("duration_ms"), f)
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

// assetSays checks that the asset read a (GET /assets/{id}) says want in asset.key when it carries
// key: the asset record beyond asset_id, kind and the link fields is not shown (Other records), so
// scan_status and usable there are the reference's names, judged only when sent.
func assetSays(a *framework.Response, key string, want any, what string) {
	GinkgoHelper()
	if v, has := recordView(a, "asset_id", "the asset read").Lookup(key); has {
		Expect(v).To(Equal(want), what+a.Describe())
	}
}

// expectDuration checks a duration_ms value against the manifest (null for images and for files
// that cannot be probed; else within the manifest's tolerance).
func expectDuration(r *framework.Response, v any, f fixtures.File) {
	GinkgoHelper()
	if f.DurationMS == nil {
		Expect(v).To(BeNil(), "duration_ms of "+f.Name+" is null"+r.Describe())
		return
	}
	ms, ok := framework.AsInt(v)
	Expect(ok).To(BeTrue(), "duration_ms of "+f.Name+" is an integer"+r.Describe())
	Expect(ms).To(BeNumerically("~", *f.DurationMS, 50), "duration_ms of "+f.Name+r.Describe())
}

// uploadClient returns a client for a spec that makes about n upload calls: with control, a key of
// a fresh workspace whose upload buckets leave room for them; without, a shared client, the main
// key and the second workspace's key in turn (it waits out bucket refusals).
func uploadClient(ctx context.Context, s *framework.Spec, n int) *framework.Client {
	GinkgoHelper()
	if !s.HasControl() {
		return s.SpreadClient()
	}
	return uploadKey(ctx, s, n)
}

// uploadKey makes a fresh workspace (through control) and a key whose upload buckets leave room
// for n calls.
func uploadKey(ctx context.Context, s *framework.Spec, n int) *framework.Client {
	GinkgoHelper()
	c, _ := uploadWorkspace(ctx, s, n)
	return c
}

// uploadWorkspace is uploadKey also returning the workspace (to scope faults to it).
func uploadWorkspace(ctx context.Context, s *framework.Spec, n int) (*framework.Client, *framework.TestWorkspace) {
	GinkgoHelper()
	ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
	c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"},
		Buckets: map[string]int{"uploads": n, "reservations": n, "agent_read": max(n, 120)}})
	return c, ws
}

// putForFinalize reserves the sample PNG in c's workspace and PUTs it, ready to finalize; it
// returns the asset id.
func putForFinalize(ctx context.Context, s *framework.Spec, c *framework.Client) string {
	GinkgoHelper()
	f, data := fixtures.Get("image.png")
	r := reserve(ctx, c, f.Name, f.ContentType, len(data))
	put := putFile(ctx, s, r.String("upload_url"), data, f.ContentType)
	Expect(put.Status).To(BeNumerically("<", 300), "a PUT keeping every rule of the reservation is accepted"+put.Describe())
	return r.String("asset_id")
}

// slowScan queues a slow_scan fault (spec/control.yaml) in ws: the content scan of its next
// finalize whose bytes pass every check lasts seconds of service time.
func slowScan(ctx context.Context, s *framework.Spec, ws *framework.TestWorkspace, seconds int) {
	GinkgoHelper()
	s.QueueFaultIn(ctx, ws.ID, map[string]any{"kind": "slow_scan", "seconds": seconds}, "", 1, "")
}

// overlappingFinalizes starts two finalize calls of id at once while a slow scan runs: one takes
// the file and holds it while the scan runs, so the other must answer at once. It returns the
// first answer (the refused one on a right server) and a channel of the holder's answer, which
// comes once the service clock reaches the end of the scan or of the two-minute hold. A call still
// held when the spec ends is released by moving the clock past the hold.
func overlappingFinalizes(ctx context.Context, s *framework.Spec, c *framework.Client, id string) (*framework.Response, <-chan *framework.Response) {
	GinkgoHelper()
	answers := make(chan *framework.Response, 2)
	// The calls run on their own context, so a spec ending early never cuts them off mid-call.
	fctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			answers <- finalizeUpload(fctx, c, id)
		}()
	}
	exited := make(chan struct{})
	go func() { wg.Wait(); close(exited) }()
	DeferCleanup(func(ctx SpecContext) {
		select {
		case <-exited:
		default:
			s.Advance(ctx, 121)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
			}
		}
		cancel()
	})
	select {
	case first := <-answers:
		return first, answers
	case <-time.After(20 * time.Second):
		Fail(fmt.Sprintf("two finalize calls of %s made at once while its scan runs: neither answered within 20 s (wall time) with the service clock standing still; one of them must answer 429 rate_limited at once", id))
	}
	return nil, nil
}

// finalizeHold is how long a finalize holds the file while its content scan runs: "another
// finalize runs for this file, held up to 2 minutes" (the text's finalize errors: 429
// rate_limited). longScan is the scan a spec asks for to outlast it on a target without the
// control API's clock: the spec waits it out in real time.
const (
	finalizeHold = 2 * time.Minute
	longScan     = 5 * time.Minute
)

// slowFinalizes reserves and PUTs the sample PNG, then makes two finalize calls of it at once while
// its content scan lasts seconds: a slow_scan fault of control in a fresh workspace
// (overlappingFinalizes), else a slow_scan test input on both calls (overlappingForced).
// It returns the client, the asset id, the answer of the call that must not hold the file, and a
// channel of the holder's answer.
func slowFinalizes(ctx context.Context, s *framework.Spec, seconds int) (
	*framework.Client, string, *framework.Response, <-chan *framework.Response,
) {
	GinkgoHelper()
	if s.HasControl() {
		c, ws := uploadWorkspace(ctx, s, 20)
		id := putForFinalize(ctx, s, c)
		slowScan(ctx, s, ws, seconds)
		first, held := overlappingFinalizes(ctx, s, c, id)
		return c, id, first, held
	}
	c := uploadClient(ctx, s, 20)
	id := putForFinalize(ctx, s, c)
	first, held := overlappingForced(ctx, s, c, id, seconds)
	return c, id, first, held
}

// overlappingForced is overlappingFinalizes for a target whose slow scan is a test input
// (spec/testmode.yaml) of one call, not a fault of its workspace: both calls carry slow_scan with a
// scan of seconds and are made at once. Whichever reaches the target first scans slowly and holds
// the file; the other meets no scan (another finalize runs for this file), and a test input "on a
// request that meets no such event ... changes nothing", so it must answer at once, whichever of the
// two it is (no call is assumed to arrive first). It returns the first answer and a channel of the
// other's.
func overlappingForced(ctx context.Context, s *framework.Spec, c *framework.Client, id string, seconds int) (
	*framework.Response, <-chan *framework.Response,
) {
	GinkgoHelper()
	slow := s.Force(ctx, c, framework.Outcome{Kind: "slow_scan", Seconds: seconds})
	answers := make(chan *framework.Response, 2)
	// The calls run on their own context, so a spec ending early never cuts them off mid-call.
	fctx, cancel := context.WithTimeout(context.Background(), finalizeHold+time.Duration(float64(seconds)*float64(time.Second)/s.TimeScale()))
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			answers <- finalizeUpload(fctx, slow, id)
		}()
	}
	go func() { wg.Wait(); cancel() }()
	select {
	case first := <-answers:
		return first, answers
	case <-time.After(20 * time.Second):
		Fail(fmt.Sprintf("two finalize calls of %s made at once, each with a slow_scan test input of %d s: neither answered within 20 s (wall time); the one that does not scan must answer 429 rate_limited at once", id, seconds))
	}
	return nil, nil
}

// heldAnswer returns the answer of the finalize overlappingFinalizes left holding, once the clock
// was moved to release it.
func heldAnswer(held <-chan *framework.Response, what string) *framework.Response {
	GinkgoHelper()
	select {
	case r := <-held:
		return r
	case <-time.After(20 * time.Second):
		Fail("the finalize that held the file did not answer within 20 s (wall time) after " + what)
	}
	return nil
}

// fileServer serves the fixture media files for from-url and returns its base URL:
//
//	/f/{name}       the file with its manifest content type; ?type=X serves it as X
//	/r/{n}/{name}   n redirects, then /f/{name}
//	/big            an image/png one byte over the image ceiling, streamed without a length
func fileServer(s *framework.Spec) string {
	GinkgoHelper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /f/{name}", func(w http.ResponseWriter, r *http.Request) {
		f, b, err := fixtures.Lookup(r.PathValue("name"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		ct := f.ContentType
		if t := r.URL.Query().Get("type"); t != "" {
			ct = t
		}
		w.Header().Set("Content-Type", ct)
		_, _ = w.Write(b)
	})
	mux.HandleFunc("GET /r/{n}/{name}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		_, _ = fmt.Sscan(r.PathValue("n"), &n)
		next := "/f/" + r.PathValue("name")
		if n > 1 {
			next = fmt.Sprintf("/r/%d/%s", n-1, r.PathValue("name"))
		}
		http.Redirect(w, r, next, http.StatusFound)
	})
	mux.HandleFunc("GET /big", func(w http.ResponseWriter, r *http.Request) {
		_, png := fixtures.Get("image.png")
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(png)
		chunk := make([]byte, 1<<20)
		for left := 20971521 - len(png); left > 0; left -= len(chunk) {
			if _, err := w.Write(chunk[:min(left, len(chunk))]); err != nil {
				return
			}
		}
	})
	return s.ServeFiles(mux)
}

// reachableFileServer starts the fixture file server and imports image.png from it once; it skips
// the spec when the target refuses the link (as a real service must refuse a loopback one: the
// run's files_url names an address it can fetch from) and returns the base URL and the import
// answer.
func reachableFileServer(ctx context.Context, s *framework.Spec, c *framework.Client) (string, *framework.Response) {
	GinkgoHelper()
	base := fileServer(s)
	r := c.Post(ctx, "/uploads/from-url", map[string]any{linkKey(c): base + "/f/image.png"})
	if r.Status == http.StatusBadRequest {
		if s.FilesPublic() {
			framework.SkipFor(framework.LacksState("the target refuses a link to an accepted image on the file server at files_url " + base + r.Describe()))
		}
		// The loopback file server is what a real service must refuse: the profile's files_url
		// and files_listen name an address it can fetch from.
		framework.SkipFor(framework.NotDeclared("the target refuses links to the suite's loopback file server (correct for a real service: declare files_url and files_listen, an address it fetches the suite's files from; the mock admits loopback with --allow-loopback-fetch)"))
	}
	return base, r
}

// withAsset returns a copy of config with every upload id in it (plain ids and file objects'
// assetId) replaced by id.
func withAsset(config map[string]any, id string) map[string]any {
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if strings.HasPrefix(x, "ast_") {
				return id
			}
			return x
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				out[k] = walk(e)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = walk(e)
			}
			return out
		}
		return v
	}
	return walk(catalogue.Clone(config)).(map[string]any)
}

// withoutUploads returns a copy of config without the fields that name an upload.
func withoutUploads(config map[string]any) map[string]any {
	out := catalogue.Clone(config)
	for k, v := range out {
		if catalogue.NamesUpload(v) {
			delete(out, k)
		}
	}
	return out
}

// withSampleUploads returns config with every plain id array naming an upload replaced by a
// fresh finalized sample file whose kind the field's name gives; false when a field names no kind.
func withSampleUploads(ctx context.Context, s *framework.Spec, c *framework.Client, props map[string]any, config map[string]any) (map[string]any, bool) {
	GinkgoHelper()
	out := catalogue.Clone(config)
	for name, v := range out {
		arr, isArr := v.([]any)
		if !isArr || !catalogue.NamesUpload(arr) {
			continue
		}
		var sample string
		switch {
		case strings.Contains(name, "video"):
			sample = "video.mp4"
		case strings.Contains(name, "image"):
			sample = "image.png"
		case strings.Contains(name, "audio"):
			sample = "audio.wav"
		default:
			return nil, false
		}
		if _, ok := props[name]; !ok {
			return nil, false
		}
		f, data := fixtures.Get(sample)
		id, _ := uploadClean(ctx, s, c, f.Name, f.ContentType, data)
		out[name] = []any{id}
	}
	return out, true
}

// pricedWithoutUpload returns the first available capability whose example_config names no upload
// and is priced (200), with that estimate, skipping the spec when there is none.
func pricedWithoutUpload(ctx context.Context, c *framework.Client) (*framework.Response, *framework.Response) {
	GinkgoHelper()
	for _, d := range catalogue.AvailableDetails(ctx, c, 25) {
		cfg := answer.ObjectAt(d, "example_config")
		if catalogue.NamesUpload(cfg) {
			continue
		}
		r := c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": cfg})
		if r.Status == http.StatusOK {
			return d, r
		}
	}
	c.Lacks("no available capability's example_config is priced without an upload")
	return nil, nil
}

// readyConfig returns config with every upload it names replaced by a usable image uploaded in c's
// workspace (config unchanged when it names none).
func readyConfig(ctx context.Context, s *framework.Spec, c *framework.Client, config map[string]any) map[string]any {
	GinkgoHelper()
	if !catalogue.NamesUpload(config) {
		return catalogue.Clone(config)
	}
	name, ct, data := sampleFor("image", 0)
	id, _ := uploadClean(ctx, s, c, name, ct, data)
	return withAsset(config, id)
}
