package catalog

import (
	"encoding/json"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
)

// ratio is a non-negative quantity N/D.
type ratio struct{ n, d int64 }

func (r ratio) float() float64 { return float64(r.n) / float64(r.d) }

// priceOf is max(min_credits, ceil(H x N / (100 x D))) in integers
// (fixtures/README.md "Price of one generation").
func priceOf(p fixtures.Pricing, q ratio) int64 {
	h := p.CreditsPerUnitHundredths()
	den := 100 * q.d
	v := (h*q.n + den - 1) / den
	return max(int64(p.MinCredits), v)
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// intValue reads a JSON number that is a whole number.
func intValue(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return int64(x), true
		}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, true
		}
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) {
			return int64(f), true
		}
	case int:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// Number reads a JSON-native number (float64, json.Number, or an int a Go caller built) as float64.
func Number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

func stringValue(v any) string {
	s, _ := v.(string)
	return s
}

// Field returns config[name], else the schema default of that property of the capability's
// config_schema.
func Field(cp *fixtures.Capability, config map[string]any, name string) (any, bool) {
	if v, ok := config[name]; ok {
		return v, true
	}
	props, _ := cp.ConfigSchema["properties"].(map[string]any)
	prop, _ := props[name].(map[string]any)
	v, ok := prop["default"]
	return v, ok
}

func chars(cp *fixtures.Capability, config map[string]any, name string) int64 {
	v, _ := Field(cp, config, name)
	return int64(utf8.RuneCountInString(stringValue(v)))
}

// uploadMS sums the durations of the uploads named by the id array field.
func uploadMS(config map[string]any, name string, res Resources) (int64, error) {
	arr, _ := config[name].([]any)
	if len(arr) == 0 {
		return 0, apierr.InvalidConfig("config."+name, "config."+name+" must name an upload.")
	}
	var total int64
	for _, e := range arr {
		id := stringValue(e)
		u, ok := res.Uploads[id]
		if !ok || u.DurationMS == nil {
			e := apierr.InvalidConfig("config."+name, "config."+name+" must name a finalized audio or video upload with a length.")
			return 0, e
		}
		total += *u.DurationMS
	}
	return total, nil
}

// quantity measures q of one generation by src; count (variants) replaces
// a count source's field when > 0.
func quantity(cp *fixtures.Capability, config map[string]any, src fixtures.QuantitySource, count int64, res Resources) (ratio, error) {
	switch src.Kind {
	case fixtures.QuantityOne:
		return ratio{1, 1}, nil
	case fixtures.QuantityField:
		v, _ := Field(cp, config, src.Fields[0])
		if n, ok := intValue(v); ok {
			return ratio{max(n, 0), 1}, nil
		}
		if f, ok := Number(v); ok && f >= 0 {
			return ratio{int64(math.Ceil(f * 1000)), 1000}, nil
		}
		return ratio{}, apierr.InvalidConfig("config."+src.Fields[0], "config."+src.Fields[0]+" must be a number.")
	case fixtures.QuantityCount:
		if count > 0 {
			return ratio{count, 1}, nil
		}
		v, _ := Field(cp, config, src.Fields[0])
		n, ok := intValue(v)
		if !ok {
			n = 1
		}
		return ratio{max(n, 1), 1}, nil
	case fixtures.QuantityScriptSeconds:
		v, _ := Field(cp, config, src.Fields[0])
		return ratio{int64(math.Ceil(fixtures.ScriptSeconds(stringValue(v)))), 1}, nil
	case fixtures.QuantityChars:
		return ratio{ceilDiv(chars(cp, config, src.Fields[0]), 1000), 1}, nil
	case fixtures.QuantityUploadDuration:
		ms, err := uploadMS(config, src.Fields[0], res)
		if err != nil {
			return ratio{}, err
		}
		return ratio{ceilDiv(ms, 1000), 1}, nil
	case fixtures.QuantityTokens:
		var c int64
		for _, f := range src.Fields[:len(src.Fields)-1] {
			c += chars(cp, config, f)
		}
		v, _ := Field(cp, config, src.Fields[len(src.Fields)-1])
		m, _ := intValue(v)
		return ratio{ceilDiv(c, fixtures.CharsPerToken) + max(m, 0), 1_000_000}, nil
	}
	return ratio{}, fmt.Errorf("catalog: %s: unknown quantity kind %q", cp.ID, src.Kind)
}

// Price computes the price of a config that passed CheckConfig, with the
// uploads and approved voice of res (CheckResources). variants > 0 (submit)
// replaces config.count. It does not check status, plan, not_priced or
// faults (package admission does, before it prices: a capability without a published price has
// no quantity source to read). Integer arithmetic throughout (fixtures/README.md "Pricing"):
//
//   - variant_mode none: one generation, or one per fan-out value;
//   - outputs (image models): one generation whose quantity is the count;
//     its hold pads every take: count x ceil(price of one take x 1.1);
//   - batch (video models, presets): one generation per take, each priced
//     and padded alone.
//
// MaxCreditsNeeded is the sum over takes of ceil(take price x 1.1) (rule
// EST-003).
func Price(cp *fixtures.Capability, config map[string]any, variants int, res Resources) (Quote, error) {
	src, err := fixtures.ParseQuantitySource(cp.Pricing.QuantityFrom)
	if err != nil {
		return Quote{}, apierr.Internal(err, "The service could not price this capability.")
	}
	ceiling := src.IsCeiling()
	var exactMS int64 = -1
	if cp.Pricing.ExactQuantityFrom != "" {
		ex, err := fixtures.ParseQuantitySource(cp.Pricing.ExactQuantityFrom)
		if err != nil {
			return Quote{}, apierr.Internal(err, "The service could not price this capability.")
		}
		if _, has := config[ex.Fields[0]]; has {
			src, ceiling = ex, ex.IsCeiling()
		}
	}
	if src.Kind == fixtures.QuantityUploadDuration {
		ms, err := uploadMS(config, src.Fields[0], res)
		if err != nil {
			return Quote{}, err
		}
		exactMS = ms
	}
	count := int64(variants)
	q, err := quantity(cp, config, src, count, res)
	if err != nil {
		return Quote{}, err
	}
	if res.ApprovedTT != nil && src.Kind == fixtures.QuantityScriptSeconds {
		// An approved voice fixes the length: the price is exact.
		exactMS = res.ApprovedTT.DurationMS
		q, ceiling = ratio{ceilDiv(exactMS, 1000), 1}, false
	}
	out := Quote{CapabilityID: cp.ID, IsCeiling: ceiling}
	label := cp.Pricing.Label
	line := func(lbl string) Line {
		p := priceOf(cp.Pricing, q)
		return Line{Label: lbl, Unit: cp.Pricing.Unit, Quantity: q.float(), Credits: p, Hold: Pad(p)}
	}
	switch cp.VariantMode {
	case fixtures.VariantOutputs:
		// One generation making every take; the hold pads each take.
		l := line(label)
		if src.Kind == fixtures.QuantityCount && q.d == 1 && q.n > 1 {
			l.Hold = q.n * Pad(priceOf(cp.Pricing, ratio{1, 1}))
			out.Takes = int(q.n)
		} else {
			out.Takes = 1
		}
		out.Generations = []Line{l}
	case fixtures.VariantBatch:
		takes := count
		if takes <= 0 {
			v, _ := Field(cp, config, "count")
			n, ok := intValue(v)
			if !ok {
				n = 1
			}
			takes = n
		}
		takes = max(takes, 1)
		for i := 1; i <= int(takes); i++ {
			lbl := label
			if takes > 1 {
				lbl = fmt.Sprintf("%s (take %d)", label, i)
			}
			l := line(lbl)
			l.Take = i
			out.Generations = append(out.Generations, l)
		}
		out.Takes = int(takes)
	default:
		var values []string
		if cp.FanOutField != "" {
			arr, _ := config[cp.FanOutField].([]any)
			for _, e := range arr {
				values = append(values, fmt.Sprint(e))
			}
		}
		if len(values) == 0 {
			out.Generations = []Line{line(label)}
		} else {
			for _, val := range values {
				lbl := label
				if len(values) > 1 {
					lbl = fmt.Sprintf("%s (%s)", label, val)
				}
				l := line(lbl)
				l.FanOut = val
				out.Generations = append(out.Generations, l)
			}
		}
		out.Takes = len(out.Generations)
	}
	for _, l := range out.Generations {
		out.Credits += l.Credits
		out.MaxCreditsNeeded += l.Hold
	}
	out.Seconds = seconds(cp, config, q, exactMS)
	return out, nil
}

// seconds is the length of one output of an audio or video capability: the
// exact upload or approved-voice length when known, q for unit second, else
// the output's duration rule (field, fixed, script).
func seconds(cp *fixtures.Capability, config map[string]any, q ratio, exactMS int64) *float64 {
	if cp.OutputKind != fixtures.OutputVideo && cp.OutputKind != fixtures.OutputAudio {
		return nil
	}
	var s float64
	switch {
	case exactMS >= 0:
		s = float64(exactMS) / 1000
	case cp.Pricing.Unit == fixtures.UnitSecond:
		s = q.float()
	default:
		d, err := fixtures.ParseDurationSource(cp.Output.DurationFrom)
		if err != nil {
			return nil
		}
		switch d.Kind {
		case fixtures.DurationFixed, fixtures.DurationField:
			s, _ = OutputSeconds(cp, config, Lengths{})
		case fixtures.DurationScriptSeconds:
			s, _ = OutputSeconds(cp, config, Lengths{})
			s = math.Round(s*1000) / 1000
		default:
			s = q.float()
		}
	}
	return &s
}

// Outputs is how many output files one generation of cp makes when its quote has takes takes:
// none for a text result (it answers output_text), every take for an image model (variant_mode
// outputs: one generation making them all), else one.
func Outputs(cp *fixtures.Capability, takes int) int {
	switch {
	case cp.OutputKind == fixtures.OutputText:
		return 0
	case cp.VariantMode == fixtures.VariantOutputs:
		return max(takes, 1)
	}
	return 1
}
