// Package ids makes every identifier and secret the mock hands out from one
// seeded ChaCha8 stream, so that two servers started with the same seed and
// sent the same requests answer with the same ids and keys.
package ids

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"sync"
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Source is a deterministic random source. It is safe for concurrent use;
// the order in which concurrent callers draw decides who gets which id.
type Source struct {
	mu   sync.Mutex // guards rng, seed
	rng  *rand.ChaCha8
	seed uint64
}

// New returns a Source seeded with seed.
func New(seed uint64) *Source {
	s := &Source{}
	s.Reseed(seed)
	return s
}

// Reseed restarts the stream from seed: the ids that follow repeat the ids
// made after New(seed).
func (s *Source) Reseed(seed uint64) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seed)
	key := sha256.Sum256(append([]byte("mediaspec/mock/ids\x00"), b[:]...))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rng = rand.NewChaCha8(key)
	s.seed = seed
}

// Seed reports the seed of the current stream.
func (s *Source) Seed() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seed
}

// Bytes returns n random bytes.
func (s *Source) Bytes(n int) []byte {
	b := make([]byte, n)
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = s.rng.Read(b) // ChaCha8.Read never fails
	return b
}

// ID returns prefix followed by 32 lowercase hex characters (16 bytes),
// e.g. ID("gen_") = "gen_0f3a...".
func (s *Source) ID(prefix string) string {
	return prefix + hex.EncodeToString(s.Bytes(16))
}

// Base62 returns n characters from [0-9A-Za-z], unbiased.
func (s *Source) Base62(n int) string {
	out := make([]byte, n)
	s.mu.Lock()
	defer s.mu.Unlock()
	r := rand.New(s.rng)
	for i := range out {
		out[i] = base62[r.IntN(len(base62))]
	}
	return string(out)
}

// Uint64 returns a random 64-bit number (for seeding derived streams such as
// the fake renderer's).
func (s *Source) Uint64() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.Uint64()
}
