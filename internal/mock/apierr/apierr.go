// Package apierr is the mock's one coded error type.
//
// Handlers and domain packages return *Error values made by the constructors
// below; the HTTP status and the retryable verdict of every code come from a
// single table (the interface spec's error table, package spec/errtable) and
// no call site chooses them. The HTTP adapter renders them (mock/wire's
// Write); an error that is not an *Error becomes 500 internal_error there.
package apierr

import (
	"errors"
	"fmt"
	"slices"

	"github.com/mediaspec/mediaspec/spec/errtable"
)

// Code is a machine reason from the interface spec's error table.
type Code string

// The codes of the interface spec's error table.
const (
	CodeNotAuthorized         Code = "not_authorized"
	CodeInsufficientScope     Code = "insufficient_scope"
	CodeRequiredPlan          Code = "required_plan"
	CodeInvalidConfig         Code = "invalid_config"
	CodeMaxCreditsExceeded    Code = "max_credits_exceeded"
	CodeInsufficientCredits   Code = "insufficient_credits"
	CodeSpendLimitExceeded    Code = "spend_limit_exceeded"
	CodeCapabilityUnavailable Code = "capability_unavailable"
	CodeNotFound              Code = "not_found"
	CodeInputNotReady         Code = "input_not_ready"
	CodeSubmissionInFlight    Code = "submission_in_flight"
	CodeEstimateChanged       Code = "estimate_changed"
	CodeNotPriced             Code = "not_priced"
	CodeWorkspaceUnavailable  Code = "workspace_unavailable"
	CodeModerationBlocked     Code = "moderation_blocked"
	CodeRateLimited           Code = "rate_limited"
	CodeQuotaExceeded         Code = "quota_exceeded"
	CodeRequestBlocked        Code = "request_blocked"
	CodeInternalError         Code = "internal_error"
	CodeProviderUnavailable   Code = "provider_unavailable"
	CodeModerationUnavailable Code = "moderation_unavailable"
	CodePricingUnavailable    Code = "pricing_unavailable"
)

type verdict struct {
	status    int
	retryable bool
}

// table is the interface spec's error table (package errtable, generated from the REST
// description's x-error-table): the only place a status or a retryable verdict comes from.
var table = func() map[Code]verdict {
	m := make(map[Code]verdict, len(errtable.Rows))
	for _, e := range errtable.Rows {
		m[Code(e.Code)] = verdict{e.Status, e.Retryable}
	}
	return m
}()

// Codes returns every code of the table, sorted (for tests and documents).
func Codes() []Code {
	out := make([]Code, 0, len(table))
	for c := range table {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// StatusOf returns the HTTP status and retryable verdict of code; an unknown
// code reports internal_error's.
func StatusOf(code Code) (status int, retryable bool) {
	v, ok := table[code]
	if !ok {
		v = table[CodeInternalError]
	}
	return v.status, v.retryable
}

// Bound names the limit that refused a spend (`limit.bound_by`).
type Bound string

// The limit.bound_by values.
const (
	BoundMaxCredits       Bound = "max_credits"
	BoundOrgPerGeneration Bound = "org_per_generation"
	BoundAPIKeyBudget     Bound = "api_key_budget"
	BoundOrgDaily         Bound = "org_daily"
)

// Limit is the `limit` object of a spend refusal.
type Limit struct {
	BoundBy Bound `json:"bound_by"`
	// RequiredCredits is set on max_credits_exceeded only: the max_credits
	// value that passes.
	RequiredCredits *int64 `json:"required_credits,omitempty"`
	// LimitCredits is the limit's value (for max_credits: the value sent).
	LimitCredits int64 `json:"limit_credits"`
	// RemainingCredits is what the limit still allows; set on
	// spend_limit_exceeded (for the per-generation limit it equals the limit).
	RemainingCredits *int64 `json:"remaining_credits,omitempty"`
}

// InFlight is the `in_flight` object of submission_in_flight.
type InFlight struct {
	GenerationID string `json:"generation_id"`
	Status       string `json:"status"`
}

// Error is the one coded error. Status and Retryable are filled from the
// table by the constructors; the optional fields are rendered only when set.
type Error struct {
	Code      Code
	Status    int
	Retryable bool
	Message   string

	Field                string
	Fields               []string
	RetryAfterSeconds    int
	Limit                *Limit
	InFlight             *InFlight
	CapabilityStatus     string
	RequiredPlan         string
	Shortfall            int64 // rendered when > 0
	BlockedReason        string
	AssetIDs             []string
	AcceptedContentTypes []string

	// Err is the underlying cause, if any; never rendered.
	Err error
}

var _ error = (*Error)(nil)

// Error is the code and the message.
func (e *Error) Error() string {
	s := string(e.Code) + ": " + e.Message
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, apierr.New(apierr.CodeNotFound, "")) matches any not_found.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// New returns an error with code's status and retryable verdict.
func New(code Code, message string) *Error {
	st, re := StatusOf(code)
	if _, ok := table[code]; !ok {
		code = CodeInternalError
	}
	return &Error{Code: code, Status: st, Retryable: re, Message: message}
}

// Newf is New with a formatted message.
func Newf(code Code, format string, args ...any) *Error {
	return New(code, fmt.Sprintf(format, args...))
}

// CodeOf returns err's code when it is (or wraps) an *Error, else
// internal_error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternalError
}

// NotAuthorized: 401, the key is missing, malformed, unknown, revoked or expired.
func NotAuthorized(message string) *Error { return New(CodeNotAuthorized, message) }

// InsufficientScope: 403, the key lacks the needed scope.
func InsufficientScope(message string) *Error { return New(CodeInsufficientScope, message) }

// RequiredPlan: 403 naming the plan needed. capabilityStatus is
// "requires_plan" for a capability refusal and "" for a plan without the
// agent API.
func RequiredPlan(plan, capabilityStatus, message string) *Error {
	e := New(CodeRequiredPlan, message)
	e.RequiredPlan = plan
	e.CapabilityStatus = capabilityStatus
	return e
}

// InvalidConfig: 400 naming the offending field (may be "").
func InvalidConfig(field, message string) *Error {
	e := New(CodeInvalidConfig, message)
	e.Field = field
	return e
}

// InvalidConfigFields: 400 naming several fields (e.g. both names of a
// deprecated pair).
func InvalidConfigFields(fields []string, message string) *Error {
	e := New(CodeInvalidConfig, message)
	e.Fields = fields
	return e
}

// MaxCreditsExceeded: 402, the padded price is above max_credits.
func MaxCreditsExceeded(maxCredits, required int64, message string) *Error {
	e := New(CodeMaxCreditsExceeded, message)
	e.Field = "max_credits"
	e.Limit = &Limit{BoundBy: BoundMaxCredits, RequiredCredits: &required, LimitCredits: maxCredits}
	return e
}

// InsufficientCredits: 402 with the shortfall (padded hold − available).
func InsufficientCredits(shortfall int64, message string) *Error {
	e := New(CodeInsufficientCredits, message)
	e.Shortfall = shortfall
	return e
}

// SpendLimitExceeded: 402 naming the person-set limit that refused.
func SpendLimitExceeded(bound Bound, limitCredits, remainingCredits int64, message string) *Error {
	e := New(CodeSpendLimitExceeded, message)
	e.Limit = &Limit{BoundBy: bound, LimitCredits: limitCredits, RemainingCredits: &remainingCredits}
	return e
}

// CapabilityUnavailable: 404 with capability_status.
func CapabilityUnavailable(status, message string) *Error {
	e := New(CodeCapabilityUnavailable, message)
	e.CapabilityStatus = status
	return e
}

// NotFound: 404, missing or not the caller's.
func NotFound(message string) *Error { return New(CodeNotFound, message) }

// InputNotReady: 409 naming the uploads that are not ready.
func InputNotReady(assetIDs []string, message string) *Error {
	e := New(CodeInputNotReady, message)
	e.AssetIDs = assetIDs
	return e
}

// SubmissionInFlight: 409 naming the running generation; retryAfter > 0 adds
// retry_after_seconds and the Retry-After header.
func SubmissionInFlight(inFlight InFlight, retryAfterSeconds int, message string) *Error {
	e := New(CodeSubmissionInFlight, message)
	e.InFlight = &inFlight
	e.RetryAfterSeconds = retryAfterSeconds
	return e
}

// EstimateChanged: 409, the price changed during placement.
func EstimateChanged(message string) *Error { return New(CodeEstimateChanged, message) }

// NotPriced: 409, the capability has no published price.
func NotPriced(message string) *Error { return New(CodeNotPriced, message) }

// WorkspaceUnavailable: 410, the key's workspace was deleted.
func WorkspaceUnavailable(message string) *Error { return New(CodeWorkspaceUnavailable, message) }

// ModerationBlocked: 422, optionally naming uploads.
func ModerationBlocked(assetIDs []string, message string) *Error {
	e := New(CodeModerationBlocked, message)
	e.AssetIDs = assetIDs
	return e
}

// RateLimited: 429; retryAfterSeconds > 0 adds retry_after_seconds and the
// Retry-After header (0: the wait is not known, e.g. render concurrency).
func RateLimited(retryAfterSeconds int, message string) *Error {
	e := New(CodeRateLimited, message)
	e.RetryAfterSeconds = retryAfterSeconds
	return e
}

// QuotaExceeded: 429, request allowance used or pending-upload cap hit.
func QuotaExceeded(message string) *Error { return New(CodeQuotaExceeded, message) }

// RequestBlocked: 429 with blocked_reason; retryAfterSeconds > 0 for a
// temporary block.
func RequestBlocked(reason string, retryAfterSeconds int, message string) *Error {
	e := New(CodeRequestBlocked, message)
	e.BlockedReason = reason
	e.RetryAfterSeconds = retryAfterSeconds
	return e
}

// Internal: 500 wrapping cause (logged by Write, never rendered).
func Internal(cause error, message string) *Error {
	e := New(CodeInternalError, message)
	e.Err = cause
	return e
}

// ProviderUnavailable: 502, a provider or dependency failed before acceptance.
func ProviderUnavailable(message string) *Error { return New(CodeProviderUnavailable, message) }

// ModerationUnavailable: 503, content checks are not running.
func ModerationUnavailable(message string) *Error { return New(CodeModerationUnavailable, message) }

// PricingUnavailable: 503, pricing failed for a moment.
func PricingUnavailable(message string) *Error { return New(CodePricingUnavailable, message) }
