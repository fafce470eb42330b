package proxy

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// gzipAnswers compresses every answer of h with gzip when the request accepts it, as many servers
// do; edit, when set, rewrites the answer's bytes first.
func gzipAnswers(edit func(path string, b []byte) []byte) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
				h.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			b := rec.Body.Bytes()
			if edit != nil {
				b = edit(r.URL.Path, b)
			}
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			_, _ = zw.Write(b)
			_ = zw.Close()
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.Code)
			_, _ = w.Write(buf.Bytes())
		})
	}
}

// serverFindings are the findings on the server's side that are not advisories.
func serverFindings(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Side == SideServer && !f.Advisory {
			out = append(out, f)
		}
	}
	return out
}

// A server that answers gzip to a client that accepts it is judged on the answer the client
// decodes: a right answer shows nothing, a wrong one is found.
func TestGzipAnswersAreJudgedDecoded(t *testing.T) {
	tg := startTarget(t, gzipAnswers(nil))
	c := tg.client(t, tg.info.GenerateKey)
	c.hdr = map[string]string{"Accept-Encoding": "gzip"}
	for _, path := range []string{"/capabilities", "/credits/balance", "/generations/gen_" + strings.Repeat("0", 32)} {
		if a := c.do(http.MethodGet, path, nil); a.header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("GET %s: Content-Encoding %q, want the upstream's gzip passed on", path, a.header.Get("Content-Encoding"))
		}
	}
	if fs := serverFindings(tg.findings(t)); len(fs) > 0 {
		t.Errorf("a right answer in gzip gave findings: %+v", fs)
	}

	wrong := startTarget(t, gzipAnswers(func(path string, b []byte) []byte {
		if strings.HasSuffix(path, "/generations/gen_"+strings.Repeat("0", 32)) {
			return []byte(`{"message":"not here"}`) // a 404 without the error envelope
		}
		return b
	}))
	wc := wrong.client(t, wrong.info.GenerateKey)
	wc.hdr = map[string]string{"Accept-Encoding": "gzip"}
	wc.do(http.MethodGet, "/generations/gen_"+strings.Repeat("0", 32), nil)
	if fs := serverFindings(wrong.findings(t)); len(fs) == 0 {
		t.Error("a 404 without the error envelope, in gzip, gave no finding")
	}
}

// An answer in a coding the proxy does not undo is judged by its status and headers only, never
// as if its bytes were JSON.
func TestOtherCodingIsNotJudgedAsJSON(t *testing.T) {
	for _, tc := range []struct {
		enc  string
		body []byte
	}{{"br", []byte{0x0b, 0x02, 0x80}}, {"gzip", []byte("not gzip at all")}} {
		got, cut := decodedAnswer(http.Header{"Content-Encoding": {tc.enc}}, tc.body)
		if !cut || got != nil {
			t.Errorf("%s: decoded %q, cut %v; want cut", tc.enc, got, cut)
		}
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(bytes.Repeat([]byte("a"), MaxAnswerBody+1))
	_ = zw.Close()
	if _, cut := decodedAnswer(http.Header{"Content-Encoding": {"gzip"}}, buf.Bytes()); !cut {
		t.Error("a gzip answer over MaxAnswerBody once decoded was not cut")
	}
	if got, cut := decodedAnswer(http.Header{}, []byte(`{}`)); cut || string(got) != `{}` {
		t.Errorf("identity: %q, cut %v", got, cut)
	}
}
