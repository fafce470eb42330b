package catalogue

import (
	"context"
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2" //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/answer"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	"github.com/mediaspec/mediaspec/conformance/internal/paging"
)

// PresetRows walks GET /presets.
func PresetRows(ctx context.Context, c *framework.Client) []map[string]any {
	GinkgoHelper()
	rows, _ := paging.Walk(ctx, c, "/presets", "presets", 50, 20)
	return rows
}

// TemplatePreset picks an available preset that requires a template and has at least n live
// templates, and returns its detail and its template ids; it skips the spec when none has.
func TemplatePreset(ctx context.Context, c *framework.Client, n int) (*framework.Response, []string) {
	GinkgoHelper()
	for _, row := range PresetRows(ctx, c) {
		if row["status"] != "available" || row["requires_template"] != true {
			continue
		}
		if total, _ := framework.AsInt(row["templates_total"]); total < int64(n) {
			continue
		}
		id := row["capability_id"].(string)
		tpls := TemplateIDs(c.Get(ctx, "/presets/"+id+"/templates").ExpectOK(http.StatusOK))
		if len(tpls) >= n {
			return Detail(ctx, c, id), tpls
		}
	}
	c.Lacks("the target lists no available preset requiring a template with %d live templates", n)
	return nil, nil
}

// TemplateIDs returns the template ids of a GET /presets/{id}/templates answer, in its order.
func TemplateIDs(t *framework.Response) []string {
	GinkgoHelper()
	var out []string
	for i, v := range t.Array("templates") {
		out = append(out, answer.String(t, answer.AsObject(t, v, fmt.Sprintf("templates[%d]", i)), "template_id", "template"))
	}
	return out
}
