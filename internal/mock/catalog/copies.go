package catalog

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/internal/mock/apierr"
)

// Capability copies (control POST /workspaces/{id}/capabilities): extra rows one workspace's
// capability list (and preset list, for a copy of a preset) shows, so that a list of more than 50
// rows can be paged. A copy is the source's row under a new id with status coming_soon: it is
// listed like any capability in list order, and reading, estimating or running it is refused as
// for a capability that is coming soon (the detail answers 404 capability_unavailable
// coming_soon in its workspace; elsewhere the id is unknown). It never runs, so the estimate,
// submit and job paths see no copy at all. Reset removes every copy.

// copyIDRe is a capability id a copy may take: a slug (interface "Ids": capability ids are
// unprefixed slugs), at most 64 characters.
var copyIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`) })

// CopyCapability adds to workspaceID's lists a copy of listed capability sourceID under id.
// Refusals: 404 not_found for a source that is not a listed capability; 400 invalid_config
// naming capability_id for an id that is not a slug, or that breaks the preset_ prefix rule (a
// copy of a preset starts with preset_, a copy of anything else does not); 409 invalid_config
// naming capability_id for an id the catalogue or the workspace's copies already hold.
func (c *Catalog) CopyCapability(workspaceID, sourceID, id string) (*fixtures.Capability, error) {
	src, ok := c.Fixtures().Capability(sourceID)
	if !ok || !src.Listed() {
		return nil, apierr.NotFound("No listed capability " + quote(sourceID) + " to copy.")
	}
	switch {
	case !copyIDRe().MatchString(id):
		return nil, apierr.InvalidConfig("capability_id", "capability_id must be a slug: a lowercase letter or digit, then lowercase letters, digits, _ or - (at most 64).")
	case src.IsPreset() != strings.HasPrefix(id, "preset_"):
		return nil, apierr.InvalidConfig("capability_id", "A copy of a preset has an id starting with preset_, and only a preset's copy does.")
	}
	cp := *src
	cp.ID, cp.Status, cp.RequiredPlan, cp.OfferedToAgents = id, fixtures.StatusComingSoon, "", true
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	_, taken := c.Fixtures().Capability(id)
	if taken || slices.ContainsFunc(c.st.copies[workspaceID], func(x *fixtures.Capability) bool { return x.ID == id }) {
		e := apierr.InvalidConfig("capability_id", "Capability "+quote(id)+" already exists; pick another id.")
		e.Status = http.StatusConflict
		return nil, e
	}
	if c.st.copies == nil {
		c.st.copies = map[string][]*fixtures.Capability{}
	}
	// A new slice: readers keep the one they took under the lock.
	list := append(slices.Clone(c.st.copies[workspaceID]), &cp)
	slices.SortFunc(list, listOrder)
	c.st.copies[workspaceID] = list
	return &cp, nil
}

// listOrder orders capabilities as the lists do: category, then capability_id.
func listOrder(a, b *fixtures.Capability) int {
	if ra, rb := a.Category.Rank(), b.Category.Rank(); ra != rb {
		return ra - rb
	}
	return strings.Compare(a.ID, b.ID)
}

// copyOf returns workspaceID's copy with this id.
func (c *Catalog) copyOf(workspaceID, id string) (*fixtures.Capability, bool) {
	c.st.mu.RLock()
	defer c.st.mu.RUnlock()
	i := slices.IndexFunc(c.st.copies[workspaceID], func(x *fixtures.Capability) bool { return x.ID == id })
	if i < 0 {
		return nil, false
	}
	return c.st.copies[workspaceID][i], true
}

// withCopies merges workspaceID's copies into listed (in list order) keeping list order; keep
// filters the copies (nil keeps all).
func (c *Catalog) withCopies(workspaceID string, listed []*fixtures.Capability, keep func(*fixtures.Capability) bool) []*fixtures.Capability {
	c.st.mu.RLock()
	copies := c.st.copies[workspaceID]
	c.st.mu.RUnlock()
	if len(copies) == 0 {
		return listed
	}
	out := make([]*fixtures.Capability, 0, len(listed)+len(copies))
	out = append(out, listed...)
	for _, cp := range copies {
		if keep == nil || keep(cp) {
			out = append(out, cp)
		}
	}
	slices.SortStableFunc(out, listOrder)
	return out
}
