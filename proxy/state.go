package proxy

import (
	"container/list"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Bounds of what the proxy remembers across exchanges.
const (
	// MaxGenerations is how many generations' last seen status (and submit facts) are kept.
	MaxGenerations = 8192
	// MaxWalks is how many cursor walks are followed at once.
	MaxWalks = 256
	// MaxWalkRows is how many row ids one walk remembers.
	MaxWalkRows = 4096
	// MaxKeys is how many keys are mapped to a workspace.
	MaxKeys = 4096
)

// state is what the proxy remembers across exchanges: each generation's last seen status, the
// cursor walks in progress, which workspace a key belongs to. Every map is an LRU of fixed size.
// The judging goroutine owns it; workspaceOf and joinWorkspace may be called from it only.
type state struct {
	mu         sync.Mutex // guards everything below (Clear runs on another goroutine)
	gens       *lru[*genSeen]
	walks      *lru[*walk]
	workspaces *lru[string]
	balances   *lru[[]*balanceRead] // per workspace, the latest balance reads (ledger.go)
	buckets    *lru[*bucketSeen]    // per key and bucket (buckets.go)
	exempt     *lru[bool]           // keys whose buckets the control API changed
	controlIDs *lru[string]         // the control API's key_id -> KeyID
	bucketsOff bool                 // the control API changed the buckets of a key the proxy cannot name
}

// genSeen is the last observation of one generation.
type genSeen struct {
	status   string
	endedAt  time.Time // end of the exchange that showed it
	exchange int64
	expected string // outputs_expected of the submit answer ("" unknown)
	charged  string // credits_charged once terminal ("" while not final)

	// The hold its submit took, when the proxy saw the submit: credits_held, the end of the
	// submit's exchange, its number and the workspace.
	held      int64
	heldKnown bool
	submitEnd time.Time
	submitN   int64
	workspace string
}

// walk is one cursor walk: the next_cursor the last page handed out and the rows seen so far.
type walk struct {
	next string
	rows map[string]bool
}

func newState() *state {
	s := &state{}
	s.reset()
	return s
}

func (s *state) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gens = newLRU[*genSeen](MaxGenerations)
	s.walks = newLRU[*walk](MaxWalks)
	s.workspaces = newLRU[string](MaxKeys)
	s.balances = newLRU[[]*balanceRead](MaxKeys)
	s.buckets = newLRU[*bucketSeen](MaxKeys)
	s.exempt = newLRU[bool](MaxKeys)
	s.controlIDs = newLRU[string](MaxKeys)
	s.bucketsOff = false
}

func (s *state) joinWorkspace(keyID, workspace string) {
	if keyID == "" || workspace == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.workspaces.put(keyID, workspace)
}

// workspaceOf is the workspace a key was issued for through the control API, else the key itself
// (a workspace of its own: ids and cursors handed to one key are not known to another).
func (s *state) workspaceOf(keyID string) string {
	if keyID == "" {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.workspaceOfLocked(keyID)
}

func (s *state) workspaceOfLocked(keyID string) string {
	if ws, ok := s.workspaces.get(keyID); ok {
		return ws
	}
	return keyID
}

// controlKey follows what the control API does to a key's buckets: a key created or changed with
// bucket limits of its own is no longer judged by the text's (buckets.go).
func (s *state) controlKey(keyID, controlID string, buckets bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if keyID == "" && controlID != "" {
		keyID, _ = s.controlIDs.get(controlID)
	}
	if keyID != "" && controlID != "" {
		s.controlIDs.put(controlID, keyID)
	}
	if !buckets {
		return
	}
	if keyID == "" {
		s.bucketsOff = true
		return
	}
	s.exempt.put(keyID, true)
}

// statusRank orders the running statuses and completed, the stated forward order.
var statusRank = map[string]int{"queued": 0, "rendering": 1, "post_processing": 2, "completed": 3}

// observe runs the rules across exchanges on one call.
func (s *state) observe(p *Proxy, c *call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.observeBucket(p, c)
	if c.obj == nil || c.ex.status >= 400 {
		return
	}
	switch c.route {
	case "GET /credits/balance":
		s.seeBalance(c)
	case "POST /generations":
		if c.ex.status == 201 {
			exp := fmt.Sprint(c.obj["outputs_expected"])
			_, batch := c.obj["batch_group_id"]
			if ids, ok := c.obj["generation_ids"].([]any); ok && len(ids) == 1 {
				if id, ok := ids[0].(string); ok {
					g := &genSeen{expected: exp, endedAt: c.ex.end, exchange: c.ex.n}
					cr, _ := c.obj["credits"].(map[string]any)
					if held, ok := integer(cr["credits_held"]); ok && !batch {
						g.held, g.heldKnown, g.submitEnd, g.submitN = held, true, c.ex.end, c.ex.n
						g.workspace = s.workspaceOfLocked(c.ex.keyID)
					}
					if old, seen := s.gens.get(id); seen {
						// A replay answers the running job again: what was seen of it stays, and
						// its hold is the one the first submit took.
						if old.heldKnown {
							g.held, g.submitEnd, g.submitN, g.workspace = old.held, old.submitEnd, old.submitN, old.workspace
						}
						g.heldKnown = g.heldKnown || old.heldKnown
						g.status, g.endedAt, g.exchange, g.charged = old.status, old.endedAt, old.exchange, old.charged
					}
					s.gens.put(id, g)
				}
			}
		}
	case "GET /generations/{id}", "GET /generations/{id}/wait":
		if g, ok := c.obj["generation"].(map[string]any); ok {
			s.seeGeneration(p, c, g)
		}
	case "GET /generations":
		rows, _ := c.obj["generations"].([]any)
		for _, r := range rows {
			if g, ok := r.(map[string]any); ok {
				s.seeGeneration(p, c, g)
			}
		}
		// The text does not say how the generations cursor is built (an offset may legally show a
		// row again once newer rows arrived), so the walk only follows it.
		s.walk(p, c, rows, "generation_id", false)
	case "GET /batches/{id}":
		rows, _ := c.obj["generations"].([]any)
		for _, r := range rows {
			if g, ok := r.(map[string]any); ok {
				s.seeGeneration(p, c, g)
			}
		}
	case "GET /actors":
		rows, _ := c.obj["actors"].([]any)
		s.walk(p, c, rows, "actor_id", true)
	}
}

// seeGeneration follows one generation's status: forward only in the order queued, rendering,
// post_processing, completed (GEN-009); out of a finished status only the stated recovery, failed
// to completed (GEN-008). Two observations are compared only when the later exchange started after
// the earlier one ended (overlapping reads may legally come back in either order).
func (s *state) seeGeneration(p *Proxy, c *call, g map[string]any) {
	id, _ := g["generation_id"].(string)
	st, _ := g["status"].(string)
	if id == "" || st == "" {
		return
	}
	prev, ok := s.gens.get(id)
	if ok && prev.expected != "" && prev.expected != "<nil>" {
		if e, present := g["outputs_expected"]; present && e != nil && fmt.Sprint(e) != prev.expected {
			p.find(c, SideServer, "GEN-013", false, fmt.Sprintf("%s reads outputs_expected %v; the submit answered %s.", id, e, prev.expected))
		}
	}
	if ok && prev.status != "" && !c.ex.start.Before(prev.endedAt) && prev.status != st {
		from, to := prev.status, st
		switch {
		case from == "completed":
			p.find(c, SideServer, "GEN-008", false, fmt.Sprintf("%s read completed (exchange #%d) and now reads %s: a finished status no longer changes.", id, prev.exchange, to))
		case from == "failed" && to != "completed":
			p.find(c, SideServer, "GEN-008", false, fmt.Sprintf("%s read failed (exchange #%d) and now reads %s: out of failed the only stated move is a recovery to completed.", id, prev.exchange, to))
		case running[from] && running[to] && statusRank[to] < statusRank[from]:
			p.find(c, SideServer, "GEN-009", false, fmt.Sprintf("%s read %s (exchange #%d) and now reads %s: status moves forward only (queued, rendering, post_processing, completed).", id, from, prev.exchange, to))
		}
	}
	// A final charge stays final: once terminal, credits_charged changes only with the stated
	// recovery (failed to completed), which moves the status too (GEN-017).
	charged := ""
	if cr, isMap := g["credits"].(map[string]any); isMap && cr["terminal"] == true && cr["credits_charged"] != nil {
		charged = fmt.Sprint(cr["credits_charged"])
	}
	if ok && prev.charged != "" && charged != "" && prev.status == st && charged != prev.charged && !c.ex.start.Before(prev.endedAt) {
		p.find(c, SideServer, "GEN-017", false, fmt.Sprintf("%s's final charge was %s (exchange #%d) and now reads %s with the same status %s: a terminal charge is final.", id, prev.charged, prev.exchange, charged, st))
	}
	if ok && prev.heldKnown {
		if ch, isInt := integer(json.Number(charged)); charged != "" && isInt && ch > prev.held {
			p.find(c, SideServer, "CORE-020", false, fmt.Sprintf("%s's final charge is %d, above the %d credits its submit held (exchange #%d): the amount settled is never more than the hold.", id, ch, prev.held, prev.submitN))
		}
		// Running, not terminal and not yet captured: the hold is still held.
		if cr, isMap := g["credits"].(map[string]any); isMap && running[st] && cr["terminal"] == false &&
			(cr["settlement"] == nil || cr["settlement"] == "open") && prev.workspace != "" {
			s.holdOpen(p, c, id, prev)
		}
	}
	if !ok {
		prev = &genSeen{}
	}
	if !ok || !c.ex.end.Before(prev.endedAt) {
		prev.status, prev.endedAt, prev.exchange = st, c.ex.end, c.ex.n
		if charged != "" {
			prev.charged = charged
		}
	}
	s.gens.put(id, prev)
}

// walk follows a cursor walk of one list (per key, route and query without the cursor): a page
// fetched with the next_cursor the previous page handed out must not repeat a row of the walk
// (CORE-012), on lists whose cursor the text makes a keyset, so that no row can come back
// (checkRepeats: actors). Capabilities and presets restart when the cursor's row left the list,
// and the voices cursor is an offset, so a row may legally come back there.
func (s *state) walk(p *Proxy, c *call, rows []any, idField string, checkRepeats bool) {
	q, err := url.ParseQuery(c.ex.rawQuery)
	if err != nil {
		return
	}
	cursor := strings.TrimSpace(q.Get("cursor"))
	q.Del("cursor")
	key := c.ex.keyID + " " + c.route + "?" + q.Encode()
	w, ok := s.walks.get(key)
	if cursor == "" || !ok || w.next != cursor {
		w = &walk{rows: map[string]bool{}}
	}
	for _, r := range rows {
		m, _ := r.(map[string]any)
		id, _ := m[idField].(string)
		if id == "" {
			continue
		}
		if w.rows[id] && checkRepeats && cursor != "" {
			p.find(c, SideServer, "CORE-012", false, fmt.Sprintf("%s came back on a later page of the same walk: following next_cursor visits every row exactly once.", id))
		}
		if len(w.rows) < MaxWalkRows {
			w.rows[id] = true
		}
	}
	next, _ := c.obj["next_cursor"].(string)
	if next == "" {
		s.walks.del(key)
		return
	}
	w.next = next
	s.walks.put(key, w)
}

// lru is a map that forgets its least recently used entry beyond its capacity.
type lru[V any] struct {
	cap   int
	m     map[string]*list.Element
	order *list.List // front: most recently used
}

type lruEntry[V any] struct {
	key string
	val V
}

func newLRU[V any](capacity int) *lru[V] {
	return &lru[V]{cap: capacity, m: map[string]*list.Element{}, order: list.New()}
}

func (l *lru[V]) get(k string) (V, bool) {
	if e, ok := l.m[k]; ok {
		l.order.MoveToFront(e)
		return e.Value.(*lruEntry[V]).val, true
	}
	var zero V
	return zero, false
}

func (l *lru[V]) put(k string, v V) {
	if e, ok := l.m[k]; ok {
		e.Value.(*lruEntry[V]).val = v
		l.order.MoveToFront(e)
		return
	}
	l.m[k] = l.order.PushFront(&lruEntry[V]{key: k, val: v})
	for l.order.Len() > l.cap {
		last := l.order.Back()
		l.order.Remove(last)
		delete(l.m, last.Value.(*lruEntry[V]).key)
	}
}

func (l *lru[V]) has(k string) bool {
	_, ok := l.m[k]
	return ok
}

func (l *lru[V]) del(k string) {
	if e, ok := l.m[k]; ok {
		l.order.Remove(e)
		delete(l.m, k)
	}
}
