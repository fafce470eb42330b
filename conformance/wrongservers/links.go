package wrongservers

import (
	"encoding/json"
	"net/http"
	"net/url"
)

// linkServers are mistakes in file links and assets.
var linkServers = []Server{
	{
		Name: "link-no-attachment", Rules: []string{"LINK-006"},
		Mistake: "download=1 is ignored: no Content-Disposition: attachment",
		API:     setHeader(filesRoute, 0, "Content-Disposition", ""),
	},
	{
		Name: "link-octet-stream", Rules: []string{"LINK-007"},
		Legal:   "a file link's media type is not given (LINK-007 is the reference's SHOULD)",
		Mistake: "file links answer application/octet-stream",
		API:     setHeader(filesRoute, http.StatusOK, "Content-Type", "application/octet-stream"),
	},
	{
		Name: "asset-download-hour", Rules: []string{"ASSET-009"},
		Legal:   "Gaps in the endpoint shapes: GET /assets/{id}/download answer shape: not shown (the link itself still lasts 600 s)",
		Mistake: "the download link answer says expires_in_seconds 3600",
		API: docs(route(http.MethodGet, "/assets/[^/]+/download"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			d["expires_in_seconds"] = json.Number("3600")
		}),
	},
	{
		Name: "link-signature-ignored", Rules: []string{"LINK-005", "LINK-003"},
		Mistake: "file links are served from a cache keyed by path: the signature and expiry are not checked again",
		API: func(_ *Env, next http.Handler) http.Handler {
			var cache memo[*answer]
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !filesRoute(r) || r.Method != http.MethodGet {
					next.ServeHTTP(w, r)
					return
				}
				a := serve(next, r)
				if a.status == http.StatusOK {
					cache.put(r.URL.Path, a)
				} else if c, ok := cache.get(r.URL.Path); ok {
					a = c
				}
				a.send(w)
			})
		},
	},
	{
		Name: "asset-read-no-link-lifetime", Rules: []string{"ASSET-008", "LINK-001"},
		Legal:   "Limits: the 600 s output link lifetime is stated on generation and batch reads; the asset read's answer shape is not shown (issue 35)",
		Mistake: "the asset read leaves out output_urls_expire_in_seconds",
		API: docs(route(http.MethodGet, "/assets/[^/]+"), success, func(_ *http.Request, _ *answer, d map[string]any) {
			delete(d, "output_urls_expire_in_seconds")
		}),
	},
	{
		Name: "asset-download-link-permanent", Rules: []string{"ASSET-009"},
		Mistake: "a link from GET /assets/{id}/download is permanent (the interface's conflicting description): it serves the file after its 600 s",
		API: func(_ *Env, next http.Handler) http.Handler {
			var issued memo[bool]    // file link path -> issued by a download answer
			var served memo[*answer] // file link (path and query) -> its last good answer
			download := route(http.MethodGet, "/assets/[^/]+/download")
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case download(r):
					a := serve(next, r)
					if d, ok := a.doc(); ok && a.status == http.StatusOK {
						if s, ok := d["url"].(string); ok {
							if u, err := url.Parse(s); err == nil {
								issued.put(u.RequestURI(), true)
							}
						}
					}
					a.send(w)
				case filesRoute(r) && r.Method == http.MethodGet:
					if ok, _ := issued.get(r.URL.RequestURI()); !ok {
						next.ServeHTTP(w, r)
						return
					}
					a := serve(next, r)
					if a.status == http.StatusOK {
						served.put(r.URL.RequestURI(), a)
					} else if c, ok := served.get(r.URL.RequestURI()); ok {
						a = c
					}
					a.send(w)
				default:
					next.ServeHTTP(w, r)
				}
			})
		},
	},
}
