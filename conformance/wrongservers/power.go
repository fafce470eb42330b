package wrongservers

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// Wrong servers for the rules issue 37 found judged weakly: a check that ran only after a read
// of another rule had passed, only "when the row carries" a field the text says it carries, or only
// against the mock. Each entry breaks the weak rule in a way the suite missed before.

// bareDetail answers the capability detail with the capability's own fields cut to its id, nested
// under "capability" ({ok, capability: {capability_id}, config_schema, example_config}), after
// edit changed the schema. The detail's layout is not shown; a detail without status or category
// breaks the detail's own fields (CAP-019), which must not keep its schema from being judged.
func bareDetail(edit func(id string, schema map[string]any)) Wrap {
	return docs(capabilityDetail, success, func(_ *http.Request, _ *answer, d map[string]any) {
		id, _ := d["capability_id"].(string)
		s, example := obj(d, "config_schema"), d["example_config"]
		if s == nil || id == "" {
			return
		}
		edit(id, s)
		for k := range d {
			delete(d, k)
		}
		d["ok"] = true
		d["capability"] = map[string]any{"capability_id": id}
		d["config_schema"], d["example_config"] = s, example
	})
}

// rowField drops key from every generation list row (the fields of the row are not shown, but the
// text says the row carries what it cost, when it was made and its outputs' asset ids).
func rowField(key string) Wrap {
	return pageOf(generationList, "generations", func(_ *http.Request, _ map[string]any, list []any) []any {
		for _, v := range list {
			if row, ok := v.(map[string]any); ok {
				delete(row, key)
			}
		}
		return list
	})
}

// kindOfName is the kind a file name's extension says ("" when it says none).
func kindOfName(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".png", ".jpg", ".jpeg", ".webp", ".gif":
		return "image"
	case ".mp4", ".webm", ".mov":
		return "video"
	case ".wav", ".mp3", ".ogg":
		return "audio"
	}
	return ""
}

// kindFromName answers an upload's finalize and its asset read with the kind its filename's
// extension says, remembered from the reservation.
func kindFromName() Wrap {
	var names memo[string] // asset id -> the filename it was reserved under
	reserved := exchanges(route(http.MethodPost, "/uploads"), func(_ *Env, req map[string]any, a *answer) {
		d, ok := a.doc()
		name, _ := req["filename"].(string)
		if id, _ := d["asset_id"].(string); ok && id != "" && name != "" {
			names.put(id, name)
		}
	})
	byName := func(id string, rec map[string]any) {
		if name, ok := names.get(id); ok && kindOfName(name) != "" && rec["kind"] != nil {
			rec["kind"] = kindOfName(name)
		}
	}
	finalized := docs(route(http.MethodPost, "/uploads/[^/]+/finalize"), success, func(_ *http.Request, _ *answer, d map[string]any) {
		id, _ := d["asset_id"].(string)
		byName(id, d)
	})
	read := docs(route(http.MethodGet, "/assets/[^/]+"), success, func(r *http.Request, _ *answer, d map[string]any) {
		id := path.Base(r.URL.Path)
		if a := obj(d, "asset"); a != nil {
			byName(id, a)
		}
	})
	return chainWraps(reserved, finalized, read)
}

// publicFiles is the host the from-url wrong servers below take for a public address: the suite's
// file server is declared at it (files_url), and the proxy, which refuses loopback links as a real
// service's address guard does, forwards a link to it to the loopback port it stands for.
const publicFiles = "files.example"

// freePort is a loopback port free when the table is built, for a file server the suite is told to
// listen on (files_listen) so that its public URL (files_url) can name the port.
func freePort() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "0"
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// guardedImport stands for a real service's from-url: a link to a loopback host is refused (400
// invalid_config), a link to publicFiles is fetched from the loopback port it stands for, after
// edit changed it (the service's mistake). It returns the wrap and the check flags that declare
// the suite's file server at publicFiles.
func guardedImport(edit func(u *url.URL)) (Wrap, []string) {
	port := freePort()
	w := func(env *Env, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !route(http.MethodPost, "/uploads/from-url")(r) {
				next.ServeHTTP(w, r)
				return
			}
			d, ok := decodeObject(requestBody(r))
			if !ok {
				next.ServeHTTP(w, r)
				return
			}
			for k, v := range d {
				link, _ := v.(string)
				u, err := url.Parse(link)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
					continue
				}
				switch h := u.Hostname(); {
				case h == publicFiles:
					u.Host = "127.0.0.1:" + u.Port()
					edit(u)
					d[k] = u.String()
				case h == "localhost" || net.ParseIP(h).IsLoopback():
					refusal(http.StatusBadRequest, "invalid_config", false, map[string]any{"field": k}).send(w)
					return
				}
			}
			if b, err := json.Marshal(d); err == nil {
				setRequestBody(r, b)
			}
			next.ServeHTTP(w, r)
		})
	}
	return w, []string{"--files-listen", "127.0.0.1:" + port, "--files-url", "http://" + publicFiles + ":" + port}
}

var (
	sniffedImport, sniffedArgs = guardedImport(func(u *url.URL) {
		// Reads the bytes, never the served type: a page whose bytes look like media is imported.
		q := u.Query()
		if strings.HasPrefix(q.Get("type"), "text/html") {
			q.Del("type")
			u.RawQuery = q.Encode()
		}
	})
	prefixImport, prefixArgs = guardedImport(func(u *url.URL) {
		// Stops reading at the kind's ceiling and keeps what it read (the image at the file's start).
		if u.Path == "/big" {
			u.Path = "/f/image.png"
		}
	})
)

// replayOnRecovery is a server that, when a generation that sent generation.failed to an endpoint
// sends generation.completed there (a recovered render), first sends the failure again as a new
// delivery: it replays the generation's event history from its first event.
func replayOnRecovery(env *Env, next http.Handler) http.Handler {
	var failed memo[[]byte] // endpoint path + generation id -> the generation.failed body sent there
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := requestBody(r)
		d, ok := decodeObject(b)
		data := obj(d, "data")
		if !ok || data == nil {
			next.ServeHTTP(w, r)
			return
		}
		key := r.URL.Path + " " + stringOf(data["generation_id"])
		switch d["type"] {
		case "generation.failed":
			failed.put(key, b)
		case "generation.completed":
			if fb, had := failed.get(key); had {
				failed.put(key, nil)
				if fb != nil {
					again := r.Clone(context.Background())
					again.Header = r.Header.Clone()
					sendAgain(env, next, again, fb, func(hd http.Header, d map[string]any) {
						id := newDeliveryID()
						hd.Set("Webhook-Id", id)
						d["id"] = id
					})
				}
			}
		}
		setRequestBody(r, b)
		next.ServeHTTP(w, r)
	})
}

var powerServers = []Server{
	{
		Name: "evt-recovery-replays-failure", Rules: []string{"EVT-015"},
		Mistake: "a recovered render replays the generation's events from the first: generation.failed is sent again, as a new delivery, before generation.completed",
		Hooks:   replayOnRecovery,
	},
	{
		Name: "fromurl-guarded-imports-page", Rules: []string{"FROMURL-007"},
		Mistake: "from-url refuses loopback links as a real service must, and imports a link answering text/html whose bytes are a PNG (it sniffs the bytes and never reads the served type)",
		API:     sniffedImport, checkArgs: sniffedArgs,
	},
	{
		Name: "fromurl-guarded-imports-over-ceiling", Rules: []string{"FROMURL-008"},
		Mistake: "from-url refuses loopback links as a real service must, and imports a file over its kind's ceiling by keeping the bytes read up to the ceiling",
		API:     prefixImport, checkArgs: prefixArgs,
	},
	{
		Name: "err-balance-internal-generic", Rules: []string{"ERR-044"},
		Mistake: "an internal_error on the balance read carries the service's generic message (\"Something went wrong on our side.\"), which does not say the balance is fine",
		API: errorsWith(balanceRoute, "internal_error", func(_ *http.Request, _ *answer, e map[string]any) {
			e["message"] = "Something went wrong on our side. Try again."
		}),
	},
	{
		Name: "upload-kind-from-filename", Rules: []string{"UPLOAD-047"},
		Mistake: "finalize and the asset read give the kind the filename's extension says (PNG bytes named clip.mp4 read video), not the one measured from the bytes",
		API:     kindFromName(),
	},
	{
		Name: "gen-list-row-no-charge", Rules: []string{"GEN-054"},
		Mistake: "generation list rows leave out what the job cost (credits_charged): the row is built from the submit record, which has the estimate only",
		API:     rowField("credits_charged"),
	},
	{
		Name: "gen-list-row-no-created-at", Rules: []string{"GEN-038"},
		Mistake: "generation list rows carry updated_at and completed_at but not when the job was made",
		API:     rowField("created_at"),
	},
	{
		Name: "gen-list-row-no-asset-ids", Rules: []string{"GEN-054", "GEN-038"},
		Mistake: "generation list rows leave out the asset ids of the outputs",
		API:     rowField("output_asset_ids"),
	},
	{
		Name: "submit-workspace-in-flight-odd-status", Rules: []string{"SUBMIT-024", "ERR-015"},
		Mistake: "the refusal of another key's identical request names the running job with status in_progress, a status the text does not have (the own key's refusal is right)",
		API: errorsWith(submitRoute, "submission_in_flight", func(_ *http.Request, _ *answer, e map[string]any) {
			if f := obj(e, "in_flight"); f != nil && e["retry_after_seconds"] != nil {
				f["status"] = "in_progress"
			}
		}),
	},
	{
		Name: "cap-bare-detail-loose-schema", Rules: []string{"CAP-020"},
		Mistake: "the capability detail carries only the capability's id beside its schema, and the schema is served without additionalProperties: false",
		API:     bareDetail(func(_ string, s map[string]any) { delete(s, "additionalProperties") }),
	},
	{
		Name: "cap-bare-detail-priced-schema", Rules: []string{"CAP-021"},
		Mistake: "the capability detail carries only the capability's id beside its schema, and the schema carries the unit price (x-credits-per-unit)",
		API:     bareDetail(func(_ string, s map[string]any) { s["x-credits-per-unit"] = json.Number("12") }),
	},
	{
		Name: "cap-bare-detail-voice-in-schema", Rules: []string{"CAP-024"},
		Mistake: "the capability detail carries only the capability's id beside its schema, and the schema lists voice_id as a config property",
		API: bareDetail(func(_ string, s map[string]any) {
			if props, ok := s["properties"].(map[string]any); ok {
				props["voice_id"] = map[string]any{"type": "string"}
			}
		}),
	},
}

// rowMeaning are the reference's names of what the text says a generation list row carries without
// naming it ("not shown beyond the generation id, what it cost, when it was made and the asset ids
// of outputs"): the legal variant that drops every reference name keeps these, or it would not be
// legal.
var rowMeaning = []string{"credits_charged", "created_at", "output_asset_ids"}

// rowMeanings notes the rowMeaning fields of the generation list rows of d (an answer to r) and
// returns a func that puts them back.
func rowMeanings(r *http.Request, d map[string]any) func() {
	if !generationList(r) {
		return func() {}
	}
	type field struct {
		row map[string]any
		key string
		v   any
	}
	var kept []field
	for _, row := range rows(d, "generations") {
		for _, k := range rowMeaning {
			if v, has := row[k]; has {
				kept = append(kept, field{row, k, v})
			}
		}
	}
	return func() {
		for _, f := range kept {
			f.row[f.key] = f.v
		}
	}
}
