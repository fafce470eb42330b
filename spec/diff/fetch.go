package diff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/mediaspec/mediaspec/internal/jsoncount"
)

// What diff reads of a server's answer: a description or a catalogue page nobody here controls.
const (
	// DefaultMaxBody caps one fetched answer's body (Fetcher.MaxBody, diff --max-answer-bytes).
	DefaultMaxBody = 32 << 20
	// bytesPerJSONValue sets how many values a fetched JSON document may hold: one per that many
	// bytes of the body cap (524,288 for 32 MiB; the embedded description holds about 7,700).
	bytesPerJSONValue = 64
	// maxHeader caps one answer's header block (Go's own default is 10 MB).
	maxHeader = 64 << 10
)

// Fetcher reads the sides of a comparison: files from disk and answers of a deployed server. It
// fetches exactly the URLs it is given (and, for a catalogue, the capability routes under the
// given API root); redirects are not followed.
type Fetcher struct {
	// Client does the HTTP calls; nil means a client with a 30 second timeout.
	Client *http.Client
	// Key is sent as Authorization: Bearer when set.
	Key string
	// MaxBody caps one answer's body; a larger one is a CompareError naming the call. 0:
	// DefaultMaxBody.
	MaxBody int64
}

// IsURL reports whether a side names a server (http or https) rather than a file.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// defaultClient is the client of a Fetcher without one: a 30 second timeout, no redirects.
var defaultClient = &http.Client{
	Transport:     &http.Transport{Proxy: http.ProxyFromEnvironment, MaxResponseHeaderBytes: maxHeader},
	Timeout:       30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func (f Fetcher) client() *http.Client {
	if f.Client != nil {
		return f.Client
	}
	return defaultClient
}

// Read returns the bytes of a file, or of the answer of a GET to a URL (which must be 200).
func (f Fetcher) Read(ctx context.Context, src string) ([]byte, error) {
	if !IsURL(src) {
		b, err := os.ReadFile(src)
		if err != nil {
			return nil, &CompareError{Err: err}
		}
		return b, nil
	}
	b, status, err := f.get(ctx, src)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, compareErrorf("GET %s answered %d: %s", src, status, snippet(b))
	}
	return b, nil
}

func (f Fetcher) get(ctx context.Context, u string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, &CompareError{Err: err}
	}
	req.Header.Set("Accept", "application/json")
	if f.Key != "" {
		req.Header.Set("Authorization", "Bearer "+f.Key)
	}
	resp, err := f.client().Do(req)
	if err != nil {
		if strings.Contains(err.Error(), "server response headers exceeded") {
			return nil, 0, compareErrorf("the header block of the answer to GET %s is over %d KiB, the cap diff reads", u, maxHeader>>10)
		}
		return nil, 0, &CompareError{Err: err}
	}
	defer resp.Body.Close()
	limit := f.MaxBody
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	over := compareErrorf("the answer body of GET %s is over %s, the cap diff reads (--max-answer-bytes raises it)", u, mib(limit))
	if resp.ContentLength > limit {
		return nil, 0, over
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if int64(len(b)) > limit {
		return nil, 0, over
	}
	if err != nil {
		return nil, 0, compareErrorf("GET %s: %w", u, err)
	}
	if most := limit / bytesPerJSONValue; int64(jsoncount.Values(b)) > most {
		return nil, 0, compareErrorf("the answer body of GET %s holds over %d JSON values, the most diff decodes within %s "+
			"(--max-answer-bytes raises both; decoded JSON takes up to 50 times its size)", u, most, mib(limit))
	}
	return b, resp.StatusCode, nil
}

// mib says a size in MiB when it is a whole number of them, else in bytes.
func mib(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// Catalogue reads a capability catalogue from a file, or from a server: src is its API root (the
// URL ending in /api/v1; a trailing /capabilities is accepted). From a server it reads every page of
// GET /capabilities, each capability's GET /capabilities/{id} for its config_schema, and the version
// from GET /openapi.json; a capability missing from the list is asked for by id to tell a retired
// one (404 capability_unavailable, capability_status retired) from a deleted one.
func (f Fetcher) Catalogue(ctx context.Context, src string) (*Catalogue, error) {
	if !IsURL(src) {
		b, err := f.Read(ctx, src)
		if err != nil {
			return nil, err
		}
		return ParseCatalogue(src, b)
	}
	base := strings.TrimSuffix(strings.TrimSuffix(src, "/"), "/capabilities")
	cat := &Catalogue{Name: src, Capabilities: map[string]Capability{}}
	if b, status, err := f.get(ctx, base+"/openapi.json"); err == nil && status == http.StatusOK {
		var doc struct {
			Info struct {
				Version string `json:"version"`
			} `json:"info"`
		}
		if json.Unmarshal(b, &doc) == nil {
			cat.Version = doc.Info.Version
		}
	}
	cursor := ""
	for page := 0; ; page++ {
		if page > 1000 {
			return nil, compareErrorf("GET %s/capabilities: more than 1000 pages", base)
		}
		u := base + "/capabilities?limit=50"
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		var list struct {
			Capabilities []Capability `json:"capabilities"`
			NextCursor   *string      `json:"next_cursor"`
		}
		if err := f.getJSON(ctx, u, &list); err != nil {
			return nil, err
		}
		for _, row := range list.Capabilities {
			// A listed row this key cannot run answers its detail with 404 capability_unavailable
			// (coming_soon) or 403 required_plan: it is compared without a config_schema.
			b, status, err := f.get(ctx, base+"/capabilities/"+url.PathEscape(row.ID))
			if err != nil {
				return nil, err
			}
			detail := row
			switch {
			case status == http.StatusOK:
				if err := json.Unmarshal(b, &detail); err != nil {
					return nil, compareErrorf("GET %s/capabilities/%s: %w", base, row.ID, err)
				}
			case status == http.StatusNotFound && errorCode(b) == "capability_unavailable",
				status == http.StatusForbidden && errorCode(b) == "required_plan":
			default:
				return nil, compareErrorf("GET %s/capabilities/%s answered %d: %s", base, row.ID, status, snippet(b))
			}
			detail.ID = row.ID
			cat.Capabilities[row.ID] = detail
		}
		if list.NextCursor == nil || *list.NextCursor == "" || *list.NextCursor == cursor {
			break
		}
		cursor = *list.NextCursor
	}
	cat.Retired = func(id string) (bool, error) {
		b, status, err := f.get(ctx, base+"/capabilities/"+url.PathEscape(id))
		if err != nil {
			return false, err
		}
		code, capStatus := errorFields(b)
		return status == http.StatusNotFound && code == "capability_unavailable" && capStatus == "retired", nil
	}
	return cat, nil
}

// errorFields reads error.code and error.capability_status of an error answer.
func errorFields(b []byte) (code, capabilityStatus string) {
	var e struct {
		Error struct {
			Code             string `json:"code"`
			CapabilityStatus string `json:"capability_status"`
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	return e.Error.Code, e.Error.CapabilityStatus
}

func errorCode(b []byte) string {
	code, _ := errorFields(b)
	return code
}

func (f Fetcher) getJSON(ctx context.Context, u string, dst any) error {
	b, status, err := f.get(ctx, u)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return compareErrorf("GET %s answered %d: %s", u, status, snippet(b))
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return compareErrorf("GET %s: %w", u, err)
	}
	return nil
}

// IsCompareError reports whether err means the sides could not be compared.
func IsCompareError(err error) bool {
	var ce *CompareError
	return errors.As(err, &ce)
}
