// Package contract names the figures of the contract once, in the contract's own units, for the
// mock, the suite and the proxy alike: limits, windows, ceilings and lifetimes. Each figure's
// comment quotes where the interface text states it (most are rows of its Limits table); a figure
// that is the reference's own choice, where the text leaves it open, says so. It imports only the
// standard library, so every package of the module may use it.
package contract

import (
	"cmp"
	"strconv"
	"strings"
	"time"
)

// Rate buckets (Limits): calls per BucketWindow per key.
const (
	// BucketWindow is the span of every bucket: "per minute".
	BucketWindow = time.Minute
	// ReadsPerMinute is the agent_read bucket: all reads, including each wait call.
	ReadsPerMinute = 120
	// EstimatesPerMinute is the agent_estimate bucket: POST /estimates.
	EstimatesPerMinute = 60
	// SubmitsPerMinute is the agent_submit bucket: POST /generations.
	SubmitsPerMinute = 20
	// WebhookManagePerMinute is the webhook_manage bucket: POST /webhooks, DELETE /webhooks/{id}.
	WebhookManagePerMinute = 20
	// UploadCallsPerMinute is the upload calls' bucket: reserve and finalize together.
	UploadCallsPerMinute = 30
	// ReservationsPerMinute is the second brake on POST /uploads alone.
	ReservationsPerMinute = 30
)

// Uploads (Limits).
const (
	// PendingUploads is how many reservations a workspace may have pending (429 quota_exceeded).
	PendingUploads = 50
	// PendingWindow is how long a reservation counts as pending: "from the last 15 minutes".
	PendingWindow = 15 * time.Minute
	// PutLifetime is the signed PUT's lifetime: "300 seconds, one use" (upload_expires_in_seconds).
	PutLifetime = 300 * time.Second
	// MaxImageBytes, MaxVideoBytes and MaxAudioBytes are the upload sizes by kind, in bytes.
	MaxImageBytes int64 = 20971520
	MaxVideoBytes int64 = 104857600
	MaxAudioBytes int64 = 26214400
	// MaxImageSide and MaxImagePixels bound an image at finalize: per side, and in total.
	MaxImageSide   = 16384
	MaxImagePixels = 40000000
	// MaxFilename is the longest filename of a reservation, in characters (at least 1).
	MaxFilename = 255
)

// Lists (Limits: list page size).
const (
	// PageSizeDefault is a list's page size when limit is not sent.
	PageSizeDefault = 25
	// PageSizeMax is where limit is clamped (voices, capabilities, presets, generations).
	PageSizeMax = 50
	// ActorsPageMax is the most actors one page carries.
	ActorsPageMax = 48
)

// Generations (Limits).
const (
	// MaxVariants is the most variants a submit may ask for (the smaller of this and the
	// capability's ceiling).
	MaxVariants = 4
	// MaxFanOut is the most values of a list setting per request.
	MaxFanOut = 4
	// SlotLifetime is when a key's one concurrent job slot is freed: "slot freed after 10 minutes".
	SlotLifetime = 10 * time.Minute
	// WaitBudget is how long a wait call blocks: "about 18 seconds per call".
	WaitBudget = 18 * time.Second
	// WaitCeiling is the longest a wait may block: "the reference table says up to 20".
	WaitCeiling = 20 * time.Second
	// OutputLinkLifetime is an output link's lifetime, output_urls_expire_in_seconds: "600 seconds".
	OutputLinkLifetime = 600 * time.Second
)

// Spend (Limits): defaults of the workspace's caps, in credits.
const (
	// PerGenerationCap is the workspace per-generation cap's default (org_per_generation).
	PerGenerationCap int64 = 600
	// DailyBudget is the workspace rolling 24 hour budget's default (org_daily).
	DailyBudget int64 = 2000
	// SpendWindow is the span of the rolling budgets: "rolling 24 hours".
	SpendWindow = 24 * time.Hour
	// HoldPadPercent is the hold pad: "10 percent by default".
	HoldPadPercent = 10
)

// Webhooks (Limits; Events > Delivery).
const (
	// MaxWebhookEndpoints is how many endpoints a workspace may register.
	MaxWebhookEndpoints = 10
	// MaxWebhookURL is the longest endpoint URL, in characters (at least 1).
	MaxWebhookURL = 2048
	// MaxWebhookDescription is the longest endpoint description, in characters.
	MaxWebhookDescription = 200
	// DeliveryTimeout is how long the service waits for a 2XX per attempt: "10 seconds".
	DeliveryTimeout = 10 * time.Second
	// DeliveryAttempts is how many attempts a delivery gets: "5 attempts".
	DeliveryAttempts = 5
	// TimestampTolerance is how far a delivery's timestamp may be from the receiver's clock.
	TimestampTolerance = 5 * time.Minute
)

// RetryWaits are the waits before attempts 2 to 5 of a delivery ("about" each: 5 minutes, 30
// minutes, 2 hours, 12 hours after the attempt before). A function, so no caller can change them.
func RetryWaits() []time.Duration {
	return []time.Duration{5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 12 * time.Hour}
}

// TestInputHeader is the request header of a test input (spec/testmode.yaml): a fault of the
// control API's table, forced for the one request that carries it. The reference's choice (the
// interface text has one environment and no test mode).
const TestInputHeader = "Mediaspec-Test-Input"

// CompareVersions orders two versions of the form MAJOR.MINOR.PATCH (Versioning: the service's
// version and a renamed field's stops_in): -1 when a is older than b, 0 when they are the same, 1
// when a is newer. A missing or unreadable part counts as 0.
func CompareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range 3 {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return cmp.Compare(x, y)
		}
	}
	return 0
}
