package wire

import "context"

// Slot is one request's holder for what a handler layer learns about the request and a layer
// under it reads (the api router's authenticated caller). The server's outermost layer puts one
// on the request's context, which it replaces anyway (the handler bound's deadline), so a layer
// that has something to pass down stores it here instead of copying the request again with
// Request.WithContext (an allocation of the whole request per layer). A Slot belongs to one
// request: only that request's handler goroutine writes it, before anything it starts reads it.
type Slot struct {
	// Caller is the api router's authenticated caller, nil before the key check.
	Caller any
}

// SlotKey is the context key whose value is the request's *Slot. A context that holds a Slot in
// a field of its own answers Value(SlotKey{}) with it, without a context.WithValue.
type SlotKey struct{}

// SlotOf returns the request's Slot, or nil when its context carries none (a handler served
// outside mock.Serve, as in unit tests).
func SlotOf(ctx context.Context) *Slot {
	s, _ := ctx.Value(SlotKey{}).(*Slot)
	return s
}
