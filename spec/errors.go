package spec

// ErrorCode is one row of the interface spec's error table: the machine code, the HTTP status it is
// answered with, and whether the call may be retried (at most twice).
type ErrorCode struct {
	Code      string
	Status    int
	Retryable bool
}

// ErrorCodes is the interface spec's error table, in its order. The REST description's error code
// enum must list exactly these codes (a test holds it to that), and services answer each with
// exactly this status and retryable verdict.
var ErrorCodes = []ErrorCode{
	{"not_authorized", 401, false},
	{"insufficient_scope", 403, false},
	{"required_plan", 403, false},
	{"invalid_config", 400, false},
	{"max_credits_exceeded", 402, false},
	{"insufficient_credits", 402, false},
	{"spend_limit_exceeded", 402, false},
	{"capability_unavailable", 404, false},
	{"not_found", 404, false},
	{"input_not_ready", 409, true},
	{"submission_in_flight", 409, true},
	{"estimate_changed", 409, true},
	{"not_priced", 409, false},
	{"workspace_unavailable", 410, false},
	{"moderation_blocked", 422, false},
	{"rate_limited", 429, true},
	{"quota_exceeded", 429, false},
	{"request_blocked", 429, false},
	{"internal_error", 500, true},
	{"provider_unavailable", 502, true},
	{"moderation_unavailable", 503, true},
	{"pricing_unavailable", 503, true},
}

// LookupErrorCode returns the error table row for code.
func LookupErrorCode(code string) (ErrorCode, bool) {
	for _, e := range ErrorCodes {
		if e.Code == code {
			return e, true
		}
	}
	return ErrorCode{}, false
}
