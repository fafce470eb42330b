package control_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mediaspec/mediaspec/fixtures"
)

// TestCapabilityCopyHook: copies made through control show in their workspace's capability and
// preset lists only, in list order and counted in total, answer coming_soon on their detail, are
// refused with the documented errors, and leave with reset.
func TestCapabilityCopyHook(t *testing.T) {
	s, do := catalogueServer(t)
	key := s.Info().GenerateKey
	ws := s.DefaultWorkspaceID()
	_, other := do("POST", "/_control/v1/workspaces", ctl, `{"name":"other","plan":"pro"}`)
	otherWS := other["workspace_id"].(string)
	_, k := do("POST", "/_control/v1/workspaces/"+otherWS+"/keys", ctl, `{"scopes":["read"]}`)
	otherKey := k["key"].(string)

	listIDs := func(key, path, field string) ([]string, float64) {
		t.Helper()
		var out []string
		cursor, total := "", -1.0
		for range 20 {
			q := path + "?limit=50"
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			code, m := do("GET", q, key, "")
			if code != 200 {
				t.Fatalf("%s %d %v", q, code, m)
			}
			if n, ok := m["total"].(float64); ok {
				total = n
			}
			for _, r := range m[field].([]any) {
				out = append(out, r.(map[string]any)["capability_id"].(string))
			}
			next, _ := m["next_cursor"].(string)
			if next == "" {
				return out, total
			}
			cursor = next
		}
		t.Fatalf("%s: no end", path)
		return nil, 0
	}
	capsBefore, _ := listIDs(key, "/api/v1/capabilities", "capabilities")
	presetsBefore, totalBefore := listIDs(key, "/api/v1/presets", "presets")

	copyOf := func(src, id string) (int, map[string]any) {
		return do("POST", "/_control/v1/workspaces/"+ws+"/capabilities", ctl, fmt.Sprintf(`{"copy_of":%q,"capability_id":%q}`, src, id))
	}
	// Made out of order; the lists sort them.
	var made []string
	for i := 60; i > 0; i-- {
		id := fmt.Sprintf("preset_zz_copy_%02d", i)
		if code, m := copyOf("preset_ugc_screenshot", id); code != 201 || m["status"] != "coming_soon" || m["category"] != "preset" {
			t.Fatalf("copy %d %v", code, m)
		}
		made = append(made, id)
	}
	if code, m := copyOf("image_fast", "aaa_image_copy"); code != 201 || m["category"] != "image" {
		t.Fatalf("copy image %d %v", code, m)
	}

	caps, _ := listIDs(key, "/api/v1/capabilities", "capabilities")
	if len(caps) != len(capsBefore)+61 || !slices.Contains(caps, "aaa_image_copy") {
		t.Fatalf("capability list: %d rows, was %d", len(caps), len(capsBefore))
	}
	presets, total := listIDs(key, "/api/v1/presets", "presets")
	if len(presets) != len(presetsBefore)+60 || total != totalBefore+60 || !slices.IsSorted(presets) {
		t.Fatalf("preset list: %d rows, total %v (was %d, %v): %v", len(presets), total, len(presetsBefore), totalBefore, presets)
	}
	// Category order then id: the image copy sits among the images, before the presets.
	fx, err := fixtures.Load()
	if err != nil {
		t.Fatal(err)
	}
	rank := func(id string) int {
		if cp, ok := fx.Capability(id); ok {
			return cp.Category.Rank()
		}
		if strings.HasPrefix(id, "preset_") {
			return fixtures.CategoryPreset.Rank()
		}
		return fixtures.CategoryImage.Rank()
	}
	if !slices.IsSortedFunc(caps, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	}) {
		t.Fatalf("capability list not in category then id order: %v", caps)
	}
	for _, n := range []string{"", "25", "0", "abc"} {
		_, m := do("GET", "/api/v1/presets?limit="+n, key, "")
		if got, want := len(m["presets"].([]any)), map[string]int{"": 25, "25": 25, "0": 1, "abc": 25}[n]; got != want {
			t.Fatalf("presets limit=%q: %d rows, want %d", n, got, want)
		}
	}
	if code, m := do("GET", "/api/v1/capabilities/"+made[0], key, ""); code != 404 || errCode(m) != "capability_unavailable" || m["error"].(map[string]any)["capability_status"] != "coming_soon" {
		t.Fatalf("copy detail %d %v", code, m)
	}
	if code, m := do("GET", "/api/v1/presets/"+made[0]+"/templates", key, ""); code != 200 || m["status"] != "coming_soon" || len(m["templates"].([]any)) != 0 {
		t.Fatalf("copy templates %d %v", code, m)
	}
	// Another workspace sees none of them.
	if got, _ := listIDs(otherKey, "/api/v1/capabilities", "capabilities"); !slices.Equal(got, capsBefore) {
		t.Fatalf("another workspace sees copies: %v", got)
	}
	if code, m := do("GET", "/api/v1/capabilities/"+made[0], otherKey, ""); code != 404 || m["error"].(map[string]any)["capability_status"] != "unknown" {
		t.Fatalf("copy detail in another workspace %d %v", code, m)
	}

	for _, c := range []struct {
		body        string
		ws          string
		status      int
		code, field string
	}{
		{`{"copy_of":"no_such_thing","capability_id":"abc_copy"}`, ws, 404, "not_found", ""},
		{`{"copy_of":"image_fast","capability_id":"Bad Id"}`, ws, 400, "invalid_config", "capability_id"},
		{`{"copy_of":"image_fast","capability_id":"preset_not_a_preset"}`, ws, 400, "invalid_config", "capability_id"},
		{`{"copy_of":"preset_ugc_screenshot","capability_id":"not_prefixed"}`, ws, 400, "invalid_config", "capability_id"},
		{`{"copy_of":"image_fast"}`, ws, 400, "invalid_config", "capability_id"},
		{`{"capability_id":"abc_copy"}`, ws, 400, "invalid_config", "copy_of"},
		{`{"copy_of":"image_fast","capability_id":"abc_copy","extra":1}`, ws, 400, "invalid_config", "extra"},
		{`{"copy_of":"image_fast","capability_id":"aaa_image_copy"}`, ws, 409, "invalid_config", "capability_id"},
		{`{"copy_of":"image_fast","capability_id":"tts"}`, ws, 409, "invalid_config", "capability_id"},
		{`{"copy_of":"image_fast","capability_id":"abc_copy"}`, "ws_" + strings.Repeat("0", 32), 404, "not_found", ""},
	} {
		code, m := do("POST", "/_control/v1/workspaces/"+c.ws+"/capabilities", ctl, c.body)
		if code != c.status || errCode(m) != c.code || (c.field != "" && errField(m) != c.field) {
			t.Errorf("%s: %d %v, want %d %s naming %q", c.body, code, m, c.status, c.code, c.field)
		}
	}
	// The same id in another workspace is its own copy.
	if code, m := do("POST", "/_control/v1/workspaces/"+otherWS+"/capabilities", ctl, `{"copy_of":"image_fast","capability_id":"aaa_image_copy"}`); code != 201 {
		t.Fatalf("copy in another workspace %d %v", code, m)
	}

	do("POST", "/_control/v1/reset", ctl, "")
	key = s.Info().GenerateKey
	if got, _ := listIDs(key, "/api/v1/capabilities", "capabilities"); !slices.Equal(got, capsBefore) {
		t.Fatalf("reset left copies: %v", got)
	}
}
