package framework

import (
	"crypto/rand"
	"encoding/hex"
)

// RandomHex is n random lower-case hex digits: the tail of a made-up name or id that no target
// holds (a probe's workflow id, a test endpoint's path).
func RandomHex(n int) string {
	b := make([]byte, (n+1)/2)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)[:n]
}
