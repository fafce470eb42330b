package conformance

import "github.com/mediaspec/mediaspec/conformance/internal/framework"

// The profile's parts and the suite's limits, for the command and the module's tests, which may
// not import the suite's internal framework: each is the framework's own, named here once.

// KeySet is one process's keys of a profile's key_sets (key, read_key, other_key).
type KeySet = framework.KeySet

// KeyList is a list of keys (test_keys, the key sets' keys) as the profile and a flag give it.
type KeyList = framework.KeyList

// IDList is a list of ids the profile declares (saved_workflow_ids: one per key set).
type IDList = framework.IDList

// FeatureList is the profile's features: which optional test features the target offers.
type FeatureList = framework.FeatureList

// ByteSize is a size in bytes read from a flag or the profile ("32MiB", "4096").
type ByteSize = framework.ByteSize

// Redactor hides the keys and tokens of a run in what the suite writes (logs, reports).
type Redactor = framework.Redactor

// Credits is an amount of credits the profile declares (a budget), told apart from none given.
type Credits = framework.Credits

// FeatureTestInputs is the profile feature of a target that honours the test-mode inputs.
const FeatureTestInputs = framework.FeatureTestInputs

// The reference's choices of where the text is silent, as the mock makes them: its key header,
// the path of its REST description and its health probes.
const (
	ReferenceKeyHeader       = framework.ReferenceKeyHeader
	ReferenceDescriptionPath = framework.ReferenceDescriptionPath
	ReferenceLivePath        = framework.ReferenceLivePath
	ReferenceReadyPath       = framework.ReferenceReadyPath
)

// The suite's defaults and ceilings on what it reads and sends.
const (
	DefaultRequestTimeout = framework.DefaultRequestTimeout // the longest wait for one answer
	DefaultMaxJSONBytes   = framework.DefaultMaxJSONBytes   // the largest JSON answer read whole
	DefaultMaxAnswerBytes = framework.DefaultMaxAnswerBytes // the largest answer body read at all
	BytesPerJSONValue     = framework.BytesPerJSONValue     // the least bytes one JSON value takes
	MaxAnswerHeaderBytes  = framework.MaxAnswerHeaderBytes  // the largest answer header block read
	MaxRequestHeaderBytes = framework.MaxRequestHeaderBytes // the largest request header block served
)

// CheckLocal checks what needs no network and no spec tree: the label filter parses and every
// report path can be written.
func CheckLocal(cfg Config) error { return framework.CheckLocal(cfg) }

// CreditsOf is a declared amount of n credits.
func CreditsOf(n int64) Credits { return framework.CreditsOf(n) }

// ShapeList is the open shapes a target declares (NAME=VALUE: where it lays out what the text
// leaves open, such as a page's array key).
type ShapeList = framework.ShapeList

// ReferenceShapes is the open shapes as the reference mock lays them out (its profile's shapes).
func ReferenceShapes() ShapeList { return framework.ReferenceShapes() }
