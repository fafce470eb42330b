package api

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/mediaspec/mediaspec/internal/mock/jobs"
)

// The answer of GET /generations/{id} is the mock's most frequent one (clients poll it), so it is
// encoded without reflection: appendReadAnswer writes exactly the bytes json.Marshal writes for a
// readAnswer (TestReadAnswerJSONIsMarshal compares them over random answers, so a field added to
// jobs.GenerationDoc and not here fails it). Strings of printable ASCII are written here; any
// other string, and the raw result, go through encoding/json itself.

// appendReadAnswer appends a's JSON as json.Marshal writes it (GET /generations/{id}, get).
func appendReadAnswer(b []byte, a *readAnswer) ([]byte, error) {
	b = append(b, `{"ok":`...)
	b = strconv.AppendBool(b, a.OK)
	b = append(b, `,"generation":`...)
	b, err := appendGenerationDoc(b, &a.Generation)
	if err != nil {
		return b, err
	}
	if a.OutputURLsExpireInSeconds != nil {
		b = append(b, `,"output_urls_expire_in_seconds":`...)
		b = strconv.AppendInt(b, int64(*a.OutputURLsExpireInSeconds), 10)
	}
	return append(b, '}'), nil
}

func appendGenerationDoc(b []byte, d *jobs.GenerationDoc) ([]byte, error) {
	b = append(b, `{"generation_id":`...)
	b = appendString(b, d.GenerationID)
	b = append(b, `,"capability_id":`...)
	b = appendStringPtr(b, d.CapabilityID)
	b = append(b, `,"status":`...)
	b = appendString(b, string(d.Status))
	b = append(b, `,"source":`...)
	b = appendString(b, d.Source)
	b = append(b, `,"purpose":`...)
	b = appendStringPtr(b, d.Purpose)
	b = append(b, `,"workflow_run_id":`...)
	b = appendStringPtr(b, d.WorkflowRunID)
	b = append(b, `,"fan_out_label":`...)
	b = appendStringPtr(b, d.FanOutLabel)
	b = append(b, `,"output_kind":`...)
	b = appendStringPtr(b, d.OutputKind)
	b = append(b, `,"batch_group_id":`...)
	b = appendStringPtr(b, d.BatchGroupID)
	b = append(b, `,"batch_index":`...)
	b = appendIntPtr(b, d.BatchIndex)
	b = append(b, `,"outputs":`...)
	if d.Outputs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range d.Outputs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendOutputDoc(b, &d.Outputs[i])
		}
		b = append(b, ']')
	}
	b = append(b, `,"outputs_expected":`...)
	b = strconv.AppendInt(b, int64(d.OutputsExpected), 10)
	b = append(b, `,"outputs_delivered":`...)
	b = strconv.AppendInt(b, int64(d.OutputsDelivered), 10)
	c := &d.Credits
	b = append(b, `,"credits":{"credits_held":`...)
	b = strconv.AppendInt(b, c.CreditsHeld, 10)
	b = append(b, `,"credits_charged":`...)
	b = appendInt64Ptr(b, c.CreditsCharged)
	b = append(b, `,"settlement":`...)
	b = appendString(b, c.Settlement)
	b = append(b, `,"terminal":`...)
	b = strconv.AppendBool(b, c.Terminal)
	if c.WalletBalance != nil {
		b = append(b, `,"wallet_balance":`...)
		b = strconv.AppendInt(b, *c.WalletBalance, 10)
	}
	b = append(b, `},"charge_summary":`...)
	b = appendString(b, d.ChargeSummary)
	b = append(b, `,"credits_estimated":`...)
	b = strconv.AppendInt(b, d.CreditsEstimated, 10)
	if d.CreditsLeft != nil {
		b = append(b, `,"credits_left":`...)
		b = strconv.AppendInt(b, *d.CreditsLeft, 10)
	}
	b = append(b, `,"error":`...)
	if d.Error == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"code":`...)
		b = appendStringPtr(b, d.Error.Code)
		b = append(b, `,"message":`...)
		b = appendString(b, d.Error.Message)
		b = append(b, '}')
	}
	b = append(b, `,"has_result":`...)
	b = strconv.AppendBool(b, d.HasResult)
	if d.OutputText != nil {
		b = append(b, `,"output_text":`...)
		b = appendString(b, *d.OutputText)
	}
	if len(d.Result) > 0 {
		// encoding/json checks, compacts and HTML-escapes a raw message: let it.
		raw, err := json.Marshal(d.Result)
		if err != nil {
			return b, err
		}
		b = append(b, `,"result":`...)
		b = append(b, raw...)
	}
	b = append(b, `,"created_at":`...)
	b = appendString(b, d.CreatedAt)
	b = append(b, `,"updated_at":`...)
	b = appendString(b, d.UpdatedAt)
	b = append(b, `,"completed_at":`...)
	b = appendStringPtr(b, d.CompletedAt)
	return append(b, '}'), nil
}

func appendOutputDoc(b []byte, o *jobs.OutputDoc) []byte {
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, int64(o.Index), 10)
	b = append(b, `,"kind":`...)
	b = appendString(b, o.Kind)
	b = append(b, `,"asset_id":`...)
	b = appendStringPtr(b, o.AssetID)
	b = append(b, `,"url":`...)
	b = appendStringPtr(b, o.URL)
	b = append(b, `,"file_name":`...)
	b = appendStringPtr(b, o.FileName)
	b = append(b, `,"width":`...)
	b = appendIntPtr(b, o.Width)
	b = append(b, `,"height":`...)
	b = appendIntPtr(b, o.Height)
	b = append(b, `,"duration_ms":`...)
	b = appendInt64Ptr(b, o.DurationMS)
	return append(b, '}')
}

// appendString appends s as a JSON string the way encoding/json writes it: printable ASCII is
// copied, with < > & escaped as \u003c \u003e \u0026 (links carry &); a string with anything
// else (a quote, a backslash, a control character, non-ASCII) is left to encoding/json.
func appendString(b []byte, s string) []byte {
	start := len(b)
	b = append(b, '"')
	done := 0
	for i := 0; i < len(s); i++ {
		switch stringClass[s[i]] {
		case plainByte:
		case htmlByte:
			b = append(b, s[done:i]...)
			b = append(b, '\\', 'u', '0', '0', hexDigits[s[i]>>4], hexDigits[s[i]&0xf])
			done = i + 1
		default:
			q, _ := json.Marshal(s) // a string always encodes
			return append(b[:start], q...)
		}
	}
	b = append(b, s[done:]...)
	return append(b, '"')
}

const (
	plainByte = iota // copied as it is
	htmlByte         // < > &: \u00XX
	otherByte        // left to encoding/json
)

const hexDigits = "0123456789abcdef"

// stringClass sorts the bytes of a string for appendString.
var stringClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\':
			t[c] = otherByte
		case c == '<' || c == '>' || c == '&':
			t[c] = htmlByte
		}
	}
	return t
}()

func appendStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

func appendIntPtr(b []byte, n *int) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*n), 10)
}

func appendInt64Ptr(b []byte, n *int64) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, *n, 10)
}
