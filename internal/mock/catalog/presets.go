package catalog

import (
	"fmt"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
)

// Template is a preset template row (openapi PresetTemplate).
type Template struct {
	TemplateID  string  `json:"template_id"`
	Name        string  `json:"name"`
	Description *string `json:"description"`
	Category    *string `json:"category"`
	PreviewURL  string  `json:"preview_url"`
	PreviewKind string  `json:"preview_kind"`
}

// PresetRow is a GET /presets row (openapi PresetRow).
type PresetRow struct {
	CapabilityID     string     `json:"capability_id"`
	Name             string     `json:"name"`
	Description      string     `json:"description,omitempty"`
	OutputKind       string     `json:"output_kind"`
	Status           string     `json:"status"`
	RequiredPlan     string     `json:"required_plan,omitempty"`
	RequiresTemplate bool       `json:"requires_template"`
	Templates        []Template `json:"templates"`
	TemplatesTotal   int        `json:"templates_total"`
	NextAction       string     `json:"next_action"`
}

// PresetTemplates is the answer of GET /presets/{id}/templates without ok.
type PresetTemplates struct {
	CapabilityID     string     `json:"capability_id"`
	Name             string     `json:"name"`
	Status           string     `json:"status"`
	RequiresTemplate bool       `json:"requires_template"`
	RequiredPlan     string     `json:"required_plan,omitempty"`
	Templates        []Template `json:"templates"`
	NextAction       string     `json:"next_action"`
}

func (c *Catalog) templateOf(t *fixtures.Template) Template {
	return Template{
		TemplateID: t.ID, Name: t.Name, Description: t.Description, Category: t.Category,
		PreviewURL: c.previewURL(t), PreviewKind: t.PreviewKind,
	}
}

func (c *Catalog) templatesOf(ts []*fixtures.Template, n int) []Template {
	if n >= 0 && len(ts) > n {
		ts = ts[:n]
	}
	out := make([]Template, len(ts))
	for i, t := range ts {
		out[i] = c.templateOf(t)
	}
	return out
}

// presetStatuses are the statuses a preset row may carry.
func presetListed(cp *fixtures.Capability) bool {
	switch cp.Status {
	case fixtures.StatusAvailable, fixtures.StatusRequiresPlan, fixtures.StatusComingSoon:
		return true
	}
	return false
}

// visiblePresets are the presets GET /presets lists: listed preset
// capabilities and the viewer's preset copies, whose status a preset row can carry.
func (c *Catalog) visiblePresets(v Viewer) []*fixtures.Capability {
	var out []*fixtures.Capability
	for _, cp := range c.withCopies(v.WorkspaceID, c.listed(c.Fixtures().Presets()), (*fixtures.Capability).IsPreset) {
		if presetListed(cp) {
			out = append(out, cp)
		}
	}
	return out
}

func presetAdvice(cp *fixtures.Capability, st fixtures.Status, live int) string {
	switch {
	case st == fixtures.StatusRequiresPlan:
		return fmt.Sprintf("This preset needs the %s plan; it cannot run for this workspace.", cp.RequiredPlan)
	case st == fixtures.StatusComingSoon:
		return "This preset is coming soon and cannot run yet."
	case cp.RequiresTemplate && live == 0:
		return "This preset needs a template and has no live template now, so it cannot run."
	case cp.RequiresTemplate:
		return "Pick a template_id from templates (all of them: GET /presets/" + cp.ID + "/templates), read GET /capabilities/" + cp.ID + ", estimate, then submit."
	}
	return "Read GET /capabilities/" + cp.ID + " for the config schema, estimate, then submit."
}

// ListPresets answers one page of GET /presets: rows with their first 20
// live templates, total (every preset the workspace can see), and the next
// cursor (last row's capability_id; "" on the last page; a cursor naming no
// listed preset restarts from the first page).
func (c *Catalog) ListPresets(v Viewer, limit int, cursor string) (rows []PresetRow, total int, next string) {
	all := c.visiblePresets(v)
	page, next := pageAfter(all, func(cp *fixtures.Capability) string { return cp.ID }, ClampLimit(limit), cursor)
	rows = make([]PresetRow, len(page))
	for i, cp := range page {
		st := StatusFor(cp, v)
		live := c.liveTemplatesOf(cp.ID)
		r := PresetRow{
			CapabilityID: cp.ID, Name: cp.Name, Description: cp.DescriptionText(), OutputKind: string(cp.OutputKind),
			Status: string(st), RequiresTemplate: cp.RequiresTemplate,
			Templates: c.templatesOf(live, PresetPreviewN), TemplatesTotal: len(live),
			NextAction: presetAdvice(cp, st, len(live)),
		}
		if st == fixtures.StatusRequiresPlan {
			r.RequiredPlan = string(cp.RequiredPlan)
		}
		rows[i] = r
	}
	return rows, len(all), next
}

// PresetTemplates answers GET /presets/{id}/templates: every live template
// in gallery order. A non-preset id, an unknown id, or a retired or internal
// preset is 404 not_found; a preset above the viewer's plan answers 200 with
// status requires_plan.
func (c *Catalog) PresetTemplates(v Viewer, id string) (PresetTemplates, error) {
	cp, ok := c.Fixtures().Capability(id)
	if ok {
		cp = c.view(cp)
	} else {
		cp, ok = c.copyOf(v.WorkspaceID, id)
	}
	if !ok || !cp.IsPreset() || !cp.Listed() || !presetListed(cp) {
		return PresetTemplates{}, apierr.NotFound("No preset " + quote(id) + "; read GET /presets for the current presets.")
	}
	st := StatusFor(cp, v)
	live := c.liveTemplatesOf(cp.ID)
	out := PresetTemplates{
		CapabilityID: cp.ID, Name: cp.Name, Status: string(st), RequiresTemplate: cp.RequiresTemplate,
		Templates: c.templatesOf(live, -1), NextAction: presetAdvice(cp, st, len(live)),
	}
	if st == fixtures.StatusRequiresPlan {
		out.RequiredPlan = string(cp.RequiredPlan)
	}
	return out, nil
}
