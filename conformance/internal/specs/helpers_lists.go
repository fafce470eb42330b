package specs

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
)

// Helpers of the list specs: the capabilities a count spec reads, a search term no row holds,
// generation rows made for a walk (the pages themselves are read by conformance/internal/paging).

// countCaps returns the details of the available capabilities whose config_schema has a count and
// whose example_config names no upload, in catalogue order.
func countCaps(ctx context.Context, c *framework.Client) []*framework.Response {
	GinkgoHelper()
	var out []*framework.Response
	for _, d := range catalogue.AvailableDetails(ctx, c, 40) {
		props, _ := answer.ObjectAt(d, "config_schema")["properties"].(map[string]any)
		if _, has := props["count"]; !has || catalogue.NamesUpload(answer.ObjectAt(d, "example_config")) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// notIn returns the first of candidates that no text contains (case-insensitively), or "";
// candidates without % or _ come first, so the term means the same to any search.
func notIn(candidates []string, texts []string) string {
	plain := func(s string) bool { return !strings.ContainsAny(s, "%_") }
	ordered := slices.Clone(candidates)
	slices.SortStableFunc(ordered, func(a, b string) int {
		switch {
		case plain(a) && !plain(b):
			return -1
		case !plain(a) && plain(b):
			return 1
		}
		return 0
	})
	for _, cand := range ordered {
		l := strings.ToLower(cand)
		if l == "" {
			continue
		}
		found := false
		for _, t := range texts {
			if strings.Contains(strings.ToLower(t), l) {
				found = true
				break
			}
		}
		if !found {
			return cand
		}
	}
	return ""
}

// rowMaker makes generation-list rows in a spender's workspace: cheap tts jobs, each canceled
// through control right after its submit (a canceled job is a failed row and costs nothing), or,
// without control, spent and waited to its end before the next (the key holds one job at a time),
// so each row's updated_at follows the one made before it.
type rowMaker struct {
	s     *framework.Spec
	sp    spender
	voice string
	need  int64
}

// newRowMaker estimates the tts job once (every script has the same length, so the same price).
func newRowMaker(ctx context.Context, s *framework.Spec, sp spender) *rowMaker {
	GinkgoHelper()
	voice := catalogue.FirstVoice(ctx, sp.c)
	_, need := estimateOf(ctx, sp.c, "tts", catalogue.TTSConfig(ctx, sp.c), map[string]any{"voice_id": voice})
	return &rowMaker{s: s, sp: sp, voice: voice, need: need}
}

// make makes n rows, with control moving the service clock 3 s before each (the agent_submit
// bucket refills 20 a minute, and every row gets its own created_at and updated_at), and returns
// their ids oldest first.
func (m *rowMaker) make(ctx context.Context, n int) []string {
	GinkgoHelper()
	if m.sp.ws == nil {
		m.s.Spend(n * int(m.need)) // all at once: a budget short of them skips before the first
	}
	var out []string
	for range n {
		if m.sp.ws != nil {
			m.s.Advance(ctx, 3)
		}
		id := m.submit(ctx)
		if m.sp.ws == nil {
			m.s.Finish(ctx, m.sp.c, id)
		} else {
			m.s.JobHook(ctx, id, "cancel", nil)
		}
		out = append(out, id)
	}
	return out
}

// submit submits one tts row with the spender's key and returns its id.
func (m *rowMaker) submit(ctx context.Context) string {
	GinkgoHelper()
	return m.submitBy(ctx, m.sp.c)
}

// submitBy submits one tts row with c (a client of the spender's key: one carrying a test input,
// say) and returns its id.
func (m *rowMaker) submitBy(ctx context.Context, c *framework.Client) string {
	GinkgoHelper()
	body := submitBody("tts", catalogue.TTSConfig(ctx, m.sp.c), m.need, map[string]any{"voice_id": m.voice})
	return c.Post(ctx, "/generations", body).ExpectOK(http.StatusCreated).String("generation_id")
}

// makeTied makes n rows at one instant of the service clock (moved once, 3 s, before the first;
// not between them), so that on a manual clock they share created_at, and returns their ids oldest
// first. On a running clock they may not share it, and a spec on ties then judges nothing more
// than a walk.
func (m *rowMaker) makeTied(ctx context.Context, n int) []string {
	GinkgoHelper()
	m.s.Advance(ctx, 3)
	var out []string
	for range n {
		id := m.submit(ctx)
		m.s.JobHook(ctx, id, "cancel", nil)
		out = append(out, id)
	}
	return out
}

// walkRecoverAfter is when the app recovers the row writtenOffRow writes off: long enough after the
// write-off for the rows made after it and a walk's first page, on any time scale.
const walkRecoverAfter = 5 * time.Minute

// writtenOffRow makes, without control, the row GEN-045's walk sees updated mid-walk: a tts job
// submitted with ti (a client carrying the recover test input) that fails at render start, the
// operator recovering it walkRecoverAfter later, then two rows made after it. It returns the
// job, the three rows oldest first by updated_at (the write-off first) and an updated_since just
// before the job, from which a walk reads the job first.
func writtenOffRow(ctx context.Context, s *framework.Spec, sp spender, rm *rowMaker, ti *framework.Client) (moved string, rows []string, since string) {
	GinkgoHelper()
	s.Spend(int(rm.need))
	moved = rm.submitBy(ctx, ti)
	Expect(s.Finish(ctx, sp.c, moved).String("generation.status")).To(Equal("failed"), "the job the app writes off fails at render start")
	since = answer.Time(readGen(ctx, sp.c, moved), "generation.created_at").Add(-time.Second).UTC().Format(time.RFC3339)
	return moved, append([]string{moved}, rm.make(ctx, 2)...), since
}

// runningRow makes, where the run can force no act, the row GEN-045's walk sees updated mid-walk:
// the catalogue's cheapest video (its longest-running kind of job), submitted with the profile's
// sibling key (the main key's slot stays free), then two rows the main key makes while it renders.
// It returns the video, the rows as a walk by updated_since from just before the video lists them
// now (the video, still running, before at least one of the others) and that updated_since. It
// skips as undecidable when the video ended first or its place is already after the rows.
func runningRow(ctx context.Context, s *framework.Spec, sp spender, rm *rowMaker) (moved string, rows []string, since string) {
	GinkgoHelper()
	sib := s.RoleKey(framework.SiblingKey)
	d := catalogue.VideoModel(ctx, sib)
	j := submit(ctx, s, sib, d.String("capability_id"), catalogue.CheapConfig(d), nil)
	since = answer.Time(readGen(ctx, sp.c, j.id), "generation.created_at").Add(-time.Second).UTC().Format(time.RFC3339)
	made := rm.make(ctx, 2)
	for _, id := range paging.GenerationIDs(ctx, sp.c, [2]string{"updated_since", since}) {
		if id == j.id || slices.Contains(made, id) {
			rows = append(rows, id)
		}
	}
	if !runningNow(ctx, sp.c, j.id) || len(rows) != 3 || rows[2] == j.id {
		framework.SkipFor(framework.Undecidable("the video " + j.id + " ended, or moved after the rows made while it rendered, before the walk began: no update can happen during it"))
	}
	return j.id, rows, since
}

// awaitEnded waits, once a walk has read the running video id (runningRow), until its render has
// ended: when is the target's own (no render time is published), so it reads until it does.
func awaitEnded(ctx context.Context, s *framework.Spec, c *framework.Client, id string) {
	GinkgoHelper()
	Eventually(func() bool { return runningNow(ctx, c, id) }).WithContext(ctx).
		WithTimeout(time.Duration(float64(walkRecoverAfter+recoverSlack+recoverRender)/s.TimeScale())).WithPolling(time.Second).
		Should(BeFalse(), "the video "+id+" ends its render")
}

// awaitRecovered waits, once a walk has read the written-off job id, until the operator's recovery
// (writtenOffRow) has made it completed: when it ends is the target's own, so it reads until it
// does. It skips the spec as undecidable when the job was recovered before the walk read it (the
// rows after it took longer than walkRecoverAfter).
func awaitRecovered(ctx context.Context, s *framework.Spec, c *framework.Client, id string) {
	GinkgoHelper()
	if st := readGen(ctx, c, id).String("generation.status"); st != "failed" {
		framework.SkipFor(framework.Undecidable(fmt.Sprintf("the written-off job %s reads %s as the walk goes on: it was recovered before the walk read it", id, st)))
	}
	Eventually(func() string { return readGen(ctx, c, id).String("generation.status") }).WithContext(ctx).
		WithTimeout(time.Duration(float64(walkRecoverAfter+recoverSlack+recoverRender)/s.TimeScale())).WithPolling(time.Second).
		Should(Equal("completed"), "the recovered "+id+" reads completed once its recovery has rendered")
}
