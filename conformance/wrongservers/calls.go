package wrongservers

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
)

// Helpers for wrong servers that make calls of their own to the mock (to learn a state the
// request does not show), answer in the service's error envelope, or sign deliveries again.

// controlPrefix is the mock's control API root path.
const controlPrefix = "/_control/v1"

// controlRoute matches method (empty: any) and the path after /_control/v1 against pattern,
// anchored.
func controlRoute(method, pattern string) matcher {
	re := regexp.MustCompile("^" + pattern + "$")
	return func(r *http.Request) bool {
		if method != "" && r.Method != method {
			return false
		}
		p, ok := strings.CutPrefix(r.URL.Path, controlPrefix)
		return ok && re.MatchString(p)
	}
}

// refuse turns a into a refusal in the error envelope, with extra fields in error.
func refuse(a *answer, status int, code string, retry bool, extra map[string]any) {
	e := map[string]any{"ok": false, "code": code, "message": "The request was refused (" + code + ").",
		"retryable": retry, "credits_charged": 0}
	for k, v := range extra {
		e[k] = v
	}
	a.status = status
	a.header.Set("Content-Type", "application/json")
	a.header.Del("Location")
	a.setDoc(map[string]any{"error": e})
}

// recode answers failures of matching calls carrying code with another status, code and
// retryable verdict.
func recode(m matcher, code string, status int, to string, retry bool) Wrap {
	return errorsWith(m, code, func(_ *http.Request, a *answer, e map[string]any) {
		a.status = status
		e["code"] = to
		e["retryable"] = retry
	})
}

// refuseInFlight turns a into the in-flight refusal naming generation id, running in status st.
func refuseInFlight(a *answer, id any, st string) {
	refuse(a, http.StatusConflict, "submission_in_flight", true, map[string]any{"in_flight": map[string]any{"generation_id": id, "status": st}})
}

// refusal is a new answer holding a refusal.
func refusal(status int, code string, retry bool, extra map[string]any) *answer {
	a := &answer{header: http.Header{}}
	refuse(a, status, code, retry, extra)
	return a
}

// callAs makes a call of its own to next, as the request r was made (same host), with
// Authorization set to auth (a bearer value) and body encoded as JSON (nil: none). It returns the
// answer and its JSON object body (nil when not one).
func callAs(next http.Handler, r *http.Request, method, path, auth string, body any) (*answer, map[string]any) {
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequestWithContext(r.Context(), method, "http://"+r.Host+path, rd)
	if err != nil {
		return &answer{header: http.Header{}, status: http.StatusInternalServerError}, nil
	}
	req.Host = r.Host
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	a := serve(next, req)
	d, _ := a.doc()
	return a, d
}

// inFlightOn is the mock behind a proxy that remembers each key's last accepted submit and, while
// that job still runs, answers a submit whose answer refuseIf picks with 409 submission_in_flight
// naming it: the in-flight check placed where it does not belong.
func inFlightOn(refuseIf func(a *answer, d map[string]any) bool) Wrap {
	return func(_ *Env, next http.Handler) http.Handler {
		var last memo[string]
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !submitRoute(r) {
				next.ServeHTTP(w, r)
				return
			}
			key := presented(r)
			a := serve(next, r)
			d, _ := a.doc()
			if id, ok := last.get(key); ok && refuseIf(a, d) {
				if st, run := running(next, r, key, id); run {
					refuseInFlight(a, id, st)
					a.send(w)
					return
				}
			}
			if accepted(a, d) {
				if id, ok := d["generation_id"].(string); ok {
					last.put(key, id)
				}
			}
			a.send(w)
		})
	}
}

// accepted reports whether a submit answer started a job (201, not a replay).
func accepted(a *answer, d map[string]any) bool {
	return a.status == http.StatusCreated && d != nil && d["replay"] != true
}

// running reports whether generation id still runs, read with key.
func running(next http.Handler, r *http.Request, key, id string) (string, bool) {
	a, d := callAs(next, r, http.MethodGet, apiPrefix+"/generations/"+id, key, nil)
	if a.status != http.StatusOK {
		return "", false
	}
	st, _ := obj(d, "generation")["status"].(string)
	switch st {
	case "queued", "rendering", "post_processing":
		return st, true
	}
	return st, false
}

// guard answers with the answer stop returns (nil: the call goes on to the mock unchanged).
func guard(m matcher, stop func(env *Env, next http.Handler, r *http.Request) *answer) Wrap {
	return func(env *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if m(r) {
				requestBody(r) // buffered, so stop may read it and the mock still can
				if a := stop(env, next, r); a != nil {
					a.send(w)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// keyOfWorkspace is a key the mock issued in workspace ws with the generate scope, else any key of
// it.
func (e *Env) keyOfWorkspace(ws string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var any string
	for _, k := range e.order {
		info := e.keys[k]
		if info.workspace != ws {
			continue
		}
		if len(info.scopes) > 1 || (len(info.scopes) == 1 && info.scopes[0] == "generate") {
			return k
		}
		if any == "" {
			any = k
		}
	}
	return any
}

// workspaceOf is the workspace of key ("" when unknown).
func (e *Env) workspaceOf(key string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.keys[key].workspace
}

// signWith is the webhook-signature value for id, timestamp and body under a whsec_ secret.
func signWith(secret, id, ts string, body []byte) string {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		key = []byte(secret)
	}
	return "v1," + base64.StdEncoding.EncodeToString(macOf(key, id, ts, body))
}

func macOf(key []byte, id, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	return m.Sum(nil)
}

// deliveryEdit changes each delivery before the receiver sees it: edit may change the JSON body
// and the headers, and reports whether it did; the delivery is then signed again with the
// endpoint's secret over the new id, timestamp and body.
func deliveryEdit(edit func(env *Env, h http.Header, d map[string]any) bool) Wrap {
	return func(env *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			d, ok := decodeObject(requestBody(r))
			if ok && edit(env, r.Header, d) {
				b, err := json.Marshal(d)
				if err == nil {
					setRequestBody(r, b)
					resign(env, r, b)
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// resign signs r again over body with the secret of its receiver path.
func resign(env *Env, r *http.Request, body []byte) {
	if s, ok := env.Secret(r.URL.Path); ok {
		r.Header.Set("Webhook-Signature", signWith(s, r.Header.Get("Webhook-Id"), r.Header.Get("Webhook-Timestamp"), body))
	}
}

// sendAgain forwards a copy of delivery r (body b) to next once more, after edit changed its
// headers and body; the receiver's answer is dropped.
func sendAgain(env *Env, next http.Handler, r *http.Request, b []byte, edit func(h http.Header, d map[string]any)) {
	d, ok := decodeObject(b)
	if !ok {
		return
	}
	c := r.Clone(r.Context())
	c.Header = r.Header.Clone()
	edit(c.Header, d)
	nb, err := json.Marshal(d)
	if err != nil {
		return
	}
	setRequestBody(c, nb)
	resign(env, c, nb)
	serve(next, c)
}
