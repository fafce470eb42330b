package api

import (
	"hash/maphash"
	"sync/atomic"
)

// A client polling a generation reads the same answer again and again: the generation changes a
// few times in its life, the links in its answer once a second of service time (their expiry is
// in whole seconds), the wallet balance when the workspace spends. readCache keeps the encoded
// answer of recent reads keyed by everything it depends on (the generation's rev, the wallet
// balance, and for an answer with links their public URL and expiry), so a read whose key matches
// writes the very bytes a fresh rendering would write without rendering them. An answer with links
// is cached only when their stamp did not move while it was rendered. The cache is a fixed array of slots (one answer per
// slot, by a hash of the id; a new answer replaces the slot's): its memory is bounded whatever
// the traffic, and a read takes no lock beyond the store's.
const readCacheSlots = 256

type readCache struct {
	seed  maphash.Seed
	slots [readCacheSlots]atomic.Pointer[readEntry]
}

// readEntry is one cached answer; never changed once stored.
type readEntry struct {
	id      string
	rev     uint64
	balance int64
	linked  bool // the answer carries links: pub and expires are part of its key
	pub     string
	expires int64
	body    []byte // the whole answer, its newline included
}

func newReadCache() *readCache { return &readCache{seed: maphash.MakeSeed()} }

func (c *readCache) slot(id string) *atomic.Pointer[readEntry] {
	return &c.slots[maphash.String(c.seed, id)%readCacheSlots]
}

// get returns the cached answer for the key, or nil; the links' stamp counts only for an answer
// with links (a running job's answer is the same from one second to the next).
func (c *readCache) get(id string, rev uint64, balance int64, pub string, expires int64) []byte {
	e := c.slot(id).Load()
	if e == nil || e.id != id || e.rev != rev || e.balance != balance || e.linked && (e.expires != expires || e.pub != pub) {
		return nil
	}
	return e.body
}

// put stores e (its body is kept, not copied).
func (c *readCache) put(e *readEntry) { c.slot(e.id).Store(e) }
