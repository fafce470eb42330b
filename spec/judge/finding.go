package judge

import "time"

// Sides of an exchange a finding blames.
const (
	// SideServer: the API server broke the contract in an answer.
	SideServer = "server"
	// SideClient: the API client broke a client duty (the audit's detectors) or sent a request the
	// description does not allow.
	SideClient = "client"
	// SideSender: the webhook sender (the service) broke a delivery rule.
	SideSender = "sender"
	// SideReceiver: the client's webhook receiver answered a delivery against the receiver rules.
	SideReceiver = "receiver"
)

// Finding is one rule broken on observed traffic, with its repeats counted: what `mediaspec proxy`
// raises on the exchanges it forwards and what the client audit of `mediaspec mock --audit`
// raises (package audit), the one type both report and package report turns into results.
type Finding struct {
	RuleID string `json:"rule_id"` // the broken rule's id (spec/rules.yaml)
	// Level is the rule's level: MUST, SHOULD or MAY.
	Level string `json:"level"`
	// Advisory marks a departure from the reference's own choices only: reported, never a failure.
	Advisory bool `json:"advisory"`
	// Side is who broke the rule (SideServer, SideClient, SideSender, SideReceiver).
	Side string `json:"side"`
	// KeyID names the key that made the call, never the key itself; empty for a call without a
	// (valid) key, a webhook delivery, or a file link whose owner is no longer remembered.
	KeyID string `json:"key_id"`
	// Request is the request line of the first exchange: method, path and, under the API, query
	// (a file link's query, its signature, is never shown).
	Request string `json:"request"`
	// Advice says why in one sentence: what was seen and what the rule wants.
	Advice string `json:"advice"`
	// Exchanges are the numbers of the first exchanges that showed it, where the finder numbers
	// them (the proxy: GET /_proxy/v1/exchanges); nil otherwise.
	Exchanges []int64   `json:"exchanges"`
	FirstSeen time.Time `json:"first_seen_at"` // when it was first seen
	LastSeen  time.Time `json:"last_seen_at"`  // when it was last seen
	Count     int       `json:"count"`         // how many times it was seen
}
