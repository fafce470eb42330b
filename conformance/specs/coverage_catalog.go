package specs

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// Specs of the catalogue rules no other spec file carries: estimates (file-based, length-priced,
// talking-actor and refused estimates), presets and templates, retired capabilities, deprecated
// schema fields, the actor cast by plan, and the id rules of config and catalogue ids.

// fileCap is an available capability whose example_config names an upload as a plain id array.
type fileCap struct {
	d     *framework.Response // the detail
	row   map[string]any      // the list row
	id    string
	field string // the config field holding the id array
	kind  string // image, video or audio, read from the field name ("" when it names none)
}

// fileKind guesses the kind of file a config field takes from its name.
func fileKind(field string) string {
	for _, k := range []string{"audio", "video", "image"} {
		if strings.Contains(field, k) {
			return k
		}
	}
	return ""
}

// plainFileCaps reads the details of the available capabilities and returns those whose
// example_config holds a plain array of upload ids, in catalogue order.
func plainFileCaps(ctx context.Context, c *framework.Client) []fileCap {
	GinkgoHelper()
	var out []fileCap
	for _, row := range catalogue(ctx, c) {
		if row["status"] != "available" {
			continue
		}
		id, _ := row["capability_id"].(string)
		d := c.Get(ctx, "/capabilities/"+id).ExpectOK(http.StatusOK)
		keys := make([]string, 0)
		ex := objectAt(d, "example_config")
		for k := range ex {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			arr, ok := ex[k].([]any)
			if !ok || len(arr) == 0 {
				continue
			}
			if str, ok := arr[0].(string); ok && strings.HasPrefix(str, "ast_") {
				out = append(out, fileCap{d: d, row: row, id: id, field: k, kind: fileKind(k)})
				break
			}
		}
	}
	return out
}

// sampleFor returns a file of kind to upload: a synthesized WAV of ms milliseconds for audio, the
// sample MP4 for video, the sample PNG otherwise.
func sampleFor(kind string, ms int) (name, ct string, data []byte) {
	switch kind {
	case "audio":
		return "voice.wav", "audio/wav", wavOf(ms)
	case "video":
		f, b := fixtures.Get("video.mp4")
		return f.Name, f.ContentType, b
	}
	f, b := fixtures.Get("image.png")
	return f.Name, f.ContentType, b
}

// withAsset returns a copy of config with every upload id in it (plain ids and file objects'
// assetId) replaced by id.
func withAsset(config map[string]any, id string) map[string]any {
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if strings.HasPrefix(x, "ast_") {
				return id
			}
			return x
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				out[k] = walk(e)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = walk(e)
			}
			return out
		}
		return v
	}
	return walk(clone(config)).(map[string]any)
}

// withoutUploads returns a copy of config without the fields that name an upload.
func withoutUploads(config map[string]any) map[string]any {
	out := clone(config)
	for k, v := range out {
		if namesUpload(v) {
			delete(out, k)
		}
	}
	return out
}

// pricedWithoutUpload returns the first available capability whose example_config names no upload
// and is priced (200), with that estimate, skipping the spec when there is none.
func pricedWithoutUpload(ctx context.Context, c *framework.Client) (*framework.Response, *framework.Response) {
	GinkgoHelper()
	for _, d := range availableDetails(ctx, c, 25) {
		cfg := objectAt(d, "example_config")
		if namesUpload(cfg) {
			continue
		}
		r := c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": cfg})
		if r.Status == http.StatusOK {
			return d, r
		}
	}
	Skip("unsupported: no available capability's example_config is priced without an upload")
	return nil, nil
}

// presetRows walks GET /presets.
func presetRows(ctx context.Context, c *framework.Client) []map[string]any {
	GinkgoHelper()
	rows, _ := walk(ctx, c, "/presets", "presets", 50, 20)
	return rows
}

// templatePreset picks an available preset that requires a template and has at least n live
// templates, and returns its detail and its template ids; it skips the spec when none has.
func templatePreset(ctx context.Context, c *framework.Client, n int) (*framework.Response, []string) {
	GinkgoHelper()
	for _, row := range presetRows(ctx, c) {
		if row["status"] != "available" || row["requires_template"] != true {
			continue
		}
		if total, _ := framework.AsInt(row["templates_total"]); total < int64(n) {
			continue
		}
		id := row["capability_id"].(string)
		t := c.Get(ctx, "/presets/"+id+"/templates").ExpectOK(http.StatusOK)
		var tpls []string
		for i, v := range t.Array("templates") {
			tpls = append(tpls, stringField(t, asObject(t, v, fmt.Sprintf("templates[%d]", i)), "template_id", "template"))
		}
		if len(tpls) >= n {
			return c.Get(ctx, "/capabilities/"+id).ExpectOK(http.StatusOK), tpls
		}
	}
	Skip(fmt.Sprintf("unsupported: the target lists no available preset requiring a template with %d live templates", n))
	return nil, nil
}

// readyConfig returns config with every upload it names replaced by a usable image uploaded in c's
// workspace (config unchanged when it names none).
func readyConfig(ctx context.Context, s *framework.Spec, c *framework.Client, config map[string]any) map[string]any {
	GinkgoHelper()
	if !namesUpload(config) {
		return clone(config)
	}
	name, ct, data := sampleFor("image", 0)
	id, _ := uploadClean(ctx, s, c, name, ct, data)
	return withAsset(config, id)
}

// deprecatedProps returns the path of every property schema marked deprecated: true in schema,
// with the schema and whether its parent lists it in required.
type deprecatedProp struct {
	path     string
	schema   map[string]any
	required bool
}

func deprecatedProps(schema map[string]any, path string) []deprecatedProp {
	var out []deprecatedProp
	var req []any
	req, _ = schema["required"].([]any)
	if props, ok := schema["properties"].(map[string]any); ok {
		for name, p := range props {
			ps, ok := p.(map[string]any)
			if !ok {
				continue
			}
			if ps["deprecated"] == true {
				out = append(out, deprecatedProp{path: path + "." + name, schema: ps, required: slices.Contains(req, any(name))})
			}
			out = append(out, deprecatedProps(ps, path+"."+name)...)
		}
	}
	if items, ok := schema["items"].(map[string]any); ok {
		out = append(out, deprecatedProps(items, path+"[]")...)
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		if list, ok := schema[k].([]any); ok {
			for i, e := range list {
				if m, ok := e.(map[string]any); ok {
					out = append(out, deprecatedProps(m, fmt.Sprintf("%s.%s[%d]", path, k, i))...)
				}
			}
		}
	}
	return out
}

var slugPattern = `^[a-z0-9][a-z0-9_-]*$`

func coverageCatalogSpecs(f *framework.Framework) {
	Describe("estimates: answer fields and accepted fields", func() {
		f.Rule("EST-005").It("seconds is present exactly when the capability's output has a duration (video, audio)", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			seen := map[bool]int{}
			for _, d := range availableDetails(ctx, c, 30) {
				cfg := objectAt(d, "example_config")
				if namesUpload(cfg) {
					continue
				}
				r := c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": cfg})
				if r.Status == http.StatusConflict {
					continue // not_priced: no answer fields to check
				}
				r.ExpectOK(http.StatusOK)
				timed := d.String("output_kind") == "video" || d.String("output_kind") == "audio"
				secs, has := r.Lookup("seconds")
				if timed {
					Expect(has).To(BeTrue(), d.String("capability_id")+" makes "+d.String("output_kind")+": the estimate carries seconds"+r.Describe())
					_, isNum := secs.(interface{ Float64() (float64, error) })
					Expect(isNum).To(BeTrue(), "seconds is a number"+r.Describe())
				} else {
					Expect(has).To(BeFalse(), d.String("capability_id")+" makes "+d.String("output_kind")+": seconds is absent, not null or 0"+r.Describe())
				}
				seen[timed]++
			}
			if seen[true] == 0 || seen[false] == 0 {
				Skip("unsupported: the target does not price both a timed and an untimed capability without an upload")
			}
		})

		f.Rule(rules("EST-009", "ERR-029")...).It("an estimate body accepts actor_id, actor_image_asset_id, voice_id and approved_voice_generation_id", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			actor, voice, _, _ := talkingCast(ctx, c)
			cfg := map[string]any{"script": "Hello from the estimate, " + randomHex(4) + "."}
			r := c.Post(ctx, "/estimates", map[string]any{"capability_id": "actor_ultra", "config": cfg, "actor_id": actor, "voice_id": voice}).ExpectOK(http.StatusOK)
			Expect(r.String("capability_id")).To(Equal("actor_ultra"), r.Describe())
			// The other two name things that do not exist: read as fields (404 for what they name),
			// never refused as unknown body keys.
			c.Post(ctx, "/estimates", map[string]any{"capability_id": "actor_ultra", "config": cfg, "actor_id": actor, "voice_id": voice,
				"actor_image_asset_id": "ast_" + randomHex(32)}).ExpectError(http.StatusNotFound, "not_found")
			c.Post(ctx, "/estimates", map[string]any{"capability_id": "actor_ultra", "config": cfg, "actor_id": actor, "voice_id": voice,
				"approved_voice_generation_id": "gen_" + randomHex(32)}).ExpectError(http.StatusNotFound, "not_found")
		})

		f.Rule(rules("EST-011", "ERR-035")...).Needs(framework.Spends).It("an estimate runs no content check: with a moderation block queued it prices, and the submit then takes the block", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			cfg := ttsConfig()
			s.QueueFault(ctx, "moderation_block", "tts", 1, "")
			r, need := estimateOf(ctx, sp.c, "tts", cfg, nil)
			Expect(r.String("capability_id")).To(Equal("tts"), r.Describe())
			// The block is still queued: the submit (which runs the content check) takes it.
			s.Spend(int(need))
			refuse(ctx, sp.c, submitBody("tts", cfg, need, nil), http.StatusUnprocessableEntity, "moderation_blocked")
		})

		f.Rule(rules("EST-013", "ERR-024")...).It("a config.count above the capability's ceiling is refused by the estimate, never clamped", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			checked := 0
			for _, row := range catalogue(ctx, c) {
				if row["status"] != "available" || checked == 3 {
					continue
				}
				d := c.Get(ctx, "/capabilities/"+row["capability_id"].(string)).ExpectOK(http.StatusOK)
				props, _ := objectAt(d, "config_schema")["properties"].(map[string]any)
				if _, has := props["count"]; !has {
					continue
				}
				cfg := cheapConfig(d)
				if namesUpload(cfg) {
					continue
				}
				ceiling := maxVariants(row)
				cfg["count"] = ceiling + 1
				r := c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": cfg}).
					ExpectError(http.StatusBadRequest, "invalid_config")
				if fld, has := r.Lookup("error.field"); has {
					Expect(fld).To(Equal("config.count"), r.Describe())
				}
				cfg["count"] = min(ceiling, 4)
				ok := c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": cfg})
				if ok.Status != http.StatusConflict { // a not_priced capability cannot show the price
					ok.ExpectOK(http.StatusOK)
				}
				checked++
			}
			if checked == 0 {
				Skip("unsupported: no available capability has a count in its config schema and an example without uploads")
			}
		})

		f.Rule(rules("EST-016", "ERR-024")...).It("a file-based capability estimated without its upload id answers 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			named := []string{"auto_caption", "change_voice", "remove_background", "resize", "speech_to_speech", "trim_video", "upscale"}
			checked := 0
			for _, row := range catalogue(ctx, c) {
				id, _ := row["capability_id"].(string)
				if row["status"] != "available" || !slices.Contains(named, id) {
					continue
				}
				d := c.Get(ctx, "/capabilities/"+id).ExpectOK(http.StatusOK)
				ex := objectAt(d, "example_config")
				c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": withoutUploads(ex)}).
					ExpectError(http.StatusBadRequest, "invalid_config")
				empty := clone(ex)
				for k, v := range empty {
					if namesUpload(v) {
						empty[k] = []any{}
					}
				}
				c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": empty}).
					ExpectError(http.StatusBadRequest, "invalid_config")
				checked++
			}
			if checked == 0 {
				Skip("unsupported: the target lists none of the file-based capabilities the interface names")
			}
		})
	})

	Describe("estimates naming uploads", func() {
		f.Rule(rules("EST-018", "ERR-029", "ID-016")...).It("an estimate naming another workspace's upload answers 404 not_found; the owner's own estimate prices it", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			caps := plainFileCaps(ctx, c)
			if len(caps) == 0 {
				Skip("unsupported: no available capability's example_config names an upload as a plain id array")
			}
			fc := caps[0]
			name, ct, data := sampleFor(fc.kind, 2000)
			theirs, _ := uploadClean(ctx, s, s.OtherClient(), name, ct, data)
			cfg := withAsset(objectAt(fc.d, "example_config"), theirs)
			c.Post(ctx, "/estimates", map[string]any{"capability_id": fc.id, "config": cfg}).ExpectError(http.StatusNotFound, "not_found")
			own := s.OtherClient().Post(ctx, "/estimates", map[string]any{"capability_id": fc.id, "config": cfg})
			Expect(own.Status).NotTo(Equal(http.StatusNotFound), "the owner's estimate finds the upload"+own.Describe())
		})

		f.Rule(rules("EST-019", "ERR-030")...).It("an estimate naming a reserved but not finalized upload answers 409 input_not_ready", func(ctx context.Context, s *framework.Spec) {
			c := uploadClient(ctx, s, 10)
			caps := plainFileCaps(ctx, c)
			if len(caps) == 0 {
				Skip("unsupported: no available capability's example_config names an upload as a plain id array")
			}
			fc := caps[0]
			name, ct, data := sampleFor(fc.kind, 2000)
			res := reserve(ctx, c, name, ct, len(data))
			id := res.String("asset_id")
			cfg := withAsset(objectAt(fc.d, "example_config"), id)
			c.Post(ctx, "/estimates", map[string]any{"capability_id": fc.id, "config": cfg}).ExpectError(http.StatusConflict, "input_not_ready")
			putFile(ctx, s, res.String("upload_url"), data, ct)
			c.Post(ctx, "/estimates", map[string]any{"capability_id": fc.id, "config": cfg}).ExpectError(http.StatusConflict, "input_not_ready")
			finalizeUpload(ctx, c, id).ExpectOK(http.StatusOK)
			c.Post(ctx, "/estimates", map[string]any{"capability_id": fc.id, "config": cfg}).ExpectOK(http.StatusOK)
		})

		f.Rule("EST-022").It("a capability priced by upload length measures it: seconds is the finalized duration_ms / 1000", func(ctx context.Context, s *framework.Spec) {
			c := uploadClient(ctx, s, 10)
			var fc *fileCap
			for _, x := range plainFileCaps(ctx, c) {
				if x.row["pricing_unit"] != "second" || (x.kind != "audio" && x.kind != "video") {
					continue
				}
				if fc == nil || (x.kind == "audio" && fc.kind != "audio") {
					x := x
					fc = &x
				}
			}
			if fc == nil {
				Skip("unsupported: no available capability priced by the second takes an audio or video upload as a plain id array")
			}
			lengths := []int{3250, 7600}
			if fc.kind == "video" {
				lengths = lengths[:1] // one sample video; its length is what it is
			}
			var seen []float64
			for _, ms := range lengths {
				name, ct, data := sampleFor(fc.kind, ms)
				id, fin := uploadClean(ctx, s, c, name, ct, data)
				dur := fin.Int("duration_ms")
				if fc.kind == "audio" {
					Expect(dur).To(BeNumerically("~", ms, 50), "finalize measures the synthesized WAV"+fin.Describe())
				}
				r := c.Post(ctx, "/estimates", map[string]any{"capability_id": fc.id, "config": withAsset(objectAt(fc.d, "example_config"), id)}).ExpectOK(http.StatusOK)
				secs, ok := r.Field("seconds").(interface{ Float64() (float64, error) })
				Expect(ok).To(BeTrue(), "seconds is a number"+r.Describe())
				v, err := secs.Float64()
				Expect(err).NotTo(HaveOccurred())
				Expect(v).To(BeNumerically("~", float64(dur)/1000, 0.0005), fmt.Sprintf("seconds is the upload's duration_ms %d / 1000", dur)+r.Describe())
				seen = append(seen, v)
			}
			if len(seen) == 2 {
				Expect(seen[0]).NotTo(Equal(seen[1]), "two uploads of different lengths price different seconds")
			}
		})

		f.Rule("EST-023").It("a script-priced actor_ultra estimate is a ceiling: is_ceiling true", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			actor, voice, _, _ := talkingCast(ctx, c)
			r := c.Post(ctx, "/estimates", map[string]any{"capability_id": "actor_ultra",
				"config": map[string]any{"script": "Meet the bottle that keeps coffee hot. Take " + randomHex(4) + "."}, "actor_id": actor, "voice_id": voice}).ExpectOK(http.StatusOK)
			Expect(r.Bool("is_ceiling")).To(BeTrue(), "a length read from the script is an upper bound"+r.Describe())
		})

		f.Rule("EST-024").It("an actor_ultra estimate with an uploaded audio id in config.voice_audio is exact: is_ceiling false", func(ctx context.Context, s *framework.Spec) {
			c := uploadClient(ctx, s, 10)
			actor, _, _, _ := talkingCast(ctx, c)
			id, fin := uploadClean(ctx, s, c, "voice.wav", "audio/wav", wavOf(4500))
			r := c.Post(ctx, "/estimates", map[string]any{"capability_id": "actor_ultra", "config": map[string]any{"voice_audio": []string{id}}, "actor_id": actor}).ExpectOK(http.StatusOK)
			Expect(r.Bool("is_ceiling")).To(BeFalse(), "a recording's length is known: the price is exact"+r.Describe())
			if v, has := r.Lookup("seconds"); has {
				n, _ := v.(interface{ Float64() (float64, error) })
				secs, _ := n.Float64()
				Expect(secs).To(BeNumerically("~", float64(fin.Int("duration_ms"))/1000, 0.0005), "the exact length is the recording's"+r.Describe())
			}
		})

		f.Rule(rules("EST-025", "ERR-024")...).It("an approved_voice_generation_id that is not a completed matching tts generation answers 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			c := sp.c
			actor, voice, _, otherVoice := talkingCast(ctx, c)
			script := "Coffee stays hot for twelve hours. Batch " + randomHex(4) + "."
			j := submit(ctx, s, c, "tts", map[string]any{"script": script}, map[string]any{"voice_id": voice})
			body := func(cfgScript, v string) map[string]any {
				return map[string]any{"capability_id": "actor_ultra", "config": map[string]any{"script": cfgScript},
					"actor_id": actor, "voice_id": v, "approved_voice_generation_id": j.id}
			}
			if s.HasControl() {
				// The service clock stands still: the tts generation has not completed yet.
				st := readGen(ctx, c, j.id).String("generation.status")
				if st != "completed" && st != "failed" {
					c.Post(ctx, "/estimates", body(script, voice)).ExpectError(http.StatusBadRequest, "invalid_config")
				}
			}
			done := s.Finish(ctx, c, j.id)
			Expect(done.String("generation.status")).To(Equal("completed"), done.Describe())
			c.Post(ctx, "/estimates", body(script+" And more.", voice)).ExpectError(http.StatusBadRequest, "invalid_config")
			c.Post(ctx, "/estimates", body(script, otherVoice)).ExpectError(http.StatusBadRequest, "invalid_config")
			ok := c.Post(ctx, "/estimates", body(script, voice)).ExpectOK(http.StatusOK)
			Expect(ok.String("capability_id")).To(Equal("actor_ultra"), "the matching approved voice prices"+ok.Describe())
		})
	})

	Describe("estimates refused by pricing", func() {
		f.Rule(rules("EST-020", "ERR-033")...).It("an estimate of a capability without a published price answers 409 not_priced, every other one prices", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			unpriced := 0
			for _, d := range availableDetails(ctx, c, 40) {
				cfg := objectAt(d, "example_config")
				if namesUpload(cfg) {
					continue
				}
				r := c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": cfg})
				if r.Status == http.StatusOK {
					r.ExpectOK(http.StatusOK)
					continue
				}
				r.ExpectError(http.StatusConflict, "not_priced")
				Expect(r.Bool("error.retryable")).To(BeFalse(), r.Describe())
				again := c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": cfg})
				again.ExpectError(http.StatusConflict, "not_priced") // a lasting state, not a passing failure
				unpriced++
			}
			if unpriced == 0 {
				Skip("unsupported: every available capability the suite can price without an upload has a published price")
			}
		})

		f.Rule(rules("EST-021", "ERR-042")...).It("an estimate while pricing fails answers 503 pricing_unavailable, retryable; the next one prices", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			d, _ := pricedWithoutUpload(ctx, c)
			id := d.String("capability_id")
			s.QueueFault(ctx, "pricing_unavailable", id, 1, "")
			r := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": objectAt(d, "example_config")}).
				ExpectError(http.StatusServiceUnavailable, "pricing_unavailable")
			Expect(r.Bool("error.retryable")).To(BeTrue(), r.Describe())
			c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": objectAt(d, "example_config")}).ExpectOK(http.StatusOK)
		})
	})

	Describe("retired capabilities", func() {
		retired := func(s *framework.Spec) string {
			id := s.RetiredCapabilityID()
			if id == "" {
				Skip("unsupported: retired capabilities are not listed, so the suite cannot find one; set retired_capability_id (--retired-capability-id) to a capability the target retired")
			}
			return id
		}
		f.Rule(rules("CAP-026", "ERR-016")...).It("a retired capability id answers 404 capability_unavailable with capability_status retired", func(ctx context.Context, s *framework.Spec) {
			id := retired(s)
			r := s.Client().Get(ctx, "/capabilities/"+id).ExpectError(http.StatusNotFound, "capability_unavailable")
			Expect(r.String("error.capability_status")).To(Equal("retired"), r.Describe())
		})

		f.Rule(rules("VER-010", "ERR-016")...).It("a retired capability is not listed and estimate and submit answer 404 capability_unavailable retired", func(ctx context.Context, s *framework.Spec) {
			id := retired(s)
			c := s.Client()
			Expect(ids(catalogue(ctx, c), "capability_id")).NotTo(ContainElement(id), "a retired capability leaves the list")
			r := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": map[string]any{}}).
				ExpectError(http.StatusNotFound, "capability_unavailable")
			Expect(r.String("error.capability_status")).To(Equal("retired"), r.Describe())
			r = refuse(ctx, c, submitBody(id, map[string]any{}, 100, nil), http.StatusNotFound, "capability_unavailable")
			Expect(r.String("error.capability_status")).To(Equal("retired"), r.Describe())
		})
	})

	Describe("presets and templates", func() {
		f.Rule("PRESET-009").It("presets are ordered by capability_id as in the capability list and paged by the last row's id", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			all := presetRows(ctx, c)
			if len(all) < 2 {
				Skip("unsupported: the target lists fewer than two presets")
			}
			got := ids(all, "capability_id")
			Expect(sort.StringsAreSorted(got)).To(BeTrue(), fmt.Sprintf("presets are ordered by capability_id: %v", got))
			small, pages := walk(ctx, c, "/presets", "presets", 1, 100)
			Expect(ids(small, "capability_id")).To(Equal(got), "pages of one list the same presets in the same order")
			for _, p := range pages {
				if p.cursor != nil {
					Expect(*p.cursor).To(Equal(p.rows[len(p.rows)-1]["capability_id"]), "next_cursor is the last row's capability_id"+p.r.Describe())
				}
			}
			first := getPage(ctx, c, "/presets", "presets", framework.Query("limit", "1"))
			Expect(first.cursor).NotTo(BeNil(), first.r.Describe())
			bare := getPage(ctx, c, "/presets", "presets", framework.Query("limit", "1"), framework.Query("cursor", *first.cursor))
			padded := getPage(ctx, c, "/presets", "presets", framework.Query("limit", "1"), framework.Query("cursor", " "+*first.cursor+"  "))
			Expect(ids(padded.rows, "capability_id")).To(Equal(ids(bare.rows, "capability_id")), "the cursor is trimmed"+padded.r.Describe())
			for _, cur := range []string{"", "  ", "preset_no_such_" + randomHex(6)} {
				p := getPage(ctx, c, "/presets", "presets", framework.Query("limit", "1"), framework.Query("cursor", cur))
				Expect(ids(p.rows, "capability_id")).To(Equal(ids(first.rows, "capability_id")), fmt.Sprintf("cursor %q restarts from the first page", cur)+p.r.Describe())
			}
			var listed []string
			for _, row := range catalogue(ctx, c) {
				if id, _ := row["capability_id"].(string); row["category"] == "preset" && slices.Contains(got, id) {
					listed = append(listed, id)
				}
			}
			var inList []string
			for _, id := range got {
				if slices.Contains(listed, id) {
					inList = append(inList, id)
				}
			}
			Expect(inList).To(Equal(listed), "presets come in the capability list's order")
		})

		f.Rule("PRESET-012").It("a template's preview_url is the same on two reads, unsigned, and fetched without a key", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			links := map[string]string{}
			for _, row := range presetRows(ctx, c) {
				for _, t := range row["templates"].([]any) {
					tm := t.(map[string]any)
					links[tm["template_id"].(string)] = tm["preview_url"].(string)
				}
			}
			if len(links) == 0 {
				Skip("unsupported: the target lists no preset template")
			}
			for _, row := range presetRows(ctx, c) {
				id := row["capability_id"].(string)
				r := c.Get(ctx, "/presets/"+id+"/templates").ExpectOK(http.StatusOK)
				for i, t := range r.Array("templates") {
					tm := asObject(r, t, fmt.Sprintf("templates[%d]", i))
					tid := stringField(r, tm, "template_id", "template")
					if before, ok := links[tid]; ok {
						Expect(tm["preview_url"]).To(Equal(before), "preview_url of "+tid+" is the same on every read"+r.Describe())
					}
				}
			}
			fetched := 0
			for tid, link := range links {
				if fetched == 2 {
					break
				}
				u, err := url.Parse(link)
				Expect(err).NotTo(HaveOccurred(), "preview_url of "+tid+" is a URL")
				Expect(u.IsAbs()).To(BeTrue(), "preview_url of "+tid+" is absolute")
				for name := range u.Query() {
					l := strings.ToLower(name)
					Expect(strings.Contains(l, "sig") || strings.Contains(l, "expire") || strings.Contains(l, "token") || strings.HasPrefix(l, "x-amz-")).
						To(BeFalse(), "preview_url of "+tid+" is not signed or expiring, but carries "+name)
				}
				res := s.Link(ctx, http.MethodGet, link)
				if res.Status >= 300 && res.Status < 400 && res.Header.Get("Location") != "" {
					next, err := u.Parse(res.Header.Get("Location"))
					Expect(err).NotTo(HaveOccurred(), res.Describe())
					res = s.Link(ctx, http.MethodGet, next.String())
				}
				Expect(res.Status).To(Equal(http.StatusOK), "a public preview is fetched without a key"+res.Describe())
				Expect(res.Body).NotTo(BeEmpty(), res.Describe())
				fetched++
			}
		})

		f.Rule(rules("PRESET-018", "ERR-024")...).Needs(framework.Uploads).It("a preset submit without config.template_id when the preset requires one answers 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d, tpls := templatePreset(ctx, sp.c, 1)
			id := d.String("capability_id")
			cfg := readyConfig(ctx, s, sp.c, objectAt(d, "example_config"))
			cfg["template_id"] = tpls[0]
			_, need := estimateOf(ctx, sp.c, id, cfg, nil)
			delete(cfg, "template_id")
			refuse(ctx, sp.c, submitBody(id, cfg, need, nil), http.StatusBadRequest, "invalid_config")
		})

		f.Rule(rules("PRESET-019", "ERR-029")...).Needs(framework.Uploads).It("a preset submit with a template_id that is not a template of the preset answers 404 not_found", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d, tpls := templatePreset(ctx, sp.c, 1)
			id := d.String("capability_id")
			cfg := readyConfig(ctx, s, sp.c, objectAt(d, "example_config"))
			cfg["template_id"] = tpls[0]
			_, need := estimateOf(ctx, sp.c, id, cfg, nil)
			strangers := []string{"captpl_" + randomHex(32)}
			for _, row := range presetRows(ctx, sp.c) {
				if row["capability_id"] == id {
					continue
				}
				for _, t := range row["templates"].([]any) {
					strangers = append(strangers, t.(map[string]any)["template_id"].(string))
					break
				}
			}
			for _, tpl := range strangers {
				cfg["template_id"] = tpl
				refuse(ctx, sp.c, submitBody(id, cfg, need, nil), http.StatusNotFound, "not_found")
			}
		})

		f.Rule(rules("PRESET-021", "ERR-017")...).It("a preset submit on a preset that needs a higher plan answers 403 required_plan naming it", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			var row map[string]any
			for _, p := range presetRows(ctx, sp.c) {
				if p["status"] == "requires_plan" {
					row = p
					break
				}
			}
			if row == nil {
				Skip("unsupported: the target lists no preset that needs a higher plan than the run's workspace")
			}
			id := row["capability_id"].(string)
			plan, _ := row["required_plan"].(string)
			cfg := map[string]any{}
			need := int64(500)
			if s.HasControl() {
				// Read the schema and the price where the plan allows them.
				ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{Plan: plan})
				hc, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
				d := hc.Get(ctx, "/capabilities/"+id).ExpectOK(http.StatusOK)
				cfg = objectAt(d, "example_config")
				if t := row["templates"].([]any); len(t) > 0 {
					cfg["template_id"] = t[0].(map[string]any)["template_id"]
				}
				_, need = estimateOf(ctx, hc, id, readyConfig(ctx, s, hc, cfg), nil)
				cfg = readyConfig(ctx, s, sp.c, cfg)
			}
			r := refuse(ctx, sp.c, submitBody(id, cfg, need, nil), http.StatusForbidden, "required_plan")
			Expect(r.String("error.required_plan")).To(Equal(plan), "the refusal names the plan the preset row names"+r.Describe())
		})

		f.Rule("PRESET-022", "PRESET-025").Needs(framework.Uploads).It("a preset is estimated like any capability, and two templates of it cost the same", func(ctx context.Context, s *framework.Spec) {
			c := uploadClient(ctx, s, 10)
			d, tpls := templatePreset(ctx, c, 2)
			id := d.String("capability_id")
			cfg := readyConfig(ctx, s, c, objectAt(d, "example_config"))
			var answers []*framework.Response
			for _, tpl := range tpls[:2] {
				cfg["template_id"] = tpl
				r := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": cfg}).ExpectOK(http.StatusOK)
				Expect(r.String("capability_id")).To(Equal(id), r.Describe())
				answers = append(answers, r)
			}
			a, b := answers[0], answers[1]
			Expect(b.Field("credits")).To(Equal(a.Field("credits")), "no per-template price: the same credits"+b.Describe())
			Expect(b.Int("max_credits_needed")).To(Equal(a.Int("max_credits_needed")), b.Describe())
		})

		f.Rule("PRESET-023").It("a preset that requires a template lists template_id in its config_schema's required", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			checked := 0
			for _, row := range presetRows(ctx, c) {
				if row["status"] != "available" || row["requires_template"] != true {
					continue
				}
				d := c.Get(ctx, "/capabilities/"+row["capability_id"].(string)).ExpectOK(http.StatusOK)
				req, _ := objectAt(d, "config_schema")["required"].([]any)
				Expect(req).To(ContainElement("template_id"), "requires_template true: template_id is required"+d.Describe())
				checked++
			}
			if checked == 0 {
				Skip("unsupported: the target lists no available preset that requires a template")
			}
		})

		f.Rule("PRESET-024").It("no endpoint creates presets or templates", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			r := c.Post(ctx, "/presets", map[string]any{"name": "mine"}, framework.Invalid())
			Expect(r.Status).To(BeElementOf(http.StatusNotFound, http.StatusMethodNotAllowed), r.Describe())
			id := "preset_conformance"
			if rows := presetRows(ctx, c); len(rows) > 0 {
				id = rows[0]["capability_id"].(string)
			}
			r = c.Post(ctx, "/presets/"+id+"/templates", map[string]any{"name": "mine"}, framework.Invalid())
			Expect(r.Status).To(BeElementOf(http.StatusNotFound, http.StatusMethodNotAllowed), r.Describe())
		})
	})

	Describe("versioning of schemas", func() {
		f.Rule("VER-006").It("every property marked deprecated in a config_schema is optional, has no default and has a description", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			for _, d := range availableDetails(ctx, c, 40) {
				for _, p := range deprecatedProps(objectAt(d, "config_schema"), d.String("capability_id")) {
					Expect(p.required).To(BeFalse(), p.path+" is deprecated: it is optional"+d.Describe())
					Expect(p.schema).NotTo(HaveKey("default"), p.path+" is deprecated: it has no default"+d.Describe())
					desc, _ := p.schema["description"].(string)
					Expect(desc).NotTo(BeEmpty(), p.path+" is deprecated: its description names the new field"+d.Describe())
				}
			}
		})
	})

	Describe("cast by plan", func() {
		f.Rule("ACTOR-014").It("a business workspace lists at least the actors a pro workspace lists", func(ctx context.Context, s *framework.Spec) {
			list := func(plan string) []string {
				ws := s.NewWorkspace(ctx, framework.WorkspaceOptions{Plan: plan})
				c, _ := ws.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read"}})
				rows, _ := walk(ctx, c, "/actors", "actors", 48, 40)
				return ids(rows, "actor_id")
			}
			pro, business := list("pro"), list("business")
			if len(pro) == 0 {
				Skip("unsupported: a pro workspace lists no actor")
			}
			Expect(business).To(ContainElements(pro), "every actor a pro workspace sees, a business workspace sees")
			Expect(len(business)).To(BeNumerically(">=", len(pro)))
		})
	})

	Describe("catalogue and config ids", func() {
		f.Rule("ID-012").It("capability ids, workflow template keys and node ids are unprefixed slugs", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			for _, id := range ids(catalogue(ctx, c), "capability_id") {
				Expect(id).To(MatchRegexp(slugPattern), "capability id "+id+" is a slug")
			}
			r := c.Get(ctx, "/workflows/templates").ExpectOK(http.StatusOK)
			for i, t := range r.Array("templates") {
				tm := asObject(r, t, fmt.Sprintf("templates[%d]", i))
				Expect(stringField(r, tm, "template_key", "template")).To(MatchRegexp(slugPattern), r.Describe())
				nodes, _ := tm["nodes"].([]any)
				for j, n := range nodes {
					nm := asObject(r, n, fmt.Sprintf("templates[%d].nodes[%d]", i, j))
					Expect(stringField(r, nm, "node_id", "node")).To(MatchRegexp(slugPattern), r.Describe())
					Expect(stringField(r, nm, "capability_id", "node")).To(MatchRegexp(slugPattern), r.Describe())
				}
			}
		})

		f.Rule(rules("ID-013", "ERR-024")...).It("a malformed asset id inside config answers 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			bad := []string{"ast_" + strings.ToUpper(randomHex(32)), "ast_" + randomHex(31), "AST_" + randomHex(32), "asset_" + randomHex(32), "gen_" + randomHex(32), "ast_" + randomHex(32) + " "}
			checked := 0
			if caps := plainFileCaps(ctx, c); len(caps) > 0 {
				fc := caps[0]
				for _, id := range bad {
					r := c.Post(ctx, "/estimates", map[string]any{"capability_id": fc.id, "config": withAsset(objectAt(fc.d, "example_config"), id)}).
						ExpectError(http.StatusBadRequest, "invalid_config")
					if fld, has := r.Lookup("error.field"); has {
						Expect(fld).To(HavePrefix("config."), r.Describe())
					}
				}
				checked++
			}
			// A file object's assetId, as image and video models take them.
			for _, d := range availableDetails(ctx, c, 30) {
				ex := objectAt(d, "example_config")
				hasObject := false
				for _, v := range ex {
					if arr, ok := v.([]any); ok && len(arr) > 0 {
						if m, ok := arr[0].(map[string]any); ok && m["assetId"] != nil {
							hasObject = true
						}
					}
				}
				if !hasObject {
					continue
				}
				for _, id := range bad[:3] {
					c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": withAsset(ex, id)}).
						ExpectError(http.StatusBadRequest, "invalid_config")
				}
				checked++
				break
			}
			if checked == 0 {
				Skip("unsupported: no available capability's example_config names an upload")
			}
		})
	})
}
