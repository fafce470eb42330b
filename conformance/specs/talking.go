package specs

import (
	"context"
	"net/http"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
)

// talkingCast picks an actor with a default voice, an actor without one (nil when none is listed)
// and a second voice different from the first actor's default.
func talkingCast(ctx context.Context, c *framework.Client) (actor, voice string, noVoiceActor *string, otherVoice string) {
	GinkgoHelper()
	rows, _ := walk(ctx, c, "/actors", "actors", 48, 10)
	for _, a := range rows {
		v, _ := a["default_voice_id"].(string)
		if v != "" && actor == "" {
			actor, voice = a["actor_id"].(string), v
		}
		if a["default_voice_id"] == nil && noVoiceActor == nil {
			id := a["actor_id"].(string)
			noVoiceActor = &id
		}
	}
	if actor == "" {
		Skip("unsupported: the target lists no actor with a default voice")
	}
	for _, v := range getPage(ctx, c, "/voices", "voices").rows {
		if id := v["voice_id"].(string); id != voice {
			otherVoice = id
			break
		}
	}
	if otherVoice == "" {
		Skip("unsupported: the target lists only one voice")
	}
	return actor, voice, noVoiceActor, otherVoice
}

// expectWAV checks a fetched file is a WAV file.
func expectWAV(r *framework.Response) {
	GinkgoHelper()
	Expect(r.Status).To(Equal(http.StatusOK), r.Describe())
	Expect(r.Header.Get("Content-Type")).To(HavePrefix("audio/"), "an audio output's link answers an audio type"+r.Describe())
	Expect(len(r.Body)).To(BeNumerically(">", 44), "a WAV file is longer than its header")
	Expect(string(r.Body[0:4])).To(Equal("RIFF"), "a WAV file starts with RIFF")
	Expect(string(r.Body[8:12])).To(Equal("WAVE"), "a WAV file is a RIFF WAVE")
}

// expectMP4 checks a fetched file is an MP4 file.
func expectMP4(r *framework.Response) {
	GinkgoHelper()
	Expect(r.Status).To(Equal(http.StatusOK), r.Describe())
	Expect(r.Header.Get("Content-Type")).To(HavePrefix("video/"), "a video output's link answers a video type"+r.Describe())
	Expect(len(r.Body)).To(BeNumerically(">", 12))
	Expect(string(r.Body[4:8])).To(Equal("ftyp"), "an MP4 file starts with an ftyp box")
}

func talkingSpecs(f *framework.Framework) {
	Describe("talking actor", func() {
		f.Rule(rules("TALK-002", "ERR-024")...).It("actor_ultra with a script but no approved tts generation answers 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			actor, voice, _, _ := talkingCast(ctx, c)
			refuse(ctx, c, submitBody("actor_ultra", map[string]any{"script": "Hello there, this is new."}, 500,
				map[string]any{"actor_id": actor, "voice_id": voice}), http.StatusBadRequest, "invalid_config")
		})

		f.Rule(rules("TALK-011", "ERR-016")...).It("talking_actor is not a capability id", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			r := c.Get(ctx, "/capabilities/talking_actor").ExpectError(http.StatusNotFound, "capability_unavailable")
			Expect(r.String("error.capability_status")).To(Equal("unknown"), r.Describe())
			r = refuse(ctx, c, submitBody("talking_actor", map[string]any{"script": "Hi."}, 100, nil), http.StatusNotFound, "capability_unavailable")
			Expect(r.String("error.capability_status")).To(Equal("unknown"), r.Describe())
		})

		Describe("the tts then actor_ultra flow", Ordered, func() {
			var sp spender
			var actor, voice, otherVoice string
			var noVoiceActor *string
			var script, ttsID string
			ultra := func(scriptText string, extra map[string]any) map[string]any {
				body := map[string]any{"actor_id": actor, "voice_id": voice, "approved_voice_generation_id": ttsID}
				for k, v := range extra {
					if v == nil {
						delete(body, k)
					} else {
						body[k] = v
					}
				}
				return map[string]any{"config": map[string]any{"script": scriptText}, "extra": body}
			}
			needFor := func(ctx context.Context, cfg, extra map[string]any) int64 {
				GinkgoHelper()
				_, need := estimateOf(ctx, sp.c, "actor_ultra", cfg, extra)
				return need
			}
			var ttsDone *framework.Response
			// Step (a) of the flow runs in BeforeAll, so that a label filter selecting any later step
			// still has its approved tts generation.
			f.BeforeAll([]framework.Need{framework.Spends}, func(ctx context.Context, s *framework.Spec) {
				sp = newSpender(ctx, s)
				actor, voice, noVoiceActor, otherVoice = talkingCast(ctx, sp.c)
				script = "[[excited]] Meet the bottle that keeps coffee hot. [[pause]] Try it " + randomHex(4) + "."
				j := submit(ctx, s, sp.c, "tts", map[string]any{"script": script}, map[string]any{"voice_id": voice})
				ttsDone = s.Finish(ctx, sp.c, j.id)
				if ttsDone.String("generation.status") == "completed" {
					ttsID = j.id
				}
			})

			f.Rule("TALK-018", "LINK-007", "LINK-002").Needs(framework.Spends).It("1. tts speaks the script (emotion tags accepted) in the voice; the file is a WAV", func(ctx context.Context, s *framework.Spec) {
				Expect(ttsDone).NotTo(BeNil(), "the setup did not run")
				Expect(ttsDone.String("generation.status")).To(Equal("completed"), ttsDone.Describe())
				r := readGen(ctx, sp.c, ttsID)
				checkCompleted(r, "generation")
				expectWAV(s.FetchLink(ctx, r.String("generation.outputs.0.url")))
			})

			f.Rule(rules("TALK-005", "TALK-006", "TALK-007", "TALK-010", "VAR-011", "SUBMIT-035", "ERR-020", "ERR-029")...).Needs(framework.Spends).It("2. refuses a mismatched script or voice, body voice_id over config.voiceId, aspect_ratio, variants and an unknown actor", func(ctx context.Context, s *framework.Spec) {
				Expect(ttsID).NotTo(BeEmpty(), "the tts step did not finish")
				ok := ultra(script, nil)
				need := needFor(ctx, ok["config"].(map[string]any), ok["extra"].(map[string]any))
				send := func(u map[string]any, maxCredits int64, status int, code string) *framework.Response {
					GinkgoHelper()
					return refuse(ctx, sp.c, submitBody("actor_ultra", u["config"].(map[string]any), maxCredits, u["extra"].(map[string]any)), status, code)
				}
				send(ultra(script+" And more.", nil), need*2, http.StatusBadRequest, "invalid_config")
				send(ultra(script, map[string]any{"voice_id": otherVoice}), need, http.StatusBadRequest, "invalid_config")
				both := ultra(script, map[string]any{"voice_id": otherVoice})
				both["config"].(map[string]any)["voiceId"] = voice
				send(both, need, http.StatusBadRequest, "invalid_config")
				aspect := ultra(script, nil)
				aspect["config"].(map[string]any)["aspect_ratio"] = "9:16"
				expectField(send(aspect, need, http.StatusBadRequest, "invalid_config"), "config.aspect_ratio")
				expectField(send(ultra(script, map[string]any{"variants": 2}), need*2, http.StatusBadRequest, "invalid_config"), "variants")
				send(ultra(script, map[string]any{"actor_id": "act_" + randomHex(32)}), need, http.StatusNotFound, "not_found")
			})

			f.Rule(rules("TALK-009", "ERR-024")...).Needs(framework.Spends).It("3. no body voice, no config.voiceId and an actor without a default voice answers 400", func(ctx context.Context, s *framework.Spec) {
				Expect(ttsID).NotTo(BeEmpty(), "the tts step did not finish")
				if noVoiceActor == nil {
					Skip("unsupported: the target lists no actor without a default voice")
				}
				u := ultra(script, map[string]any{"voice_id": nil, "actor_id": *noVoiceActor})
				refuse(ctx, sp.c, submitBody("actor_ultra", u["config"].(map[string]any), 1000, u["extra"].(map[string]any)), http.StatusBadRequest, "invalid_config")
			})

			f.Rule("TALK-001", "LINK-007", "GEN-007").Needs(framework.Spends).It("4. actor_ultra with the same script and voice, an actor and the approved tts is accepted and renders a video", func(ctx context.Context, s *framework.Spec) {
				Expect(ttsID).NotTo(BeEmpty(), "the tts step did not finish")
				u := ultra(script, nil)
				j := submit(ctx, s, sp.c, "actor_ultra", u["config"].(map[string]any), u["extra"].(map[string]any))
				Expect(j.r.String("output_kind")).To(Equal("video"), j.r.Describe())
				s.Finish(ctx, sp.c, j.id)
				r := readGen(ctx, sp.c, j.id)
				checkCompleted(r, "generation")
				expectMP4(s.FetchLink(ctx, r.String("generation.outputs.0.url")))
			})

			f.Rule("TALK-008").Needs(framework.Spends).It("5. without any voice the actor's default voice is used and matches the approved tts", func(ctx context.Context, s *framework.Spec) {
				Expect(ttsID).NotTo(BeEmpty(), "the tts step did not finish")
				u := ultra(script, map[string]any{"voice_id": nil})
				j := submit(ctx, s, sp.c, "actor_ultra", u["config"].(map[string]any), u["extra"].(map[string]any))
				s.Finish(ctx, sp.c, j.id)
			})

			f.Rule(rules("TALK-003", "ERR-024")...).Needs(framework.Spends).It("6. an approved_voice_generation_id that is not a tts generation answers 400", func(ctx context.Context, s *framework.Spec) {
				Expect(ttsID).NotTo(BeEmpty(), "the tts step did not finish")
				d := imageModel(ctx, sp.c)
				img := submit(ctx, s, sp.c, d.String("capability_id"), cheapConfig(d), nil)
				s.Finish(ctx, sp.c, img.id)
				u := ultra(script, map[string]any{"approved_voice_generation_id": img.id})
				refuse(ctx, sp.c, submitBody("actor_ultra", u["config"].(map[string]any), 1000, u["extra"].(map[string]any)), http.StatusBadRequest, "invalid_config")
			})

			f.Rule(rules("TALK-004", "ERR-024", "CHECK-001")...).Needs(framework.Spends).It("7. a tts generation that has not completed is not approved: 400, before the in-flight check", func(ctx context.Context, s *framework.Spec) {
				Expect(ttsID).NotTo(BeEmpty(), "the tts step did not finish")
				script2 := "A second take, still rendering " + randomHex(4) + "."
				running := submit(ctx, s, sp.c, "tts", map[string]any{"script": script2}, map[string]any{"voice_id": voice})
				u := ultra(script2, map[string]any{"approved_voice_generation_id": running.id})
				refuse(ctx, sp.c, submitBody("actor_ultra", u["config"].(map[string]any), 1000, u["extra"].(map[string]any)), http.StatusBadRequest, "invalid_config")
				s.Finish(ctx, sp.c, running.id)
			})
		})
	})
}
