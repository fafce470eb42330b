package catalog

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/mediaspec/mediaspec/fixtures"
)

// ActorRow is a GET /actors row (openapi Actor).
type ActorRow struct {
	ActorID          string   `json:"actor_id"`
	Name             string   `json:"name"`
	Description      *string  `json:"description"`
	Gender           *string  `json:"gender"`
	AgeBand          *string  `json:"age_band"`
	Tags             []string `json:"tags"`
	DefaultVoiceID   *string  `json:"default_voice_id"`
	DefaultVoiceName *string  `json:"default_voice_name"`
	IsPlatform       bool     `json:"is_platform"`
}

// VoiceRow is a GET /voices row (openapi Voice).
type VoiceRow struct {
	VoiceID    string   `json:"voice_id"`
	Name       string   `json:"name"`
	Language   *string  `json:"language"`
	Gender     *string  `json:"gender"`
	Tags       []string `json:"tags"`
	IsCloned   bool     `json:"is_cloned"`
	IsPremium  bool     `json:"is_premium"`
	IsPlatform bool     `json:"is_platform"`
}

// Actor groups, in list order.
const (
	groupOwn = iota
	groupCore
	groupRest
)

// ActorVisible reports whether the viewer sees the actor as served now (Catalog.Actor): ready, and either
// the viewer's own actor or a cast actor whose min_plan (default pro) the
// viewer's plan covers. Use it for actor_id checks too.
func (c *Catalog) ActorVisible(a *fixtures.Actor, v Viewer) bool {
	if a.State != fixtures.ActorReady {
		return false
	}
	if !a.IsPlatform {
		return c.owns(v, a.WorkspaceID)
	}
	need := fixtures.PlanPro
	if a.MinPlan != nil {
		need = *a.MinPlan
	}
	return v.Plan.Covers(need)
}

// VoiceVisible reports whether the viewer sees the voice as served now (Catalog.Voice): active, and a
// platform voice or the viewer's own cloned voice.
func (c *Catalog) VoiceVisible(vc *fixtures.Voice, v Viewer) bool {
	if !vc.Active {
		return false
	}
	if vc.IsPlatform {
		return true
	}
	return c.owns(v, vc.WorkspaceID)
}

func actorGroup(a *fixtures.Actor) int {
	switch {
	case !a.IsPlatform:
		return groupOwn
	case a.CoreCast:
		return groupCore
	}
	return groupRest
}

// actorKey is the keyset position of an actor in list order.
type actorKey struct {
	G  int    `json:"g"`
	T  int64  `json:"t"` // created_at, Unix nanoseconds
	ID string `json:"id"`
}

func keyOf(a *fixtures.Actor) actorKey {
	return actorKey{G: actorGroup(a), T: a.CreatedAt.UnixNano(), ID: a.ID}
}

// compareKeys orders group ascending, then newest first, then id.
func compareKeys(x, y actorKey) int {
	if c := cmp.Compare(x.G, y.G); c != 0 {
		return c
	}
	if c := cmp.Compare(y.T, x.T); c != 0 {
		return c
	}
	return strings.Compare(x.ID, y.ID)
}

// EncodeActorCursor renders a keyset position as base64url (no padding).
func encodeActorCursor(k actorKey) string {
	b, _ := json.Marshal(k) // a struct of ints and a string: cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeActorCursor reads a cursor; ok false for anything unreadable.
func decodeActorCursor(s string) (actorKey, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return actorKey{}, false
	}
	var k actorKey
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&k); err != nil || k.G < groupOwn || k.G > groupRest || k.ID == "" {
		return actorKey{}, false
	}
	return k, true
}

func matches(s *string, lowered string) bool {
	return s != nil && strings.Contains(strings.ToLower(*s), lowered)
}

// ListActors answers one page of GET /actors: the viewer's visible actors
// whose name or description contains search (case-insensitive, every
// character literal; "" matches all), own first, then the core cast, then
// the rest, newest first in each group. limit is clamped like every list
// (ClampLimit) and a page holds at most MaxActorsPage. cursor is the opaque
// keyset of the previous page's last row; an unreadable one restarts from
// the top. next is "" on the last page.
func (c *Catalog) ListActors(v Viewer, search string, limit int, cursor string) (rows []ActorRow, next string) {
	q := strings.ToLower(search)
	c.st.mu.RLock()
	defer c.st.mu.RUnlock()
	var all []*fixtures.Actor
	for _, a := range c.allActorsLocked() {
		if !c.ActorVisible(a, v) {
			continue
		}
		if q != "" && !matches(&a.Name, q) && !matches(a.Description, q) {
			continue
		}
		all = append(all, a)
	}
	slices.SortFunc(all, func(x, y *fixtures.Actor) int { return compareKeys(keyOf(x), keyOf(y)) })
	start := 0
	if cursor != "" {
		if k, ok := decodeActorCursor(cursor); ok {
			start, _ = slices.BinarySearchFunc(all, k, func(a *fixtures.Actor, k actorKey) int { return compareKeys(keyOf(a), k) })
			if start < len(all) && keyOf(all[start]) == k {
				start++
			}
		}
	}
	size := min(ClampLimit(limit), MaxActorsPage)
	end := min(start+size, len(all))
	page := all[start:end]
	rows = make([]ActorRow, len(page))
	for i, a := range page {
		r := ActorRow{
			ActorID: a.ID, Name: a.Name, Description: a.Description, Gender: a.Gender, AgeBand: a.AgeBand,
			Tags: a.Tags, DefaultVoiceID: a.DefaultVoiceID, IsPlatform: a.IsPlatform,
		}
		if a.DefaultVoiceID != nil {
			if vc, ok := c.voiceLocked(*a.DefaultVoiceID); ok {
				name := vc.Name
				r.DefaultVoiceName = &name
			}
		}
		rows[i] = r
	}
	if end < len(all) && len(page) > 0 {
		next = encodeActorCursor(keyOf(page[len(page)-1]))
	}
	return rows, next
}

// ListVoices answers one page of GET /voices: the viewer's visible voices
// whose name contains search (case-insensitive; "" matches all) and, when
// language is not "", whose language equals it exactly; sorted by name
// (then id). total counts the matches before paging. cursor is an offset as
// a decimal string; an unreadable or negative one restarts from the first
// page. next is "" on the last page.
func (c *Catalog) ListVoices(v Viewer, search, language string, limit int, cursor string) (rows []VoiceRow, total int, next string) {
	q := strings.ToLower(search)
	c.st.mu.RLock()
	defer c.st.mu.RUnlock()
	var all []*fixtures.Voice
	for _, vc := range c.allVoicesLocked() {
		if !c.VoiceVisible(vc, v) {
			continue
		}
		if q != "" && !strings.Contains(strings.ToLower(vc.Name), q) {
			continue
		}
		if language != "" && (vc.Language == nil || *vc.Language != language) {
			continue
		}
		all = append(all, vc)
	}
	slices.SortFunc(all, func(x, y *fixtures.Voice) int {
		return cmp.Or(strings.Compare(x.Name, y.Name), strings.Compare(x.ID, y.ID))
	})
	start := 0
	if cursor != "" {
		if n, err := strconv.Atoi(cursor); err == nil && n >= 0 {
			start = min(n, len(all))
		}
	}
	end := min(start+ClampLimit(limit), len(all))
	page := all[start:end]
	rows = make([]VoiceRow, len(page))
	for i, vc := range page {
		rows[i] = VoiceRow{
			VoiceID: vc.ID, Name: vc.Name, Language: vc.Language, Gender: vc.Gender, Tags: vc.Tags,
			IsCloned: vc.IsCloned, IsPremium: vc.IsPremium, IsPlatform: vc.IsPlatform,
		}
	}
	if end < len(all) {
		next = strconv.Itoa(end)
	}
	return rows, len(all), next
}
