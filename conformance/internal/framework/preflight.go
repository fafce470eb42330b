package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/mediaspec/mediaspec/internal/contract"
)

// SetupError is a run that cannot start: a report path that cannot be written, a label filter that
// selects nothing, a target that does not answer, a key it refuses. It is found before any spec
// runs, and mediaspec check exits 2 on it. The message is one line and names no secret.
type SetupError struct {
	Msg string // the message
}

// Error is the one-line message.
func (e *SetupError) Error() string { return e.Msg }

// ExitCode is the exit status of a command that stops on a setup error.
func (e *SetupError) ExitCode() int { return 2 }

func setupErr(format string, args ...any) *SetupError {
	return &SetupError{Msg: fmt.Sprintf(format, args...)}
}

// preflightTimeout bounds each preflight call: the setup is either answering or not.
const preflightTimeout = 10 * time.Second

// CheckLocal checks what needs no network and no spec tree: the label filter parses and every
// report path can be written (its folder exists and a file can be made there). A report file that
// did not exist is removed again.
func CheckLocal(cfg Config) error {
	if _, err := types.ParseLabelFilter(cfg.LabelFilter); err != nil {
		return setupErr("the label filter %q does not parse: %s", cfg.LabelFilter, plain(err))
	}
	for _, r := range []struct{ flag, path string }{
		{"--json-report", cfg.JSONReport}, {"--junit-report", cfg.JUnitReport}, {"--html-report", cfg.HTMLReport},
	} {
		if r.path == "" {
			continue
		}
		if err := writable(r.path); err != nil {
			return setupErr("%s %s cannot be written: %v", r.flag, r.path, unwrapPath(err))
		}
	}
	return nil
}

// escapes are terminal colour codes (Ginkgo colours its errors).
var escapes = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\x1b\[[0-9;]*m|\{\{/?[a-z0-9-]*\}\}`) })

// plain is err's text without colour codes, on one line, without Ginkgo's "learn more" link.
func plain(err error) string {
	var ge types.GinkgoError
	if errors.As(err, &ge) {
		return escapes().ReplaceAllString(ge.Heading+": "+strings.Join(strings.Fields(ge.Message), " "), "")
	}
	return strings.Join(strings.Fields(escapes().ReplaceAllString(err.Error(), "")), " ")
}

func writable(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return errors.New("it is a directory")
	}
	_, statErr := os.Stat(path)
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		if _, derr := os.Stat(filepath.Dir(path)); derr != nil {
			return fmt.Errorf("the folder %s does not exist", filepath.Dir(path))
		}
		return err
	}
	_ = fh.Close()
	if os.IsNotExist(statErr) {
		_ = os.Remove(path)
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// NothingSelected is the setup error of a label filter that selects no spec.
func NothingSelected(filter string) error {
	return setupErr("the label filter %q selects no spec (labels are rule ids such as AUTH-001 and needs such as control; mediaspec rules lists the ids)", filter)
}

// Preflight checks the target before any spec runs, in the order a person would: the target
// answers (its liveness probe when it names one, else GET /capabilities); the control token is accepted (when given); the key is accepted; the read key reads but
// cannot generate; the other key is accepted and sees another workspace. The first problem is
// returned as a one-line SetupError.
func (f *Framework) Preflight(ctx context.Context) error {
	pctx, cancel := context.WithTimeoutCause(ctx, preflightTimeout, errRequestTimeout{d: preflightTimeout, name: "the preflight's limit per call"})
	defer cancel()
	// The probes' paths are not given by the text: the liveness probe named by the target, else an
	// anonymous GET /capabilities (a keyed read, so any answer but 404 shows the root is right).
	probePath, want := "/capabilities", "an answer other than 404"
	if _, _, live, _ := f.cfg.Named(); live != "" {
		probePath, want = live, "2XX"
	}
	probeURL := f.resolve(f.apiRoot, probePath).String()
	live, err := f.probe(pctx, probeURL, "")
	switch {
	case answeredBadly(err):
		return setupErr("%v", err)
	case err != nil:
		return setupErr("the target does not answer GET %s: %v (is --base-url the API root, e.g. http://host:port/api/v1?)", f.redactor.String(probeURL), err)
	case probePath == "/capabilities" && live.status == http.StatusNotFound,
		probePath != "/capabilities" && (live.status < 200 || live.status > 299):
		return setupErr("GET %s answered %d, want %s (is --base-url the API root, e.g. http://host:port/api/v1?)", f.redactor.String(probeURL), live.status, want)
	case live.redirect():
		return setupErr("GET %s answered %d, a redirect to %s: the suite follows no redirect (give the API root the target serves itself as --base-url)", f.redactor.String(probeURL), live.status, f.redactor.String(live.location))
	}
	if f.controlRoot != nil {
		u := f.resolve(f.controlRoot, "/clock").String()
		r, err := f.probe(pctx, u, f.cfg.ControlToken)
		switch {
		case answeredBadly(err):
			return setupErr("%v", err)
		case err != nil:
			return setupErr("the control API does not answer GET %s: %v", u, err)
		case r.status == http.StatusUnauthorized || r.status == http.StatusForbidden:
			return setupErr("the control token was refused (%d)", r.status)
		case r.status != http.StatusOK:
			return setupErr("GET %s answered %d, want 200 (is --control-url the control root, e.g. http://host:port/_control/v1?)", u, r.status)
		}
	}
	balance := f.resolve(f.apiRoot, "/credits/balance").String()
	for _, k := range []struct{ name, key string }{{"key", f.cfg.Key}, {"read key", f.cfg.ReadKey}, {"other key", f.cfg.OtherKey}} {
		if k.key == "" {
			continue
		}
		r, err := f.probe(pctx, balance, k.key)
		switch {
		case answeredBadly(err):
			return setupErr("%v", err)
		case r.redirect():
			return setupErr("GET %s with the %s answered %d, a redirect to %s: the suite follows no redirect", balance, k.name, r.status, f.redactor.String(r.location))
		case err != nil:
			return setupErr("GET %s with the %s: %v", balance, k.name, err)
		case r.status == http.StatusUnauthorized:
			return setupErr("the %s was refused (401)%s", k.name, r.code())
		case r.status == http.StatusForbidden:
			return setupErr("the %s was refused (403)%s", k.name, r.code())
		}
	}
	if f.cfg.ReadKey != "" {
		if f.cfg.ReadKey == f.cfg.Key {
			return setupErr("the read key is the key: give a key with only the read scope")
		}
		u := f.resolve(f.apiRoot, "/generations").String()
		r, err := f.call(pctx, http.MethodPost, u, f.cfg.ReadKey, []byte("{}"))
		if err != nil {
			return setupErr("POST %s with the read key: %v", u, err)
		}
		if r.status != http.StatusForbidden && r.status != http.StatusTooManyRequests {
			return setupErr("the read key is not read-only: POST /generations answered %d%s, want 403 insufficient_scope", r.status, r.code())
		}
	}
	if f.cfg.OtherKey != "" {
		if f.cfg.OtherKey == f.cfg.Key || f.cfg.OtherKey == f.cfg.ReadKey {
			return setupErr("the other key is the key or the read key: give a key of a second workspace")
		}
		if f.cfg.Key != "" && f.sameWorkspace(pctx, f.cfg.Key, f.cfg.OtherKey) {
			return setupErr("the other key sees the key's generations: it belongs to the same workspace; give a key of a second workspace")
		}
	}
	return nil
}

// sameWorkspace reports whether both keys list a generation with the same id (so they share a
// workspace). Lists that cannot be read prove nothing.
func (f *Framework) sameWorkspace(ctx context.Context, a, b string) bool {
	u := f.resolve(f.apiRoot, "/generations?limit="+strconv.Itoa(contract.PageSizeMax)).String()
	ids := func(key string) map[string]bool {
		r, err := f.probe(ctx, u, key)
		if err != nil || r.status != http.StatusOK {
			return nil
		}
		var doc struct {
			Generations []struct {
				ID string `json:"generation_id"`
			} `json:"generations"`
		}
		_ = json.Unmarshal(r.body, &doc)
		out := map[string]bool{}
		for _, d := range doc.Generations {
			if d.ID != "" {
				out[d.ID] = true
			}
		}
		return out
	}
	mine := ids(a)
	for id := range ids(b) {
		if mine[id] {
			return true
		}
	}
	return false
}

type probeResult struct {
	status   int
	body     []byte
	location string // a redirect's Location
}

// redirect reports whether the answer is a redirect (3XX with a Location).
func (r probeResult) redirect() bool { return r.status/100 == 3 && r.location != "" }

// code is " (error.code)" from an error body, or "".
func (r probeResult) code() string {
	var doc struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(r.body, &doc) == nil && doc.Error.Code != "" {
		return ": " + doc.Error.Code
	}
	return ""
}

func (f *Framework) probe(ctx context.Context, u, key string) (probeResult, error) {
	return f.call(ctx, http.MethodGet, u, key, nil)
}

// call makes one preflight call, outside any transcript and without checking the description.
func (f *Framework) call(ctx context.Context, method, u, key string, body []byte) (probeResult, error) {
	var req *http.Request
	var err error
	if body != nil {
		req, err = http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	} else {
		req, err = http.NewRequestWithContext(ctx, method, u, nil)
	}
	if err != nil {
		return probeResult{}, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	res, err := f.httpClient().Do(req)
	if err != nil {
		var over *OverCapError
		if errors.As(headerOverCap(err, method+" "+f.redactor.String(u)), &over) {
			return probeResult{}, over
		}
		if ctx.Err() != nil {
			return probeResult{}, fmt.Errorf("no answer within %s", preflightTimeout)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in the message already
		}
		return probeResult{}, errors.New(f.redactor.String(err.Error()))
	}
	b, err := f.readBody(ctx, res, method+" "+f.redactor.String(u))
	if err != nil {
		return probeResult{}, err
	}
	return probeResult{status: res.StatusCode, body: b, location: res.Header.Get("Location")}, nil
}
