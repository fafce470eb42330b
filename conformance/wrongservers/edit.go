package wrongservers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// apiPrefix is the mock's API root path; routes below are matched on the path after it.
const apiPrefix = "/api/v1"

// matcher picks the requests a change applies to.
type matcher func(*http.Request) bool

// route matches method (empty: any) and the path after /api/v1 against pattern, anchored.
func route(method, pattern string) matcher {
	re := regexp.MustCompile("^" + pattern + "$")
	return func(r *http.Request) bool {
		if method != "" && r.Method != method {
			return false
		}
		p, ok := strings.CutPrefix(r.URL.Path, apiPrefix)
		return ok && re.MatchString(p)
	}
}

// anyAPI matches every call under /api/v1.
var anyAPI = route("", "/.*")

// answer is a buffered answer a wrong server changes before it is sent.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a *answer) Header() http.Header { return a.header }
func (a *answer) Write(b []byte) (int, error) {
	if a.status == 0 {
		a.status = http.StatusOK
	}
	a.body = append(a.body, b...)
	return len(b), nil
}
func (a *answer) WriteHeader(code int) {
	if a.status == 0 {
		a.status = code
	}
}

// send writes the (changed) answer, with a Content-Length that fits the body.
func (a *answer) send(w http.ResponseWriter) {
	h := w.Header()
	for k, v := range a.header {
		h[k] = v
	}
	h.Del("Content-Length")
	if a.body != nil {
		h.Set("Content-Length", strconv.Itoa(len(a.body)))
	}
	if a.status == 0 {
		a.status = http.StatusOK
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// doc decodes a JSON object body (numbers kept exact); ok is false for any other body.
func (a *answer) doc() (map[string]any, bool) { return decodeObject(a.body) }

// setDoc replaces the body with v encoded as JSON.
func (a *answer) setDoc(v any) {
	b, err := json.Marshal(v)
	if err == nil {
		a.body = b
	}
}

func decodeObject(b []byte) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil || v == nil {
		return nil, false
	}
	return v, true
}

// serve runs next into a buffered answer and returns it, unsent.
func serve(next http.Handler, r *http.Request) *answer {
	a := &answer{header: http.Header{}}
	next.ServeHTTP(a, r)
	return a
}

// answers changes the answers of matching calls with edit (the request is the one the mock saw).
func answers(m matcher, edit func(env *Env, r *http.Request, a *answer)) Wrap {
	return func(env *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !m(r) {
				next.ServeHTTP(w, r)
				return
			}
			a := serve(next, r)
			edit(env, r, a)
			a.send(w)
		})
	}
}

// docs changes the JSON object bodies of matching answers whose status passes ok.
func docs(m matcher, ok func(status int) bool, edit func(r *http.Request, a *answer, doc map[string]any)) Wrap {
	return answers(m, func(_ *Env, r *http.Request, a *answer) {
		if !ok(a.status) {
			return
		}
		d, isDoc := a.doc()
		if !isDoc {
			return
		}
		edit(r, a, d)
		a.setDoc(d)
	})
}

func success(status int) bool { return status >= 200 && status < 300 }
func failure(status int) bool { return status >= 400 }

// errorCode is the error.code of a failure document, or "".
func errorCode(d map[string]any) string {
	e, _ := d["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// errorsWith changes failure answers carrying code (any code when empty).
func errorsWith(m matcher, code string, edit func(r *http.Request, a *answer, e map[string]any)) Wrap {
	return docs(m, failure, func(r *http.Request, a *answer, d map[string]any) {
		e, _ := d["error"].(map[string]any)
		if e == nil || (code != "" && errorCode(d) != code) {
			return
		}
		edit(r, a, e)
	})
}

// retryableAs marks the code's error answers on the routes m matches retryable v (the one field a
// row gets wrong).
func retryableAs(m matcher, code string, v bool) Wrap {
	return errorsWith(m, code, func(_ *http.Request, _ *answer, e map[string]any) { e["retryable"] = v })
}

// requests changes matching requests before the mock sees them.
func requests(m matcher, edit func(env *Env, r *http.Request)) Wrap {
	return func(env *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if m(r) {
				edit(env, r)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// requestBody reads r's body and puts it back, so the mock can read it again.
func requestBody(r *http.Request) []byte {
	if r.Body == nil {
		return nil
	}
	b, _ := io.ReadAll(r.Body)
	_ = r.Body.Close()
	setRequestBody(r, b)
	return b
}

func setRequestBody(r *http.Request, b []byte) {
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	r.Header.Set("Content-Length", strconv.Itoa(len(b)))
}

// obj is the object at key of m, or nil.
func obj(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

// rows is the array at key of m, as objects.
func rows(m map[string]any, key string) []map[string]any {
	list, _ := m[key].([]any)
	var out []map[string]any
	for _, v := range list {
		if o, ok := v.(map[string]any); ok {
			out = append(out, o)
		}
	}
	return out
}

// bearer is the key a request presents, by either scheme.
func presented(r *http.Request) string {
	if k, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(k)
	}
	return r.Header.Get("X-API-Key")
}

// intOf reads a JSON number as int64.
func intOf(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }

// setHeader sets a header on matching answers with status (any status when 0); an empty value
// removes the header.
func setHeader(m matcher, status int, name, value string) Wrap {
	return answers(m, func(_ *Env, _ *http.Request, a *answer) {
		switch {
		case status != 0 && a.status != status:
		case value == "":
			a.header.Del(name)
		default:
			a.header.Set(name, value)
		}
	})
}

// filesRoute matches file links (served by the mock outside /api/v1, through the proxy).
func filesRoute(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/files/") }

// rewriteBody changes the JSON object body of matching requests.
func rewriteBody(m matcher, edit func(d map[string]any) bool) Wrap {
	return rewriteBodyWith(m, func(_ *http.Request, d map[string]any) bool { return edit(d) })
}

// chainWraps applies wraps in order, the first outermost.
func chainWraps(ws ...Wrap) Wrap {
	return func(env *Env, next http.Handler) http.Handler {
		for i := len(ws) - 1; i >= 0; i-- {
			next = ws[i](env, next)
		}
		return next
	}
}

var (
	batchRoute   = route(http.MethodGet, "/batches/[^/]+")
	runRoute     = route(http.MethodGet, "/workflow-runs/[^/]+")
	balanceRoute = route(http.MethodGet, "/credits/balance")
	estimate     = route(http.MethodPost, "/estimates")
)

// query changes the query of matching requests; edit reports whether it changed anything.
func query(m matcher, edit func(q map[string][]string) bool) Wrap {
	return requests(m, func(_ *Env, r *http.Request) {
		q := r.URL.Query()
		if edit(q) {
			r.URL.RawQuery = q.Encode()
		}
	})
}

// memo is a small concurrency-safe map for wrong servers that remember.
type memo[V any] struct {
	mu sync.Mutex // guards m
	m  map[string]V
}

func (c *memo[V]) get(k string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *memo[V]) put(k string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]V{}
	}
	c.m[k] = v
}

// exchanges changes the answers of matching calls knowing the JSON request body the mock saw (nil
// when it was not a JSON object).
func exchanges(m matcher, edit func(env *Env, req map[string]any, a *answer)) Wrap {
	return func(env *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !m(r) {
				next.ServeHTTP(w, r)
				return
			}
			req, _ := decodeObject(requestBody(r)) // before the mock reads it
			a := serve(next, r)
			edit(env, req, a)
			a.send(w)
		})
	}
}

// rewriteBodyWith is rewriteBody whose edit also sees the request (to make calls of its own).
func rewriteBodyWith(m matcher, edit func(r *http.Request, d map[string]any) bool) Wrap {
	return requests(m, func(_ *Env, r *http.Request) {
		d, ok := decodeObject(requestBody(r))
		if !ok || !edit(r, d) {
			return
		}
		if b, err := json.Marshal(d); err == nil {
			setRequestBody(r, b)
		}
	})
}
