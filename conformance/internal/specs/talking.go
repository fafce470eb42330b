package specs

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/refusal"
	"github.com/mediaspec/mediaspec/conformance/internal/uploads"
)

// talkingSpecs registers the specs of the talking actor.
func talkingSpecs(f *framework.Framework) {
	talkingFlowSpecs(f)
	talkingLimitSpecs(f)
	talkingScriptSpecs(f)
}

// talkingFlowSpecs registers the specs of the talking actor flow.
func talkingFlowSpecs(f *framework.Framework) {
	Describe("talking actor: approved tts and actor_ultra", func() {
		f.Rule(rules("TALK-002", "ERR-024")...).It("actor_ultra with a script but no approved tts generation answers 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			actor, voice, _, _ := catalogue.TalkingCast(ctx, c)
			refuse(ctx, c, submitBody("actor_ultra", catalogue.ScriptConfig(ctx, c, "actor_ultra", "Hello there, this is new."), 500,
				map[string]any{"actor_id": actor, "voice_id": voice}), http.StatusBadRequest, "invalid_config")
		})

		f.Rule(rules("TALK-011", "ERR-016")...).It("talking_actor is not a capability id", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			r := c.Get(ctx, "/capabilities/talking_actor").ExpectError(http.StatusNotFound, "capability_unavailable")
			Expect(r.String("error.capability_status")).To(Equal("unknown"), r.Describe())
			// No catalogue gives talking_actor's config keys: the config is empty (the id is refused).
			r = refuse(ctx, c, submitBody("talking_actor", map[string]any{}, 100, nil), http.StatusNotFound, "capability_unavailable")
			Expect(r.String("error.capability_status")).To(Equal("unknown"), r.Describe())
		})

		f.Rule("TALK-010", "TALK-016").It("the schemas of actor_ultra and the script-only actor do not list aspect_ratio, which their submits refuse", func(ctx context.Context, s *framework.Spec) {
			c := s.Client()
			// "actor_ultra has no aspect_ratio (an unknown key)"; the script-only actor "refuses ...
			// aspect_ratio": a schema listing it tells a client to send what submit refuses.
			s.Step("TALK-010")
			d := catalogue.Detail(ctx, c, "actor_ultra")
			Expect(answer.SchemaProps(d)).NotTo(HaveKey("aspect_ratio"), "actor_ultra's config_schema lists aspect_ratio, an unknown key on its submit"+d.Describe())
			s.Step("TALK-016")
			so := catalogue.ScriptOnlyActor(ctx, c)
			Expect(answer.SchemaProps(so)).NotTo(HaveKey("aspect_ratio"), so.String("capability_id")+"'s config_schema lists aspect_ratio, which the script-only actor refuses"+so.Describe())
		})

		Describe("the tts then actor_ultra flow", Ordered, func() {
			var sp spender
			var actor, voice, otherVoice string
			var noVoiceActor *string
			var script, ttsID string
			var ultraKey string          // actor_ultra's script key
			var ultraBase map[string]any // an actor_ultra config with a script
			ultra := func(scriptText string, extra map[string]any) map[string]any {
				body := map[string]any{"actor_id": actor, "voice_id": voice, "approved_voice_generation_id": ttsID}
				for k, v := range extra {
					if v == nil {
						delete(body, k)
					} else {
						body[k] = v
					}
				}
				return map[string]any{"config": catalogue.WithChanges(ultraBase, map[string]any{ultraKey: scriptText}), "extra": body}
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
				actor, voice, noVoiceActor, otherVoice = catalogue.TalkingCast(ctx, sp.c)
				script = "[[excited]] Meet the bottle that keeps coffee hot. [[pause]] Try it " + framework.RandomHex(4) + "."
				ultraKey, ultraBase = catalogue.ScriptKey(ctx, sp.c, "actor_ultra"), catalogue.ScriptConfig(ctx, sp.c, "actor_ultra", script)
				j := submit(ctx, s, sp.c, "tts", catalogue.ScriptConfig(ctx, sp.c, "tts", script), map[string]any{"voice_id": voice})
				ttsDone = s.Finish(ctx, sp.c, j.id)
				if ttsDone.String("generation.status") == "completed" {
					ttsID = j.id
				}
			})

			f.Rule("TALK-018", "LINK-007", "LINK-002").Needs(framework.Spends).It("1. tts speaks the script (emotion tags accepted) in the voice; the file is a WAV", func(ctx context.Context, s *framework.Spec) {
				Expect(ttsDone).NotTo(BeNil(), "the setup did not run")
				s.Step("TALK-018")
				Expect(ttsDone.String("generation.status")).To(Equal("completed"), ttsDone.Describe())
				r := readGen(ctx, sp.c, ttsID)
				checkCompleted(r, "generation")
				s.Step("LINK-002", "LINK-007")
				expectWAV(s, s.FetchLink(ctx, r.String("generation.outputs.0.url")))
			})

			f.Rule(rules("TALK-005", "TALK-006", "TALK-007", "TALK-010", "VAR-011", "SUBMIT-035", "ERR-020", "ERR-029")...).Needs(framework.Spends).It("2. refuses a mismatched script or voice, body voice_id over config.voiceId, aspect_ratio, variants and an unknown actor", func(ctx context.Context, s *framework.Spec) {
				Expect(ttsID).NotTo(BeEmpty(), "the tts step did not finish")
				ok := ultra(script, nil)
				need := needFor(ctx, ok["config"].(map[string]any), ok["extra"].(map[string]any))
				send := func(u map[string]any, maxCredits int64, status int, code string) *framework.Response {
					GinkgoHelper()
					return refuse(ctx, sp.c, submitBody("actor_ultra", u["config"].(map[string]any), maxCredits, u["extra"].(map[string]any)), status, code)
				}
				s.Step(rules("TALK-005")...)
				send(ultra(script+" And more.", nil), need*2, http.StatusBadRequest, "invalid_config")
				s.Step(rules("TALK-006")...)
				send(ultra(script, map[string]any{"voice_id": otherVoice}), need, http.StatusBadRequest, "invalid_config")
				s.Step(rules("TALK-007")...)
				both := ultra(script, map[string]any{"voice_id": otherVoice})
				both["config"].(map[string]any)["voiceId"] = voice
				send(both, need, http.StatusBadRequest, "invalid_config")
				s.Step(rules("TALK-010", "ERR-020")...)
				aspect := ultra(script, nil)
				aspect["config"].(map[string]any)["aspect_ratio"] = "9:16"
				refusal.ExpectField(send(aspect, need, http.StatusBadRequest, "invalid_config"), "config.aspect_ratio")
				s.Step(rules("VAR-011", "ERR-020")...)
				refusal.ExpectField(send(ultra(script, map[string]any{"variants": 2}), need*2, http.StatusBadRequest, "invalid_config"), "variants")
				s.Step(rules("SUBMIT-035", "ERR-029")...)
				send(ultra(script, map[string]any{"actor_id": "act_" + framework.RandomHex(32)}), need, http.StatusNotFound, "not_found")
			})

			f.Rule(rules("TALK-009", "ERR-024")...).Needs(framework.Spends).It("3. no body voice, no config.voiceId and an actor without a default voice answers 400", func(ctx context.Context, s *framework.Spec) {
				Expect(ttsID).NotTo(BeEmpty(), "the tts step did not finish")
				if noVoiceActor == nil {
					s.Lacks("the target lists no actor without a default voice")
				}
				u := ultra(script, map[string]any{"voice_id": nil, "actor_id": *noVoiceActor})
				refuse(ctx, sp.c, submitBody("actor_ultra", u["config"].(map[string]any), 1000, u["extra"].(map[string]any)), http.StatusBadRequest, "invalid_config")
				// A server that picks some voice for the actor (the first listed, say) fails the
				// submit above as a voice mismatch anyway, unless the approved tts spoke that voice:
				// approved with the first listed voice, "none gives invalid_config" still holds.
				if fv := catalogue.FirstVoice(ctx, sp.c); fv != voice {
					j := submit(ctx, s, sp.c, "tts", catalogue.ScriptConfig(ctx, sp.c, "tts", script), map[string]any{"voice_id": fv})
					if s.Finish(ctx, sp.c, j.id).String("generation.status") == "completed" {
						u = ultra(script, map[string]any{"voice_id": nil, "actor_id": *noVoiceActor, "approved_voice_generation_id": j.id})
						refuse(ctx, sp.c, submitBody("actor_ultra", u["config"].(map[string]any), 1000, u["extra"].(map[string]any)), http.StatusBadRequest, "invalid_config")
					}
				}
			})

			f.Rule("TALK-001", "TALK-018", "LINK-007", "GEN-007", "SUBMIT-006", "SUBMIT-002").Needs(framework.Spends).It("4. actor_ultra with the same script and voice, an actor and the approved tts is accepted and renders a video", func(ctx context.Context, s *framework.Spec) {
				Expect(ttsID).NotTo(BeEmpty(), "the tts step did not finish")
				// The script carries [[excited]] and [[pause]]: "Delivery can be directed with emotion
				// tags in the script" is said of the talking actor, so its submit accepts both, not tts's only.
				s.Step("TALK-001", "TALK-018")
				u := ultra(script, nil)
				j := submit(ctx, s, sp.c, "actor_ultra", u["config"].(map[string]any), u["extra"].(map[string]any))
				s.Step("SUBMIT-006")
				expectSubmitFixed(j.r)
				s.Step("TALK-001")
				Expect(j.r.String("output_kind")).To(Equal("video"), j.r.Describe())
				s.Finish(ctx, sp.c, j.id)
				r := readGen(ctx, sp.c, j.id)
				s.Step("GEN-007")
				checkCompleted(r, "generation")
				s.Step("LINK-007")
				expectMP4(s, s.FetchLink(ctx, r.String("generation.outputs.0.url")))
			})

			f.Rule("TALK-007").Needs(framework.Spends).It("4b. body voice_id wins over a different config.voiceId: the approved voice in the body is accepted", func(ctx context.Context, s *framework.Spec) {
				Expect(ttsID).NotTo(BeEmpty(), "the tts step did not finish")
				if _, ok := answer.SchemaProps(catalogue.Detail(ctx, sp.c, "actor_ultra"))["voiceId"]; !ok {
					s.Lacks("actor_ultra's config_schema has no voiceId: the order body voice_id, then config.voiceId cannot be probed")
				}
				// "Voice is taken in order: body voice_id, config.voiceId, the actor's default": a server
				// refusing any body/config disagreement passes the refusal probe of spec 2; this one
				// (the body's voice approved, config.voiceId another) must be accepted.
				u := ultra(script, nil)
				u["config"].(map[string]any)["voiceId"] = otherVoice
				j := submit(ctx, s, sp.c, "actor_ultra", u["config"].(map[string]any), u["extra"].(map[string]any))
				s.Finish(ctx, sp.c, j.id)
			})

			f.Rule(rules("ID-016", "SUBMIT-035", "SUBMIT-036", "ERR-029")...).Needs(framework.Spends).It("8. another workspace's actor, voice or tts generation is not the caller's: 404 not_found, never 403 or accepted", func(ctx context.Context, s *framework.Spec) {
				Expect(ttsID).NotTo(BeEmpty(), "the tts step did not finish")
				// Another workspace's own actor and cloned voice: made through control, or the
				// profile's own-catalogue workspace's, which the operator made.
				var (
					oc                     *framework.Client
					theirActor, theirVoice string
				)
				if s.HasControl() {
					other := s.NewWorkspace(ctx, framework.WorkspaceOptions{})
					oc, _ = other.NewKey(ctx, framework.KeyOptions{Scopes: []string{"read", "generate"}})
					var err error
					theirActor, err = s.Control().AddActor(ctx, other.ID,
						map[string]any{"name": "Their presenter " + framework.RandomHex(4), "default_voice_id": voice})
					hookDone(s, err)
					theirVoice, err = s.Control().CloneVoice(ctx, other.ID, "Their voice "+framework.RandomHex(4))
					hookDone(s, err)
				} else {
					oc, theirActor, theirVoice = s.OwnCatalogue()
				}
				theirTTS := submit(ctx, s, oc, "tts", catalogue.ScriptConfig(ctx, oc, "tts", script), map[string]any{"voice_id": catalogue.VoiceOf(ctx, oc, voice)})
				s.Finish(ctx, oc, theirTTS.id)
				// "another workspace's id answers not_found, never forbidden" (Id rules; Authentication 5).
				s.Step(rules("SUBMIT-035", "ID-016", "ERR-029")...)
				u := ultra(script, map[string]any{"actor_id": theirActor})
				refuse(ctx, sp.c, submitBody("actor_ultra", u["config"].(map[string]any), 1000, u["extra"].(map[string]any)), http.StatusNotFound, "not_found")
				s.Step(rules("SUBMIT-036", "ID-016", "ERR-029")...)
				cfg := catalogue.TTSConfig(ctx, sp.c)
				_, need := estimateOf(ctx, sp.c, "tts", cfg, nil)
				refuse(ctx, sp.c, submitBody("tts", cfg, need, map[string]any{"voice_id": theirVoice}), http.StatusNotFound, "not_found")
				// Their tts with the same script and voice is no approval of the caller's: unknown to
				// the caller (404 not_found), or no completed tts of the caller's (400 invalid_config,
				// as for any approval that does not hold); never 403, never accepted.
				s.Step("ID-016")
				u = ultra(script, map[string]any{"approved_voice_generation_id": theirTTS.id})
				r := sp.c.Post(ctx, "/generations", submitBody("actor_ultra", u["config"].(map[string]any), 1000, u["extra"].(map[string]any)))
				if r.Status == http.StatusNotFound {
					r.ExpectError(http.StatusNotFound, "not_found")
				} else {
					Expect(r.Status).To(Equal(http.StatusBadRequest), "another workspace's tts generation as approved_voice_generation_id is refused as not the caller's (404) or not an approval (400)"+r.Describe())
					r.ExpectError(http.StatusBadRequest, "invalid_config")
				}
			})

			f.Rule("TALK-008").Needs(framework.Spends).It("5. without any voice the actor's default voice is used and matches the approved tts", func(ctx context.Context, s *framework.Spec) {
				Expect(ttsID).NotTo(BeEmpty(), "the tts step did not finish")
				u := ultra(script, map[string]any{"voice_id": nil})
				j := submit(ctx, s, sp.c, "actor_ultra", u["config"].(map[string]any), u["extra"].(map[string]any))
				s.Finish(ctx, sp.c, j.id)
			})

			f.Rule(rules("TALK-003", "ERR-024")...).Needs(framework.Spends).It("6. an approved_voice_generation_id that is not a tts generation answers 400", func(ctx context.Context, s *framework.Spec) {
				Expect(ttsID).NotTo(BeEmpty(), "the tts step did not finish")
				d := catalogue.ImageModel(ctx, sp.c)
				img := submit(ctx, s, sp.c, d.String("capability_id"), catalogue.CheapConfig(d), nil)
				s.Finish(ctx, sp.c, img.id)
				u := ultra(script, map[string]any{"approved_voice_generation_id": img.id})
				refuse(ctx, sp.c, submitBody("actor_ultra", u["config"].(map[string]any), 1000, u["extra"].(map[string]any)), http.StatusBadRequest, "invalid_config")
			})

			f.Rule(rules("TALK-004", "ERR-024", "CHECK-001")...).Needs(framework.Spends).It("7. a tts generation that has not completed is not approved: 400, before the in-flight check", func(ctx context.Context, s *framework.Spec) {
				Expect(ttsID).NotTo(BeEmpty(), "the tts step did not finish")
				script2 := "A second take, still rendering " + framework.RandomHex(4) + "."
				running := submit(ctx, s, sp.c, "tts", catalogue.ScriptConfig(ctx, sp.c, "tts", script2), map[string]any{"voice_id": voice})
				u := ultra(script2, map[string]any{"approved_voice_generation_id": running.id})
				body := submitBody("actor_ultra", u["config"].(map[string]any), 1000, u["extra"].(map[string]any))
				// The spec needs the tts still running when actor_ultra names it: a target may finish
				// it at once. The state is read first, and once more when the submit is not refused.
				if !stillRunning(ctx, sp.c, running.id) {
					s.Lacks("the tts generation %s had already finished when actor_ultra could name it (the target renders faster than the spec can observe a running job)", running.id)
				}
				r := sp.c.Post(ctx, "/generations", body, framework.Unjudged())
				if r.Status == http.StatusCreated && !stillRunning(ctx, sp.c, running.id) {
					s.Finish(ctx, sp.c, r.String("generation_id"))
					s.Lacks("the tts generation %s finished between the spec's read and actor_ultra's submit, which then rightly used it", running.id)
				}
				refuse(ctx, sp.c, body, http.StatusBadRequest, "invalid_config")
				s.Finish(ctx, sp.c, running.id)
			})
		})
	})
}

// talkingLimitSpecs registers the specs of the talking actor limits.
func talkingLimitSpecs(f *framework.Framework) {
	Describe("talking actor: limits", func() {
		// Limits above the recordings' holds: control lifts them on a workspace of the spec's own, or
		// the profile's high_limit_key has them (the default 600-credit limit refuses a 60 s
		// recording's hold before its length is judged).
		f.Rule(rules("TALK-012", "SUBMIT-031", "ERR-024")...).Needs(framework.Uploads, framework.HighLimitKey).It("actor_ultra refuses a recording of 60 seconds or more with 400 invalid_config, holding nothing", func(ctx context.Context, s *framework.Spec) {
			var sp spender
			if s.HasControl() {
				sp = newSpender(ctx, s)
				liftCaps(ctx, s, sp)
			} else {
				sp = spender{c: s.RoleKey(framework.HighLimitKey)}
			}
			actor, _, _, _ := catalogue.TalkingCast(ctx, sp.c)
			for _, secs := range []int{60, 75} {
				rec := uploads.Recording(ctx, s, sp.c, secs)
				cfg := map[string]any{"voice_audio": []any{rec}}
				extra := map[string]any{"actor_id": actor}
				need := needOr(ctx, sp.c, "actor_ultra", cfg, extra, 100000)
				refuseBy(ctx, sp.c, submitBody("actor_ultra", cfg, need, extra), func(r *framework.Response) {
					GinkgoHelper()
					// The text's order puts spend caps and credits before config validity, and fixes
					// no price: a declared key whose limits or balance are under this recording's
					// hold is refused 402 first, legally; that is no verdict on the length.
					if code, _ := r.Field("error.code").(string); !s.HasControl() && r.Status == http.StatusPaymentRequired &&
						(code == "spend_limit_exceeded" || code == "insufficient_credits") {
						framework.SkipFor(framework.NotDeclared(fmt.Sprintf("high_limit_key's limits or balance are under the hold of a "+
							"%d s recording (refused %s first, a check the text's order puts before config validity): declare a key "+
							"whose workspace's limits and balance cover it", secs, code)))
					}
					r.ExpectError(http.StatusBadRequest, "invalid_config")
				})
			}
		})

		f.Rule(rules("TALK-013", "ERR-024")...).Needs(framework.Spends).It("the other audio-driven actor refuses an approved voice under 5 or over 14.8 seconds and accepts one in between", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			d := catalogue.OtherAudioActor(ctx, sp.c)
			id := d.String("capability_id")
			// Before the three tts jobs it would wait for: the actor's submit at the end skips there.
			skipRealTimeVideo(ctx, s, sp.c, id)
			actor, voice, _, _ := catalogue.TalkingCast(ctx, sp.c)
			key := catalogue.TextKey(d)
			if key == "" {
				s.Lacks("the key of the script in a config is unknown: capability %s names no free-text key in its config_schema and example_config (textKeyOf)", id)
			}
			limit := catalogue.MaxLength(answer.SchemaProps(d), key, 400)
			// tts speaks each script; its output's duration_ms is the voice length the actor judges.
			speak := func(script string) (string, int64) {
				GinkgoHelper()
				j := submit(ctx, s, sp.c, "tts", catalogue.ScriptConfig(ctx, sp.c, "tts", script), map[string]any{"voice_id": voice})
				w := s.Finish(ctx, sp.c, j.id)
				Expect(w.String("generation.status")).To(Equal("completed"), w.Describe())
				// duration_ms is the reference's (the outputs table does not list it): without it the
				// voice length the actor judges is unknown.
				v, has := w.Lookup("generation.outputs.0.duration_ms")
				if !has {
					framework.SkipFor(framework.LacksState("the target's generation outputs carry no duration_ms (the outputs table does not list it), so a tts voice's length is unknown"))
				}
				ms, ok := framework.AsInt(v)
				Expect(ok).To(BeTrue(), "a tts output's duration_ms is whole milliseconds"+w.Describe())
				return j.id, ms
			}
			body := func(script, approved string) (map[string]any, map[string]any) {
				return catalogue.WithChanges(answer.ObjectAt(d, "example_config"), map[string]any{key: script}), map[string]any{"actor_id": actor, "voice_id": voice, "approved_voice_generation_id": approved}
			}
			short := "Hi there " + framework.RandomHex(4) + "."
			shortID, shortMS := speak(short)
			Expect(shortMS).To(BeNumerically("<", 5000), "a script of %d characters speaks under 5 seconds", len(short))
			cfg, extra := body(short, shortID)
			refuse(ctx, sp.c, submitBody(id, cfg, needOr(ctx, sp.c, id, cfg, extra, 1000), extra), http.StatusBadRequest, "invalid_config")

			long := catalogue.ScriptOf(limit)
			longID, longMS := speak(long)
			if longMS <= 14800 {
				s.Lacks("the longest script %s takes (%d characters) speaks %d ms, not over 14.8 s", id, limit, longMS)
			}
			cfg, extra = body(long, longID)
			refuse(ctx, sp.c, submitBody(id, cfg, needOr(ctx, sp.c, id, cfg, extra, 1000), extra), http.StatusBadRequest, "invalid_config")

			mid := catalogue.ScriptOf(min(150, limit))
			midID, midMS := speak(mid)
			Expect(midMS).To(And(BeNumerically(">=", 5000), BeNumerically("<=", 14800)), "a script of 150 characters speaks 5 to 14.8 seconds")
			cfg, extra = body(mid, midID)
			j := submit(ctx, s, sp.c, id, cfg, extra)
			Expect(j.id).To(MatchRegexp(genIDPattern), j.r.Describe())
		})
	})
}

// talkingScriptSpecs registers the specs of the script-only actor's limits and of a recording given
// in place of tts.
func talkingScriptSpecs(f *framework.Framework) {
	Describe("talking actor: limits", func() {
		Describe("the script-only actor", func() {
			// ok is a config inside the bounds (about 10 seconds at any usual speaking rate).
			ok := func(d *framework.Response) map[string]any { return catalogue.ActorScript(d, catalogue.ScriptOf(150)) }

			f.Rule(rules("TALK-014", "ERR-024")...).It("refuses a script far under 4 or far over 30 seconds with 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
				c := s.Client()
				d := catalogue.ScriptOnlyActor(ctx, c)
				id := d.String("capability_id")
				short := catalogue.ActorScript(d, "Hi.")
				refuse(ctx, c, submitBody(id, short, needOr(ctx, c, id, short, nil, 1000), nil), http.StatusBadRequest, "invalid_config")
				long := catalogue.ActorScript(d, catalogue.ScriptOf(catalogue.MaxLength(answer.SchemaProps(d), catalogue.TextKey(d), 1500)))
				est := c.Post(ctx, "/estimates", map[string]any{"capability_id": id, "config": long})
				if est.Status == http.StatusOK {
					if secs, has := est.Lookup("seconds"); has {
						if n, isNum := secs.(json.Number); isNum {
							if v, err := n.Float64(); err == nil && v <= 30 {
								s.Lacks("the longest script %s takes measures %.1f s, not over 30 s", id, v)
							}
						}
					}
				}
				refuse(ctx, c, submitBody(id, long, needOr(ctx, c, id, long, nil, 1000), nil), http.StatusBadRequest, "invalid_config")
			})

			f.Rule("TALK-014").Needs(framework.Spends).It("accepts a script of about 10 seconds", func(ctx context.Context, s *framework.Spec) {
				sp := newSpender(ctx, s)
				d := catalogue.ScriptOnlyActor(ctx, sp.c)
				j := submit(ctx, s, sp.c, d.String("capability_id"), ok(d), nil)
				Expect(j.r.Bool("replay")).To(BeFalse(), j.r.Describe())
			})

			f.Rule(rules("TALK-015", "ERR-024")...).It("refuses approved_voice_generation_id with 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
				c := s.Client()
				d := catalogue.ScriptOnlyActor(ctx, c)
				id := d.String("capability_id")
				cfg := ok(d)
				_, need := estimateOf(ctx, c, id, cfg, nil)
				r := refuse(ctx, c, submitBody(id, cfg, need, map[string]any{"approved_voice_generation_id": "gen_" + framework.RandomHex(32)}), http.StatusBadRequest, "invalid_config")
				refusal.ExpectField(r, "approved_voice_generation_id")
			})

			f.Rule(rules("TALK-016", "ERR-024")...).It("refuses config.aspect_ratio with 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
				c := s.Client()
				d := catalogue.ScriptOnlyActor(ctx, c)
				id := d.String("capability_id")
				cfg := ok(d)
				_, need := estimateOf(ctx, c, id, cfg, nil)
				cfg["aspect_ratio"] = "9:16"
				refusal.ExpectField(refuse(ctx, c, submitBody(id, cfg, need, nil), http.StatusBadRequest, "invalid_config"), "config.aspect_ratio")
			})

			// The text: it refuses variants, and variants on a capability that makes one result is
			// refused, never clamped: variants 1 as well as 2.
			f.Rule(rules("TALK-017", "VAR-004", "ERR-024")...).It("refuses variants with 400 invalid_config, even variants 1", func(ctx context.Context, s *framework.Spec) {
				c := s.Client()
				d := catalogue.ScriptOnlyActor(ctx, c)
				id := d.String("capability_id")
				cfg := ok(d)
				_, need := estimateOf(ctx, c, id, cfg, nil)
				for _, n := range []int{1, 2} {
					refusal.ExpectField(refuse(ctx, c, submitBody(id, cfg, need*2, map[string]any{"variants": n}), http.StatusBadRequest, "invalid_config"), "variants")
				}
			})
		})

		Describe("a recording instead of tts", func() {
			f.Rule("TALK-019").Needs(framework.Spends, framework.Uploads).It("actor_ultra with config.voice_audio, no script and no voice_id, is accepted and renders", func(ctx context.Context, s *framework.Spec) {
				sp := newSpender(ctx, s)
				skipRealTimeVideo(ctx, s, sp.c, "actor_ultra") // before the upload it would not use
				actor, _, _, _ := catalogue.TalkingCast(ctx, sp.c)
				rec := uploads.Recording(ctx, s, sp.c, 3)
				j := submit(ctx, s, sp.c, "actor_ultra", map[string]any{"voice_audio": []any{rec}}, map[string]any{"actor_id": actor})
				Expect(j.r.String("output_kind")).To(Equal("video"), j.r.Describe())
				w := s.Finish(ctx, sp.c, j.id)
				Expect(w.String("generation.status")).To(Equal("completed"), w.Describe())
			})

			f.Rule(rules("TALK-020", "ERR-024")...).Needs(framework.Uploads).It("config.voice_audio with a script or a voice_id answers 400 invalid_config", func(ctx context.Context, s *framework.Spec) {
				c := uploads.Client(ctx, s, 10)
				actor, voice, _, _ := catalogue.TalkingCast(ctx, c)
				rec := uploads.Recording(ctx, s, c, 3)
				base := map[string]any{"voice_audio": []any{rec}}
				_, need := estimateOf(ctx, c, "actor_ultra", base, map[string]any{"actor_id": actor})
				withScript := catalogue.Clone(base)
				withScript[catalogue.ScriptKey(ctx, c, "actor_ultra")] = "Meet the bottle that keeps coffee hot " + framework.RandomHex(4) + "."
				refuse(ctx, c, submitBody("actor_ultra", withScript, need*4, map[string]any{"actor_id": actor}), http.StatusBadRequest, "invalid_config")
				refuse(ctx, c, submitBody("actor_ultra", catalogue.Clone(base), need, map[string]any{"actor_id": actor, "voice_id": voice}), http.StatusBadRequest, "invalid_config")
				withConfigVoice := catalogue.Clone(base)
				withConfigVoice["voiceId"] = voice
				refuse(ctx, c, submitBody("actor_ultra", withConfigVoice, need, map[string]any{"actor_id": actor}), http.StatusBadRequest, "invalid_config")
			})

			f.Rule("TALK-021").Needs(framework.Spends, framework.Uploads).It("actor_image_asset_id naming a clean image upload is accepted as the face", func(ctx context.Context, s *framework.Spec) {
				sp := newSpender(ctx, s)
				skipRealTimeVideo(ctx, s, sp.c, "actor_ultra") // before the uploads it would not use
				face := uploads.Face(ctx, s, sp.c)
				rec := uploads.Recording(ctx, s, sp.c, 3)
				j := submit(ctx, s, sp.c, "actor_ultra", map[string]any{"voice_audio": []any{rec}}, map[string]any{"actor_image_asset_id": face})
				w := s.Finish(ctx, sp.c, j.id)
				Expect(w.String("generation.status")).To(Equal("completed"), w.Describe())
			})
		})
	})
}
