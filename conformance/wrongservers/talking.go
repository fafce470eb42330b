package wrongservers

import "net/http"

// talkingServers are mistakes in talking actors.
var talkingServers = []Server{
	{
		Name: "talk-alias-accepted", Rules: []string{"TALK-011"},
		Mistake: "talking_actor is accepted as an alias of actor_ultra",
		API: chainWraps(
			rewriteBody(route(http.MethodPost, "/(estimates|generations)"), func(d map[string]any) bool {
				if d["capability_id"] == "talking_actor" {
					d["capability_id"] = "actor_ultra"
					return true
				}
				return false
			}),
			requests(route(http.MethodGet, "/capabilities/talking_actor"), func(_ *Env, r *http.Request) {
				r.URL.Path = apiPrefix + "/capabilities/actor_ultra"
				r.URL.RawPath = ""
			}),
		),
	},
	{
		Name: "talk-aspect-ratio-ignored", Rules: []string{"TALK-010"},
		Mistake: "actor_ultra silently drops config.aspect_ratio instead of refusing it",
		API: rewriteBody(route(http.MethodPost, "/(estimates|generations)"), func(d map[string]any) bool {
			c := obj(d, "config")
			if d["capability_id"] == "actor_ultra" && c != nil && c["aspect_ratio"] != nil {
				delete(c, "aspect_ratio")
				return true
			}
			return false
		}),
	},
	{
		Name: "talk-voice-conflict-refused", Rules: []string{"TALK-007"},
		Mistake: "a talking actor submit whose body voice_id and config.voiceId differ is refused as a conflict, instead of the body's voice winning",
		API: guard(spendCall, func(_ *Env, _ http.Handler, r *http.Request) *answer {
			d, _ := decodeObject(requestBody(r))
			c := obj(d, "config")
			if d["capability_id"] == "actor_ultra" && d["voice_id"] != nil && c["voiceId"] != nil && d["voice_id"] != c["voiceId"] {
				return refusal(http.StatusBadRequest, "invalid_config", false, map[string]any{"field": "voice_id"})
			}
			return nil
		}),
	},
	{
		Name: "talk-no-voice-first-listed", Rules: []string{"TALK-009"},
		Mistake: "with no voice given and an actor without a default voice, the first listed voice is taken instead of refusing",
		API: func(env *Env, next http.Handler) http.Handler {
			return rewriteBodyWith(spendCall, func(r *http.Request, d map[string]any) bool {
				c := obj(d, "config")
				if d["capability_id"] != "actor_ultra" || d["voice_id"] != nil || c["voiceId"] != nil || c["voice_audio"] != nil || d["actor_id"] == nil {
					return false
				}
				hasDefault := firstRow(next, r, "/actors?limit=48", "actors", "default_voice_id", func(a map[string]any) bool { return a["actor_id"] == d["actor_id"] })
				if hasDefault != nil {
					return false
				}
				if v := firstRow(next, r, "/voices", "voices", "voice_id", nil); v != nil {
					d["voice_id"] = v
					return true
				}
				return false
			})(env, next)
		},
	},
	{
		Name: "talk-foreign-actor-accepted", Rules: []string{"SUBMIT-035"},
		Mistake: "an actor of another workspace is accepted on a submit (the actor id is looked up without its workspace)",
		API: func(env *Env, next http.Handler) http.Handler {
			var owned memo[string]
			inner := rewriteBodyWith(spendCall, func(r *http.Request, d map[string]any) bool {
				if !foreign(env, &owned, r, d["actor_id"]) {
					return false
				}
				if a := firstRow(next, r, "/actors?limit=48", "actors", "actor_id", func(a map[string]any) bool { return a["is_platform"] == true }); a != nil {
					d["actor_id"] = a
					return true
				}
				return false
			})(env, next)
			return ownedByWorkspace("actors", "actor_id", &owned, next, inner)
		},
	},
	{
		Name: "talk-foreign-voice-accepted", Rules: []string{"SUBMIT-036"},
		Mistake: "a cloned voice of another workspace is accepted on a submit",
		API: func(env *Env, next http.Handler) http.Handler {
			var owned memo[string]
			inner := rewriteBodyWith(spendCall, func(r *http.Request, d map[string]any) bool {
				if !foreign(env, &owned, r, d["voice_id"]) {
					return false
				}
				if v := firstRow(next, r, "/voices", "voices", "voice_id", func(v map[string]any) bool { return v["is_platform"] == true }); v != nil {
					d["voice_id"] = v
					return true
				}
				return false
			})(env, next)
			return ownedByWorkspace("voices", "voice_id", &owned, next, inner)
		},
	},
	{
		Name: "talk-foreign-tts-forbidden", Rules: []string{"ID-016"},
		Mistake: "another workspace's tts generation as approved_voice_generation_id answers 403 forbidden",
		API: func(env *Env, next http.Handler) http.Handler {
			var owner memo[string] // generation id -> workspace of the key that submitted it
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !submitRoute(r) {
					next.ServeHTTP(w, r)
					return
				}
				d, _ := decodeObject(requestBody(r))
				ws := env.workspaceOf(presented(r))
				if g, ok := d["approved_voice_generation_id"].(string); ok {
					if o, known := owner.get(g); known && o != ws {
						refusal(http.StatusForbidden, "forbidden", false, nil).send(w)
						return
					}
				}
				a := serve(next, r)
				if doc, ok := a.doc(); ok && a.status == http.StatusCreated {
					if id, ok := doc["generation_id"].(string); ok {
						owner.put(id, ws)
					}
				}
				a.send(w)
			})
		},
	},
}

// ownedByWorkspace remembers the ids a control call under /workspaces/{id}/<what> creates (the
// answer's idKey), with their workspace, then hands every call to inner.
func ownedByWorkspace(what, idKey string, owned *memo[string], next, inner http.Handler) http.Handler {
	m := controlRoute(http.MethodPost, "/workspaces/[^/]+/"+what)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !m(r) {
			inner.ServeHTTP(w, r)
			return
		}
		a := serve(next, r)
		if d, ok := a.doc(); ok && a.status == http.StatusCreated {
			if id, ok := d[idKey].(string); ok {
				owned.put(id, workspaceInPath(r))
			}
		}
		a.send(w)
	})
}

// foreign reports whether id was made in a workspace other than the one of the key r presents.
func foreign(env *Env, owned *memo[string], r *http.Request, id any) bool {
	s, _ := id.(string)
	ws, ok := owned.get(s)
	if !ok {
		ws, ok = env.ownerOf(s) // a pre-made one of the profile (modes p and t)
	}
	return ok && ws != env.workspaceOf(presented(r))
}

// firstRow is the value at key of the first row under list of GET path, read with r's key, whose
// filter passes (nil: any row).
func firstRow(next http.Handler, r *http.Request, path, list, key string, filter func(map[string]any) bool) any {
	_, d := callAs(next, r, http.MethodGet, apiPrefix+path, presented(r), nil)
	for _, row := range rows(d, list) {
		if filter == nil || filter(row) {
			return row[key]
		}
	}
	return nil
}

var spendCall = route(http.MethodPost, "/(estimates|generations)")
