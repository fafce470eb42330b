package wrongservers

import (
	"encoding/json"
	"net/http"
	"strings"
)

var (
	reserveRoute  = route(http.MethodPost, "/uploads")
	finalizeRoute = route(http.MethodPost, "/uploads/[^/]+/finalize")
)

var uploadServers = []Server{
	{
		Name: "upload-location-header", Rules: []string{"UPLOAD-001"},
		Mistake: "a reservation answers with a Location header (the framework's default for 201)",
		API:     setHeader(reserveRoute, http.StatusCreated, "Location", apiPrefix+"/assets/"+zeroAsset),
	},
	{
		Name: "upload-lifetime-600", Rules: []string{"UPLOAD-002"},
		Mistake: "upload_expires_in_seconds says 600 (the output link lifetime) instead of 300",
		API: docs(reserveRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if _, ok := d["upload_expires_in_seconds"]; ok {
				d["upload_expires_in_seconds"] = json.Number("600")
			}
		}),
	},
	{
		Name: "upload-content-checked-all", Rules: []string{"UPLOAD-005"},
		Mistake: "content_checked is true for every kind",
		API: docs(reserveRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			d["content_checked"] = true
		}),
	},
	{
		Name: "upload-type-not-normalized", Rules: []string{"UPLOAD-010"},
		Mistake: "content_type is matched as sent: parameters and capitals make it unaccepted",
		API: func(env *Env, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if reserveRoute(r) {
					var body struct {
						ContentType string `json:"content_type"`
					}
					_ = json.Unmarshal(requestBody(r), &body)
					for _, c := range body.ContentType {
						if c == ';' || (c >= 'A' && c <= 'Z') {
							writeError(w, http.StatusBadRequest, "invalid_config", "content_type is not accepted.", "content_type")
							return
						}
					}
				}
				next.ServeHTTP(w, r)
			})
		},
	},
	{
		Name: "finalize-pending-not-ready", Rules: []string{"UPLOAD-035", "ERR-030"},
		Mistake: "finalize before the bytes arrived answers 400 invalid_config instead of 409 input_not_ready",
		API: errorsWith(finalizeRoute, "input_not_ready", func(_ *http.Request, a *answer, e map[string]any) {
			a.status = http.StatusBadRequest
			e["code"], e["retryable"] = "invalid_config", false
		}),
	},
	{
		Name: "finalize-flagged-usable", Rules: []string{"UPLOAD-024", "UPLOAD-025"},
		Mistake: "a flagged upload still reads usable true",
		API: docs(finalizeRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if d["scan_status"] == "flagged" {
				d["usable"] = true
			}
		}),
	},
	{
		Name: "finalize-duration-for-images", Rules: []string{"UPLOAD-029"},
		Mistake: "duration_ms is 0 for images instead of null",
		API: docs(finalizeRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			if d["kind"] == "image" {
				d["duration_ms"] = json.Number("0")
			}
		}),
	},
	{
		Name: "upload-list-route", Rules: []string{"UPLOAD-044"},
		Mistake: "GET /uploads lists the workspace's uploads",
		API: func(env *Env, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if route(http.MethodGet, "/uploads")(r) {
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write([]byte(`{"ok":true,"uploads":[],"next_cursor":null}`))
					return
				}
				next.ServeHTTP(w, r)
			})
		},
	},
	{
		Name: "fromurl-location-header", Rules: []string{"FROMURL-001"},
		Legal:   "POST /uploads/from-url: request and answer shapes: not shown",
		Mistake: "an import answers with a Location header",
		API:     setHeader(route(http.MethodPost, "/uploads/from-url"), http.StatusCreated, "Location", apiPrefix+"/assets/"+zeroAsset),
	},
	{
		Name: "fromurl-strips-unknown-keys", Rules: []string{"FROMURL-002"},
		Mistake: "unknown keys of the import body are ignored",
		API: rewriteBody(route(http.MethodPost, "/uploads/from-url"), func(d map[string]any) bool {
			changed := false
			for k := range d {
				if k != "url" {
					delete(d, k)
					changed = true
				}
			}
			return changed
		}),
	},
	{
		Name: "upload-max-bytes-of-video", Rules: []string{"UPLOAD-004"},
		Mistake: "max_bytes_for_kind is the largest ceiling (video) for every kind",
		API: docs(reserveRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			d["max_bytes_for_kind"] = json.Number("104857600")
		}),
	},
	{
		Name: "upload-kind-from-extension", Rules: []string{"UPLOAD-003"},
		Mistake: "kind comes from the filename's extension, image when it has none",
		API: docs(reserveRoute, success, func(_ *http.Request, _ *answer, d map[string]any) {
			d["kind"] = "image"
		}),
	},
	{
		Name: "upload-put-type-unchecked", Rules: []string{"UPLOAD-018"},
		Mistake: "the signed PUT accepts any content type (the declared one is not compared)",
		API: func(_ *Env, next http.Handler) http.Handler {
			var declared memo[string] // upload path -> declared content type
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case reserveRoute(r):
					a := serve(next, r)
					if d, ok := a.doc(); ok && a.status == http.StatusCreated {
						if u, ok := d["upload_url"].(string); ok {
							if i := strings.Index(u, "/upload-slots/"); i >= 0 {
								declared.put(strings.SplitN(u[i:], "?", 2)[0], stringOf(d["content_type"]))
							}
						}
					}
					a.send(w)
					return
				case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/upload-slots/"):
					if ct, ok := declared.get(r.URL.Path); ok && ct != "" {
						r.Header.Set("Content-Type", ct)
					}
				}
				next.ServeHTTP(w, r)
			})
		},
	},
	{
		Name: "upload-webm-kind-declared", Rules: []string{"UPLOAD-028"},
		Mistake: "finalize accepts a WebM under either WebM type and answers the kind of the declaration, not the kind of its tracks",
		API: func(env *Env, next http.Handler) http.Handler {
			var declared memo[string] // asset id -> kind of a declared WebM type
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case reserveRoute(r):
					a := serve(next, r)
					if d, ok := a.doc(); ok && a.status == http.StatusCreated {
						ct, _ := d["content_type"].(string)
						id, _ := d["asset_id"].(string)
						if strings.HasSuffix(ct, "/webm") {
							declared.put(id, strings.TrimSuffix(ct, "/webm"))
						}
					}
					a.send(w)
				case finalizeRoute(r):
					id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, apiPrefix+"/uploads/"), "/finalize")
					a := serve(next, r)
					d, _ := a.doc()
					if kind, ok := declared.get(id); ok && a.status == http.StatusBadRequest && errorCode(d) == "invalid_config" {
						a.status = http.StatusOK
						a.setDoc(map[string]any{"ok": true, "asset_id": id, "scan_status": "clean", "usable": true, "kind": kind,
							"duration_ms": nil, "next_action": "Use the asset_id in config."})
					}
					a.send(w)
				default:
					next.ServeHTTP(w, r)
				}
			})
		},
	},
}

// writeError answers the documented error envelope.
func writeError(w http.ResponseWriter, status int, code, message, field string) {
	e := map[string]any{"ok": false, "code": code, "message": message, "retryable": false, "credits_charged": 0}
	if field != "" {
		e["field"] = field
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// zeroAsset is a well-formed asset id that names nothing.
const zeroAsset = "ast_00000000000000000000000000000000"
