package specs

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// Specs of the talking-actor limits: voice lengths per actor, the script-only actor's refusals, a
// recording instead of tts and an uploaded face.

// uploadRecording uploads seconds of audio as audio/wav and returns its asset id. It checks the
// service measured the length it was sent (within 50 ms).
func uploadRecording(ctx context.Context, s *framework.Spec, c *framework.Client, seconds int) string {
	GinkgoHelper()
	id, fin := uploadClean(ctx, s, c, fmt.Sprintf("voice-%ds.wav", seconds), "audio/wav", wavOf(seconds*1000))
	Expect(fin.String("kind")).To(Equal("audio"), fin.Describe())
	Expect(fin.Int("duration_ms")).To(BeNumerically("~", seconds*1000, 50), "the service measures the recording's length"+fin.Describe())
	return id
}

// uploadFace uploads the sample PNG and returns its asset id.
func uploadFace(ctx context.Context, s *framework.Spec, c *framework.Client) string {
	GinkgoHelper()
	f, data := fixtures.Get("image.png")
	id, _ := uploadClean(ctx, s, c, f.Name, f.ContentType, data)
	return id
}

// schemaProps returns the properties of a capability detail's config_schema.
func schemaProps(d *framework.Response) map[string]any {
	GinkgoHelper()
	props, _ := objectAt(d, "config_schema")["properties"].(map[string]any)
	return props
}

// hasVoiceField reports whether a config schema takes a voice (a voice id or a recording).
func hasVoiceField(props map[string]any) bool {
	_, voiceID := props["voiceId"]
	_, audio := props["voice_audio"]
	return voiceID || audio
}

// scriptOnlyActor finds the script-only actor black-box: an available avatar capability other
// than actor_ultra whose config schema has a script and no voice field, and which estimates with
// only a script. It skips the spec when the target has none.
func scriptOnlyActor(ctx context.Context, c *framework.Client) *framework.Response {
	GinkgoHelper()
	for _, row := range catalogue(ctx, c) {
		if row["status"] != "available" || row["category"] != "avatar" || row["capability_id"] == "actor_ultra" {
			continue
		}
		d := c.Get(ctx, "/capabilities/"+row["capability_id"].(string)).ExpectOK(http.StatusOK)
		props := schemaProps(d)
		if _, ok := props["script"]; !ok || hasVoiceField(props) {
			continue
		}
		cfg := map[string]any{"script": scriptOf(150)}
		if c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": cfg}).Status == http.StatusOK {
			return d
		}
	}
	Skip("unsupported: the target lists no script-only actor (an available avatar capability other than actor_ultra with a script and no voice field)")
	return nil
}

// otherAudioActor finds the other audio-driven actor: an available avatar capability other than
// actor_ultra whose config schema takes a voice (voiceId or voice_audio). It skips the spec when
// the target has none.
func otherAudioActor(ctx context.Context, c *framework.Client) *framework.Response {
	GinkgoHelper()
	for _, row := range catalogue(ctx, c) {
		if row["status"] != "available" || row["category"] != "avatar" || row["capability_id"] == "actor_ultra" {
			continue
		}
		d := c.Get(ctx, "/capabilities/"+row["capability_id"].(string)).ExpectOK(http.StatusOK)
		if hasVoiceField(schemaProps(d)) {
			return d
		}
	}
	Skip("unsupported: the target lists no audio-driven actor besides actor_ultra")
	return nil
}

// scriptOf returns a plain script of exactly n characters (whole words, then padding), unique to
// the call.
func scriptOf(n int) string {
	words := []string{"fresh", "coffee", "every", "morning", "keeps", "you", "going", "through", "the", "long", "day"}
	var b strings.Builder
	b.WriteString("Take " + randomHex(6))
	for i := 0; b.Len() < n; i++ {
		b.WriteString(" " + words[i%len(words)])
	}
	out := []byte(b.String()[:n])
	if out[n-1] == ' ' {
		out[n-1] = '.'
	}
	return string(out)
}

// maxLength is the maxLength of a string property (fallback when it has none).
func maxLength(props map[string]any, name string, fallback int) int {
	p, _ := props[name].(map[string]any)
	if n, ok := framework.AsInt(p["maxLength"]); ok {
		return int(n)
	}
	return fallback
}

// needOr estimates a request and returns max_credits_needed, or fallback when the estimate does
// not answer 200 (a service may refuse an out-of-bounds request at estimate time too).
func needOr(ctx context.Context, c *framework.Client, capID string, cfg, extra map[string]any, fallback int64) int64 {
	GinkgoHelper()
	body := map[string]any{"capability_id": capID, "config": cfg}
	for k, v := range extra {
		body[k] = v
	}
	r := c.Post(ctx, "/estimates", body)
	if r.Status != http.StatusOK {
		return fallback
	}
	return r.Int("max_credits_needed")
}

// liftCaps raises the spender's per-generation and daily caps and its balance (through control),
// so that a long recording is judged on its length, not on the spend caps that come first.
func liftCaps(ctx context.Context, s *framework.Spec, sp spender) {
	GinkgoHelper()
	s.SetLimits(ctx, sp.ws.ID, map[string]any{"per_generation_credits": 1000000, "daily_credits": 1000000})
	s.SetCredits(ctx, sp.ws.ID, 1000000)
}

func coverageTalkingSpecs(f *framework.Framework) {
	Describe("talking actor limits", func() {
		f.Rule(rules("TALK-012", "SUBMIT-031", "ERR-024")...).Needs(framework.Control, framework.Uploads).It("actor_ultra refuses a recording of 60 seconds or more with 400 invalid_config, holding nothing", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			liftCaps(ctx, s, sp)
			actor, _, _, _ := talkingCast(ctx, sp.c)
			for _, secs := range []int{60, 75} {
				rec := uploadRecording(ctx, s, sp.c, secs)
				cfg := map[string]any{"voice_audio": []any{rec}}
				extra := map[string]any{"actor_id": actor}
				need := needOr(ctx, sp.c, "actor_ultra", cfg, extra, 100000)
				refuse(ctx, sp.c, submitBody("actor_ultra", cfg, need, extra), http.StatusBadRequest, "invalid_config")
			}
		})

		f.Rule(rules("TALK-013", "ERR-024")...).Needs(framework.Spends).It("the other audio-driven actor refuses an approved voice under 5 or over 14.8 seconds and accepts one in between", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := otherAudioActor(ctx, sp.c)
			id := d.String("capability_id")
			actor, voice, _, _ := talkingCast(ctx, sp.c)
			limit := maxLength(schemaProps(d), "script", 400)
			// tts speaks each script; its output's duration_ms is the voice length the actor judges.
			speak := func(script string) (string, int64) {
				GinkgoHelper()
				j := submit(ctx, s, sp.c, "tts", map[string]any{"script": script}, map[string]any{"voice_id": voice})
				w := s.Finish(ctx, sp.c, j.id)
				Expect(w.String("generation.status")).To(Equal("completed"), w.Describe())
				ms, ok := framework.AsInt(w.Field("generation.outputs.0.duration_ms"))
				Expect(ok).To(BeTrue(), "a tts output carries duration_ms"+w.Describe())
				return j.id, ms
			}
			body := func(script, approved string) (map[string]any, map[string]any) {
				return map[string]any{"script": script}, map[string]any{"actor_id": actor, "voice_id": voice, "approved_voice_generation_id": approved}
			}
			short := "Hi there " + randomHex(4) + "."
			shortID, shortMS := speak(short)
			Expect(shortMS).To(BeNumerically("<", 5000), "a script of %d characters speaks under 5 seconds", len(short))
			cfg, extra := body(short, shortID)
			refuse(ctx, sp.c, submitBody(id, cfg, needOr(ctx, sp.c, id, cfg, extra, 1000), extra), http.StatusBadRequest, "invalid_config")

			long := scriptOf(limit)
			longID, longMS := speak(long)
			if longMS <= 14800 {
				Skip(fmt.Sprintf("unsupported: the longest script %s takes (%d characters) speaks %d ms, not over 14.8 s", id, limit, longMS))
			}
			cfg, extra = body(long, longID)
			refuse(ctx, sp.c, submitBody(id, cfg, needOr(ctx, sp.c, id, cfg, extra, 1000), extra), http.StatusBadRequest, "invalid_config")

			mid := scriptOf(min(150, limit))
			midID, midMS := speak(mid)
			Expect(midMS).To(And(BeNumerically(">=", 5000), BeNumerically("<=", 14800)), "a script of 150 characters speaks 5 to 14.8 seconds")
			cfg, extra = body(mid, midID)
			j := submit(ctx, s, sp.c, id, cfg, extra)
			Expect(j.id).To(MatchRegexp(genIDPattern), j.r.Describe())
		})

		Describe("the script-only actor", func() {
			// ok is a config inside the bounds (about 10 seconds at any usual speaking rate).
			ok := func() map[string]any { return map[string]any{"script": scriptOf(150)} }

			f.Rule(rules("TALK-014", "ERR-024")...).It("refuses a script far under 4 or far over 30 seconds with 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
				c := s.Client()
				d := scriptOnlyActor(ctx, c)
				id := d.String("capability_id")
				short := map[string]any{"script": "Hi."}
				refuse(ctx, c, submitBody(id, short, needOr(ctx, c, id, short, nil, 1000), nil), http.StatusBadRequest, "invalid_config")
				long := map[string]any{"script": scriptOf(maxLength(schemaProps(d), "script", 1500))}
				est := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": long})
				if est.Status == http.StatusOK {
					if secs, has := est.Lookup("seconds"); has {
						if n, isNum := secs.(json.Number); isNum {
							if v, err := n.Float64(); err == nil && v <= 30 {
								Skip(fmt.Sprintf("unsupported: the longest script %s takes measures %.1f s, not over 30 s", id, v))
							}
						}
					}
				}
				refuse(ctx, c, submitBody(id, long, needOr(ctx, c, id, long, nil, 1000), nil), http.StatusBadRequest, "invalid_config")
			})

			f.Rule("TALK-014").Needs(framework.Spends).It("accepts a script of about 10 seconds", func(ctx context.Context, s *framework.Spec) {
				sp := newSpender(ctx, s)
				d := scriptOnlyActor(ctx, sp.c)
				j := submit(ctx, s, sp.c, d.String("capability_id"), ok(), nil)
				Expect(j.r.Bool("replay")).To(BeFalse(), j.r.Describe())
			})

			f.Rule(rules("TALK-015", "ERR-024")...).It("refuses approved_voice_generation_id with 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
				c := s.Client()
				d := scriptOnlyActor(ctx, c)
				id := d.String("capability_id")
				cfg := ok()
				_, need := estimateOf(ctx, c, id, cfg, nil)
				r := refuse(ctx, c, submitBody(id, cfg, need, map[string]any{"approved_voice_generation_id": "gen_" + randomHex(32)}), http.StatusBadRequest, "invalid_config")
				expectField(r, "approved_voice_generation_id")
			})

			f.Rule(rules("TALK-016", "ERR-024")...).It("refuses config.aspect_ratio with 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
				c := s.Client()
				d := scriptOnlyActor(ctx, c)
				id := d.String("capability_id")
				cfg := ok()
				_, need := estimateOf(ctx, c, id, cfg, nil)
				cfg["aspect_ratio"] = "9:16"
				expectField(refuse(ctx, c, submitBody(id, cfg, need, nil), http.StatusBadRequest, "invalid_config"), "config.aspect_ratio")
			})

			f.Rule(rules("TALK-017", "ERR-024")...).It("refuses variants with 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
				c := s.Client()
				d := scriptOnlyActor(ctx, c)
				id := d.String("capability_id")
				cfg := ok()
				_, need := estimateOf(ctx, c, id, cfg, nil)
				expectField(refuse(ctx, c, submitBody(id, cfg, need*2, map[string]any{"variants": 2}), http.StatusBadRequest, "invalid_config"), "variants")
			})
		})

		Describe("a recording instead of tts", func() {
			f.Rule("TALK-019").Needs(framework.Spends, framework.Uploads).It("actor_ultra with config.voice_audio, no script and no voice_id, is accepted and renders", func(ctx context.Context, s *framework.Spec) {
				sp := newSpender(ctx, s)
				actor, _, _, _ := talkingCast(ctx, sp.c)
				rec := uploadRecording(ctx, s, sp.c, 3)
				j := submit(ctx, s, sp.c, "actor_ultra", map[string]any{"voice_audio": []any{rec}}, map[string]any{"actor_id": actor})
				Expect(j.r.String("output_kind")).To(Equal("video"), j.r.Describe())
				w := s.Finish(ctx, sp.c, j.id)
				Expect(w.String("generation.status")).To(Equal("completed"), w.Describe())
			})

			f.Rule(rules("TALK-020", "ERR-024")...).Needs(framework.Uploads).It("config.voice_audio with a script or a voice_id answers 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
				c := uploadClient(ctx, s, 10)
				actor, voice, _, _ := talkingCast(ctx, c)
				rec := uploadRecording(ctx, s, c, 3)
				base := map[string]any{"voice_audio": []any{rec}}
				_, need := estimateOf(ctx, c, "actor_ultra", base, map[string]any{"actor_id": actor})
				withScript := clone(base)
				withScript["script"] = "Meet the bottle that keeps coffee hot " + randomHex(4) + "."
				refuse(ctx, c, submitBody("actor_ultra", withScript, need*4, map[string]any{"actor_id": actor}), http.StatusBadRequest, "invalid_config")
				refuse(ctx, c, submitBody("actor_ultra", clone(base), need, map[string]any{"actor_id": actor, "voice_id": voice}), http.StatusBadRequest, "invalid_config")
				withConfigVoice := clone(base)
				withConfigVoice["voiceId"] = voice
				refuse(ctx, c, submitBody("actor_ultra", withConfigVoice, need, map[string]any{"actor_id": actor}), http.StatusBadRequest, "invalid_config")
			})

			f.Rule("TALK-021").Needs(framework.Spends, framework.Uploads).It("actor_image_asset_id naming a clean image upload is accepted as the face", func(ctx context.Context, s *framework.Spec) {
				sp := newSpender(ctx, s)
				face := uploadFace(ctx, s, sp.c)
				rec := uploadRecording(ctx, s, sp.c, 3)
				j := submit(ctx, s, sp.c, "actor_ultra", map[string]any{"voice_audio": []any{rec}}, map[string]any{"actor_image_asset_id": face})
				w := s.Finish(ctx, sp.c, j.id)
				Expect(w.String("generation.status")).To(Equal("completed"), w.Describe())
			})
		})
	})
}
