package proxy

import (
	"crypto/sha256"
	"net/http"
	"sort"
	"strconv"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// The verdicts of the description on answers already judged. Many answers repeat byte for byte
// (a catalogue page, a capability's schema, the same read polled), and judging a large one against
// the description is most of the judging's cost; the verdict depends only on the method, the path,
// the status, the headers the description declares for answers (and Content-Type) and the body,
// so an answer seen before with all of these equal gets the verdict it got.

// Bounds of the memo.
const (
	// MaxMemo is how many verdicts are remembered (the latest used).
	MaxMemo = 512
	// MemoMinBody is the smallest answer body whose verdict is remembered; smaller ones are cheap
	// to judge again.
	MemoMinBody = 1024
)

type verdict struct{ failure, advisory error }

// memo is safe for concurrent use.
type memo struct {
	headers []string // the canonical names of every answer header the description declares, and Content-Type

	mu sync.Mutex // guards m
	m  *lru[verdict]
}

func newMemo(docs ...*openapi3.T) *memo {
	names := map[string]bool{"Content-Type": true}
	for _, doc := range docs {
		if doc == nil || doc.Paths == nil {
			continue
		}
		for _, item := range doc.Paths.Map() {
			for _, op := range item.Operations() {
				if op == nil || op.Responses == nil {
					continue
				}
				for _, r := range op.Responses.Map() {
					if r == nil || r.Value == nil {
						continue
					}
					for name := range r.Value.Headers {
						names[http.CanonicalHeaderKey(name)] = true
					}
				}
			}
		}
	}
	m := &memo{m: newLRU[verdict](MaxMemo)}
	for n := range names {
		m.headers = append(m.headers, n)
	}
	sort.Strings(m.headers)
	return m
}

// key is what the verdict on ex's answer depends on, hashed; "" when the answer is too small to
// remember.
func (m *memo) key(ex *exchange) string {
	if len(ex.answer) < MemoMinBody {
		return ""
	}
	h := sha256.New()
	write := func(s string) {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{0})
		h.Write([]byte(s))
	}
	write(ex.method)
	write(ex.path)
	write(strconv.Itoa(ex.status))
	for _, name := range m.headers {
		vals := ex.respHeader.Values(name)
		write(strconv.Itoa(len(vals)))
		for _, v := range vals {
			write(v)
		}
	}
	h.Write([]byte(strconv.Itoa(len(ex.answer))))
	h.Write([]byte{0})
	h.Write(ex.answer)
	return string(h.Sum(nil))
}

func (m *memo) get(k string) (verdict, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m.get(k)
}

func (m *memo) put(k string, v verdict) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m.put(k, v)
}
