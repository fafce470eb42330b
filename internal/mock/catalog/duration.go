package catalog

import (
	"github.com/mediaspec/mediaspec/fixtures"
)

// Lengths are the measured lengths an output duration rule may read.
type Lengths struct {
	// UploadMS sums the measured lengths, in milliseconds, of the uploads the id-array config
	// field names (nil: none known).
	UploadMS func(field string) int64
	// Approved is the approved tts voice driving a talking actor (nil: none).
	Approved *VoiceGeneration
}

func (l Lengths) uploadSeconds(field string) float64 {
	if l.UploadMS == nil {
		return 0
	}
	return float64(l.UploadMS(field)) / 1000
}

// OutputSeconds is the length of one output of an audio or video capability by its
// output.duration_from rule (fixtures README "Output"): a config field (with its schema
// default), the script's speaking time, an upload's length, the driving voice, a fixed length or
// a span of an upload. ok is false for other output kinds and unreadable rules. It is the one
// place an output duration is worked out: pricing shows it, the renderer makes it.
func OutputSeconds(cp *fixtures.Capability, config map[string]any, l Lengths) (secs float64, ok bool) {
	if cp.OutputKind != fixtures.OutputVideo && cp.OutputKind != fixtures.OutputAudio {
		return 0, false
	}
	d, err := fixtures.ParseDurationSource(cp.Output.DurationFrom)
	if err != nil {
		return 0, false
	}
	num := func(f string) float64 {
		v, _ := Field(cp, config, f)
		n, _ := Number(v)
		return n
	}
	script := func(f string) float64 {
		v, _ := Field(cp, config, f)
		return fixtures.ScriptSeconds(stringValue(v))
	}
	switch d.Kind {
	case fixtures.DurationField:
		return num(d.Fields[0]), true
	case fixtures.DurationScriptSeconds:
		secs = script(d.Fields[0])
		if len(d.Fields) > 1 {
			if sp := num(d.Fields[1]); sp > 0 {
				secs /= sp
			}
		}
		return secs, true
	case fixtures.DurationUploadDuration:
		return l.uploadSeconds(d.Fields[0]), true
	case fixtures.DurationVoice:
		switch {
		case l.Approved != nil:
			return float64(l.Approved.DurationMS) / 1000, true
		case config["voice_audio"] != nil:
			return l.uploadSeconds("voice_audio"), true
		default:
			return script("script"), true
		}
	case fixtures.DurationFixed:
		return d.Seconds, true
	case fixtures.DurationSpan:
		end := num(d.Fields[1])
		if u := l.uploadSeconds(d.Fields[2]); u > 0 && u < end {
			end = u
		}
		return end - num(d.Fields[0]), true
	}
	return 0, false
}
