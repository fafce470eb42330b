package wrongservers

import (
	"net/http"
)

// shape is the keys the interface text lists for an object: a key maps to the shape of its value
// (applied to an object, or to each object of an array), or to nil to keep the value as it is. A
// key the shape does not list is dropped: a server may leave out what the text does not show.
type shape map[string]shape

// keep drops from v every key the shape does not list, at every depth the shape describes.
func (s shape) keep(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			sub, listed := s[k]
			if !listed {
				delete(x, k)
				continue
			}
			if sub != nil {
				sub.keep(c)
			}
		}
	case []any:
		for _, c := range x {
			s.keep(c)
		}
	}
}

// with is a copy of s with more keys.
func (s shape) with(more shape) shape {
	out := shape{}
	for k, v := range s {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

func keys(names ...string) shape {
	s := shape{}
	for _, n := range names {
		s[n] = nil
	}
	return s
}

// The shapes the text lists (Resources and their fields, Endpoints, Events).
var (
	creditsShown = keys("credits_held", "credits_charged", "settlement", "terminal", "wallet_balance")
	// generationShown is the Generation table; fan_out_label is shown on fan-out jobs (Submit
	// rule 4), so listedGeneration keeps it only when set.
	generationShown = keys("generation_id", "capability_id", "status", "batch_group_id", "batch_index",
		"outputs_expected", "outputs_delivered", "charge_summary", "credits_estimated", "created_at",
		"completed_at", "has_result", "output_text", "result", "credits_left", "fan_out_label").with(shape{
		"outputs": keys("index", "kind", "url", "file_name", "width", "height", "asset_id"),
		"credits": creditsShown,
		"error":   keys("code", "message"),
	})
	readShown  = shape{"ok": nil, "generation": generationShown, "output_urls_expire_in_seconds": nil}
	waitShown  = readShown.with(keys("still_running", "waited_seconds", "age_seconds", "retry_after_seconds", "next_action"))
	submitShow = keys("ok", "generation_id", "generation_ids", "run_id", "batch_group_id", "replay", "capability_id",
		"capability_name", "output_kind", "outputs_expected", "charge_summary", "next_action", "summary").with(shape{"credits": creditsShown})
	estimateShown = keys("ok", "capability_id", "credits", "max_credits_needed", "is_ceiling", "seconds", "note", "summary").with(shape{
		"breakdown": keys("label", "unit", "quantity", "credits"),
	})
	batchShown = keys("ok", "batch_group_id", "status", "variants", "variants_finished", "outputs_delivered",
		"charge_summary", "next_action", "output_urls_expire_in_seconds").with(shape{
		"credits":     keys("credits_held", "credits_charged", "settlement", "terminal"),
		"generations": keys("generation_id", "batch_index", "status"),
	})

	capabilityRow         = keys("capability_id", "output_kind", "status", "category", "required_plan")
	capabilityDetailShown = capabilityRow.with(keys("ok", "config_schema", "example_config"))
	templateShown         = keys("template_id", "name", "description", "category", "preview_url", "preview_kind")
	presetShown           = keys("capability_id", "name", "description", "output_kind", "status", "required_plan",
		"requires_template", "templates_total", "next_action").with(shape{"templates": templateShown})
	presetTemplates = keys("ok", "capability_id", "name", "status", "requires_template", "required_plan", "next_action").with(shape{"templates": templateShown})
	actorShown      = keys("actor_id", "name", "description", "gender", "age_band", "tags", "default_voice_id", "default_voice_name", "is_platform")
	voiceShown      = keys("voice_id", "name", "language", "gender", "tags", "is_cloned", "is_premium", "is_platform")

	reservationShown = keys("ok", "asset_id", "upload_url", "upload_expires_at", "upload_expires_in_seconds", "kind",
		"content_type", "size_bytes", "max_bytes_for_kind", "content_checked", "next_action")
	finalizeShown = keys("ok", "asset_id", "scan_status", "usable", "kind", "duration_ms", "next_action")

	endpointShown = keys("webhook_id", "url", "events", "status", "consecutive_failures", "description", "created_at", "updated_at")

	errorShown = shape{"error": keys("ok", "code", "message", "retryable", "credits_charged", "retry_after_seconds",
		"capability_status", "required_plan", "shortfall", "blocked_reason").with(shape{
		"limit":     keys("bound_by", "required_credits"),
		"in_flight": keys("generation_id", "status"),
	})}

	eventCredits        = keys("credits_held", "credits_charged", "settlement", "terminal")
	generationEventData = keys("generation_id", "capability_id", "status", "output_kind", "outputs_expected",
		"outputs_delivered", "charge_summary", "batch_group_id", "batch_index", "workflow_run_id", "purpose",
		"created_at", "completed_at", "disclosure").with(shape{
		"outputs": keys("index", "asset_id", "kind"),
		"credits": eventCredits,
		"error":   keys("code", "message"),
	})
	eventShown = map[string]shape{
		"generation.completed": {"data": generationEventData},
		"generation.failed":    {"data": generationEventData},
		"batch.settled": {"data": keys("batch_group_id", "status", "variants", "variants_finished", "outputs_delivered",
			"charge_summary", "disclosure").with(shape{"credits": eventCredits, "generations": generationEventData})},
		"workflow_run.completed": {"data": runEventData},
		"workflow_run.failed":    {"data": runEventData},
		"credits.low":            {"data": keys("available_credits", "threshold_credits")},
		"webhook.test":           {"data": keys("webhook_id", "message")},
	}
	runEventData = keys("workflow_run_id", "workflow_id", "status", "started_at", "finished_at", "disclosure").with(shape{
		"credits": keys("credits_estimated", "credits_charged", "settlement", "terminal"),
		"nodes":   keys("node_id", "label", "status", "credits", "generation_ids").with(shape{"error": keys("code", "message")}),
	})
)

// listedOnly answers matching calls' successes with only the keys shape lists.
func listedOnly(m matcher, s shape) Wrap {
	return docs(m, success, func(_ *http.Request, _ *answer, d map[string]any) { s.keep(d) })
}

// eventsListedOnly keeps only the keys the Events section lists in each delivery (the envelope's
// id, type, created_at and data).
func eventsListedOnly() Wrap {
	return hookDocs(func(d map[string]any) {
		t, _ := d["type"].(string)
		s := keys("id", "type", "created_at", "data")
		if ev, ok := eventShown[t]; ok {
			s = s.with(ev)
		}
		s.keep(d)
	}, nil)
}

// withoutNullFanOut drops fan_out_label where it is null: the text shows it on fan-out jobs.
func withoutNullFanOut(v any) {
	eachObject(v, func(o map[string]any) {
		if l, has := o["fan_out_label"]; has && l == nil {
			delete(o, "fan_out_label")
		}
	})
}
