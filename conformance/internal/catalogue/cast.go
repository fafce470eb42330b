package catalogue

import (
	"context"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
)

// TalkingCast picks an actor with a default voice, an actor without one (nil when none is listed)
// and a second voice different from the first actor's default.
func TalkingCast(ctx context.Context, c *framework.Client) (actor, voice string, noVoiceActor *string, otherVoice string) {
	GinkgoHelper()
	rows, _ := paging.Walk(ctx, c, "/actors", "actors", 48, 10)
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
		c.Lacks("the target lists no actor with a default voice")
	}
	for _, v := range paging.Get(ctx, c, "/voices", "voices").Rows {
		if id := v["voice_id"].(string); id != voice {
			otherVoice = id
			break
		}
	}
	if otherVoice == "" {
		c.Lacks("the target lists only one voice")
	}
	return actor, voice, noVoiceActor, otherVoice
}

// VoiceOf is voice when c's workspace lists it, else the first voice c lists that is not cloned
// (the caller's voice may be a cloned voice of the caller's own workspace).
func VoiceOf(ctx context.Context, c *framework.Client, voice string) string {
	GinkgoHelper()
	rows, _ := paging.Walk(ctx, c, "/voices", "voices", 50, 10)
	if RowOf(rows, "voice_id", voice) != nil {
		return voice
	}
	for _, r := range rows {
		if r["is_cloned"] == false {
			return r["voice_id"].(string)
		}
	}
	c.Lacks("the other workspace lists no voice that is not its own cloned voice")
	return ""
}

// ScriptOnlyActor finds the script-only actor black-box: an available avatar capability other
// than actor_ultra whose config schema has a script (its free text, textKeyOf) and no voice
// field, and which estimates with its example_config speaking a script of its own. It skips the
// spec when the target has none.
func ScriptOnlyActor(ctx context.Context, c *framework.Client) *framework.Response {
	GinkgoHelper()
	for _, row := range Rows(ctx, c) {
		if row["status"] != "available" || row["category"] != "avatar" || row["capability_id"] == "actor_ultra" {
			continue
		}
		d := Detail(ctx, c, row["capability_id"].(string))
		key := TextKey(d)
		if key == "" || hasVoiceField(answer.SchemaProps(d)) {
			continue
		}
		cfg := ActorScript(d, ScriptOf(150))
		if c.Post(ctx, "/estimates", map[string]any{"capability_id": d.String("capability_id"), "config": cfg}).Status == http.StatusOK {
			return d
		}
	}
	c.Lacks("the target lists no script-only actor (an available avatar capability other than actor_ultra with a script and no voice field)")
	return nil
}

// OtherAudioActor finds the other audio-driven actor: an available avatar capability other than
// actor_ultra whose config schema takes a voice (voiceId or voice_audio). It skips the spec when
// the target has none.
func OtherAudioActor(ctx context.Context, c *framework.Client) *framework.Response {
	GinkgoHelper()
	for _, row := range Rows(ctx, c) {
		if row["status"] != "available" || row["category"] != "avatar" || row["capability_id"] == "actor_ultra" {
			continue
		}
		d := Detail(ctx, c, row["capability_id"].(string))
		if hasVoiceField(answer.SchemaProps(d)) {
			return d
		}
	}
	c.Lacks("the target lists no audio-driven actor besides actor_ultra")
	return nil
}

// hasVoiceField reports whether a config schema takes a voice (a voice id or a recording).
func hasVoiceField(props map[string]any) bool {
	_, voiceID := props["voiceId"]
	_, audio := props["voice_audio"]
	return voiceID || audio
}

// ActorScript is the script-only actor d's example_config speaking script under its script key.
func ActorScript(d *framework.Response, script string) map[string]any {
	GinkgoHelper()
	return WithChanges(answer.ObjectAt(d, "example_config"), map[string]any{TextKey(d): script})
}

// MaxLength is the MaxLength of a string property (fallback when it has none).
func MaxLength(props map[string]any, name string, fallback int) int {
	p, _ := props[name].(map[string]any)
	if n, ok := framework.AsInt(p["maxLength"]); ok {
		return int(n)
	}
	return fallback
}

// ScriptOf returns a plain script of exactly n characters (whole words, then padding), unique to
// the call.
func ScriptOf(n int) string {
	words := []string{"fresh", "coffee", "every", "morning", "keeps", "you", "going", "through", "the", "long", "day"}
	var b strings.Builder
	b.WriteString("Take " + framework.RandomHex(6))
	for i := 0; b.Len() < n; i++ {
		b.WriteString(" " + words[i%len(words)])
	}
	out := []byte(b.String()[:n])
	if out[n-1] == ' ' {
		out[n-1] = '.'
	}
	return string(out)
}
