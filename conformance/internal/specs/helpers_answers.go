package specs

import (
	"crypto/rand"
	"math/big"
	"strings"
)

// Values a spec calls with: a key no service issued (the checks every answer must
// pass are package answer's).

// unknownKey returns a well-formed sk_live_ key no service issued.
func unknownKey() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	var b strings.Builder
	b.WriteString("sk_live_")
	for i := 0; i < 40; i++ {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			panic(err)
		}
		b.WriteByte(alphabet[n.Int64()])
	}
	return b.String()
}
