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
}
