package mock

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"github.com/mediaspec/mediaspec/internal/clock"
	"github.com/mediaspec/mediaspec/internal/mock/reqlog"
	"github.com/mediaspec/mediaspec/spec/judge"
	"github.com/mediaspec/mediaspec/spec/judge/audit"
)

// How much of a request body and of an answer the auditor reads. Longer ones are audited on their
// first bytes (a cut answer does not parse, so it teaches nothing, and nothing is flagged from it).
const (
	auditMaxBody   = 64 << 10
	auditMaxAnswer = 512 << 10
)

// auditMiddleware passes every request to next unchanged and, for /api/v1 calls and file links,
// hands the exchange to a.Observe once the answer is written: the request line, the caller's key
// id, the request body (read up to 64 KiB, then replayed to next whole), the status, Retry-After
// and the answer (kept up to 512 KiB), stamped with the service clock clk. caller names the key a
// request presents (its key id and workspace id, both empty without a valid key) and must not
// change any state (no request counted, no bucket taken). Upload PUTs are not read. A control API
// write that succeeds (it changes state a client does not send: a plan, a balance, a key, the
// clock, faults) makes the auditor forget the recent calls (ForgetCalls): a refusal before it is
// no precedent for the same call after it.
func auditMiddleware(a *audit.Auditor, clk clock.Clock, caller func(*http.Request) (keyID, workspaceID string),
	next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api := strings.HasPrefix(r.URL.Path, judge.APIBase+"/")
		if strings.HasPrefix(r.URL.Path, judge.ControlBase+"/") && r.Method != http.MethodGet {
			rec := reqlog.NewRecorder(w, 0, nil)
			next.ServeHTTP(rec, r)
			if rec.Status < 400 {
				a.ForgetCalls()
			}
			return
		}
		if !api && !strings.HasPrefix(r.URL.Path, judge.FilesPath) {
			next.ServeHTTP(w, r)
			return
		}
		ex := audit.Exchange{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Origin: r.Header.Get("Origin"),
			Start: clk.Now()}
		if caller != nil && api {
			ex.KeyID, ex.WorkspaceID = caller(r)
		}
		if api && r.Body != nil && r.Body != http.NoBody {
			head, err := io.ReadAll(io.LimitReader(r.Body, auditMaxBody))
			ex.Body = head
			rest := r.Body
			r.Body = auditReadCloser{io.MultiReader(bytes.NewReader(head), auditErrReader{err}, rest), rest}
		}
		rec := reqlog.NewRecorder(w, auditMaxAnswer, func(int) bool { return api })
		next.ServeHTTP(rec, r)
		ex.Status, ex.Answer, ex.RetryAfter = rec.Status, rec.Body.Bytes(), rec.Header().Get("Retry-After")
		ex.End = clk.Now()
		a.Observe(ex)
	})
}

type auditReadCloser struct {
	io.Reader
	io.Closer
}

// auditErrReader replays a read error of the body's head after its bytes (nil: nothing).
type auditErrReader struct{ err error }

func (e auditErrReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}
