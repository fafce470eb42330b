package framework

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"

	"github.com/mediaspec/mediaspec/internal/contract"
	"github.com/mediaspec/mediaspec/report"
)

// Config is everything a conformance run needs to know about its target and its outputs. It is
// loaded once (Load) and passed down; nothing reads the environment or flags after that.
//
// Precedence, lowest first: zero values and defaults, the YAML file, environment variables, flags
// that were set on the command line.
type Config struct {
	// BaseURL is the versioned API root of the service under test (usually ends in /api/v1). A URL
	// without a path gets /api/v1 appended; any path, "/" included, is taken as given.
	BaseURL string `yaml:"base_url" env:"MEDIASPEC_BASE_URL"`
	// Key is an API key with read and generate scopes. Empty with control access: the suite makes
	// its own workspace and keys.
	Key string `yaml:"key" env:"MEDIASPEC_KEY"`
	// ReadKey is a key with only the read scope in the same workspace as Key.
	ReadKey string `yaml:"read_key" env:"MEDIASPEC_READ_KEY"`
	// OtherKey is a read+generate key of a second workspace, for isolation specs.
	OtherKey string `yaml:"other_key" env:"MEDIASPEC_OTHER_KEY"`
	// SiblingKey is a second read+generate key of Key's workspace (a profile role, one per key
	// set: the fourth key of KEY,READ_KEY,OTHER_KEY,SIBLING_KEY), for the specs of what a
	// workspace shares between its keys and what each key has alone (the key slot).
	SiblingKey string `yaml:"sibling_key" env:"MEDIASPEC_SIBLING_KEY"`
	// ControlURL is the root of the optional test-control API (ends in /_control/v1; a URL without
	// that path gets it appended). Empty: specs that need control are skipped.
	ControlURL string `yaml:"control_url" env:"MEDIASPEC_CONTROL_URL"`
	// ControlToken is the bearer token of the control API.
	ControlToken string `yaml:"control_token" env:"MEDIASPEC_CONTROL_TOKEN"`
	// ReceiverListen is where the suite's webhook receiver listens (default 127.0.0.1:0; "off"
	// starts none, and specs that need a receiver are skipped).
	ReceiverListen string `yaml:"receiver_listen" env:"MEDIASPEC_RECEIVER_LISTEN"`
	// ReceiverPublicURL is the scheme and host the target should deliver to (e.g. a public https
	// tunnel to ReceiverListen); default: the listener's own http://host:port.
	ReceiverPublicURL string `yaml:"receiver_url" env:"MEDIASPEC_RECEIVER_URL"`
	// FilesListen is where the suite's file server listens, the server of the links the from-url
	// specs ask the target to import (default 127.0.0.1:0).
	FilesListen string `yaml:"files_listen" env:"MEDIASPEC_FILES_LISTEN"`
	// FilesPublicURL is the scheme and host at which the target fetches the suite's files (e.g. a
	// public tunnel to FilesListen): a real service refuses loopback links, so without it the specs
	// that need an imported file skip; default: the listener's own http://host:port.
	FilesPublicURL string `yaml:"files_url" env:"MEDIASPEC_FILES_URL"`
	// Budget is the most credits the run may spend; 0 skips every spec that spends.
	Budget int `yaml:"budget" env:"MEDIASPEC_BUDGET"`
	// LabelFilter is a Ginkgo label filter expression selecting specs (e.g. "AUTH-001 || health").
	LabelFilter string `yaml:"label_filter" env:"MEDIASPEC_LABEL_FILTER"`
	// JSONReport, JUnitReport and HTMLReport are output paths; empty writes no such report.
	JSONReport  string `yaml:"json_report" env:"MEDIASPEC_JSON_REPORT"`
	JUnitReport string `yaml:"junit_report" env:"MEDIASPEC_JUNIT_REPORT"`
	HTMLReport  string `yaml:"html_report" env:"MEDIASPEC_HTML_REPORT"`
	// TimeScale is how many times faster than real time the target's clock runs (1 for a real
	// service); waits on the target's behalf are divided by it.
	TimeScale float64 `yaml:"time_scale" env:"MEDIASPEC_TIME_SCALE"`
	// Slow enables specs labelled slow.
	Slow bool `yaml:"slow" env:"MEDIASPEC_SLOW"`
	// RealTime runs, on a target without the control API's clock, the specs that wait out real
	// time for the target's windows to pass (a rate bucket's minute): minutes of wall clock, said
	// on the first line before they start; fit for a nightly job. With control they advance the
	// clock instead and need no flag.
	RealTime bool `yaml:"real_time" env:"MEDIASPEC_REAL_TIME"`
	// Long, with RealTime, also runs the specs that wait out hours of the target's clock (a webhook
	// delivery's 14.5-hour retry schedule, which the text fixes): said on the first line too; a
	// nightly job's setting, or a target whose clock runs faster (time_scale).
	Long bool `yaml:"long" env:"MEDIASPEC_LONG"`
	// Randomize runs all specs in random order (not only top-level containers); Seed fixes the order.
	Randomize bool  `yaml:"randomize" env:"MEDIASPEC_RANDOMIZE"`
	Seed      int64 `yaml:"seed" env:"MEDIASPEC_SEED"`
	// RetiredCapabilityID is a capability id the target has retired. Retired ids are not listed,
	// so the suite cannot discover one; empty skips the specs that need one (with the reason).
	RetiredCapabilityID string `yaml:"retired_capability_id" env:"MEDIASPEC_RETIRED_CAPABILITY_ID"`
	// Reference says the target is mediaspec's own mock, which holds every state the suite looks
	// for: a spec that cannot find one (Spec.Lacks) fails instead of skipping. The embedded run and
	// the in-process harness set it; --reference sets it for the mock binary run out of process.
	Reference bool `yaml:"reference" env:"MEDIASPEC_REFERENCE"`
	// Procs is how many processes run the specs at once (mediaspec check --procs; default 1). Each
	// runs a share of the spec tree with keys of its own: a key set each (KeySetList, KeysFile). A
	// split run of one target is keys only (ShardKeySets); with a target per process (mediaspec
	// check's embedded mock, conformance.Options.OwnTarget) each process has its own.
	Procs int `yaml:"procs" env:"MEDIASPEC_PROCS"`
	// Shard, as K/N, runs the K-th of N shares of the selected specs (mediaspec check --shard), the
	// shares balanced by the committed weight table as --procs balances its processes: N machines
	// (a CI matrix) each run one, and mediaspec merge-reports makes one run of their JSON reports.
	// Empty: every selected spec.
	Shard string `yaml:"shard" env:"MEDIASPEC_SHARD"`
	// KeySetList are further key sets (KEY,READ_KEY,OTHER_KEY) for a run split over processes
	// (Config.KeySets lists them all).
	KeySetList KeySetList `yaml:"key_sets" env:"MEDIASPEC_KEY_SETS"`
	// KeysFile names a file with a key set per line (KEY,READ_KEY,OTHER_KEY or the three separated
	// by spaces; # starts a comment line).
	KeysFile string `yaml:"keys_file" env:"MEDIASPEC_KEYS_FILE"`
	// KeyHeader names the request header of the second key scheme. The text declares "an API key
	// header" without its name, so the suite sends keys as Authorization: Bearer only, and skips
	// the specs of the second scheme (with the reason), unless the target names its header here.
	// With Reference an empty value is the mock's X-API-Key; Off names none even then.
	KeyHeader string `yaml:"key_header" env:"MEDIASPEC_KEY_HEADER"`
	// DescriptionPath is the path, below the API root, of the target's live REST description (the
	// text says to read its info.version but never gives its path). Empty: the specs that read it
	// skip with the reason. With Reference an empty value is the mock's /openapi.json; Off: none.
	DescriptionPath string `yaml:"description_path" env:"MEDIASPEC_DESCRIPTION_PATH"`
	// LivePath and ReadyPath are the paths, below the API root, of the liveness and readiness
	// probes ("Health probe paths and answers: not shown"). Empty: the probe specs skip with the
	// reason. With Reference an empty value is the mock's /health/live or /health/ready; Off: none.
	LivePath  string `yaml:"live_path" env:"MEDIASPEC_LIVE_PATH"`
	ReadyPath string `yaml:"ready_path" env:"MEDIASPEC_READY_PATH"`
	// Strict holds answers to the reference document as written: a difference from the
	// reference's own choices (an advisory otherwise) fails the spec. For checking mediaspec's own
	// mock, which must keep its documented shapes; never for judging another server.
	Strict bool `yaml:"strict" env:"MEDIASPEC_STRICT"`
	// Shapes is what the target declares of the shapes the text leaves open (openshape.Known:
	// where its balance answer holds the available credits, the body field of a from-url import,
	// a page's array key, ...): the suite finds most open shapes from what the text names, and
	// reads these where it cannot. With Reference an undeclared shape is the mock's own.
	Shapes ShapeList `yaml:"shapes" env:"MEDIASPEC_SHAPES"`
	// MaxAnswerBytes caps the body of an answer that is not a structured document (a file from a
	// link); MaxJSONBytes the body of one that is (JSON, or without a Content-Type). A larger answer
	// fails the call that met it, naming the call and the cap. 0: DefaultMaxAnswerBytes and
	// DefaultMaxJSONBytes (limits.go).
	MaxAnswerBytes ByteSize `yaml:"max_answer_bytes" env:"MEDIASPEC_MAX_ANSWER_BYTES"`
	MaxJSONBytes   ByteSize `yaml:"max_json_bytes" env:"MEDIASPEC_MAX_JSON_BYTES"`

	// The target profile (profile.go, docs/staging.md): keys the operator pre-made for roles the
	// suite cannot make without the control API, the limits they configured, and the optional test
	// features the target offers. Each is optional; a spec that needs one the profile does not
	// declare skips, naming the setting.

	// RevokedKey is a key that was revoked (the text: 401 not_authorized).
	RevokedKey string `yaml:"revoked_key" env:"MEDIASPEC_REVOKED_KEY"`
	// ExpiredKey is a key that has expired (the text: 401 not_authorized).
	ExpiredKey string `yaml:"expired_key" env:"MEDIASPEC_EXPIRED_KEY"`
	// BudgetKey is a read+generate key with a rolling 24-hour budget of its own (api_key_budget),
	// of BudgetKeyCredits credits; one is declared only with the other.
	BudgetKey        string  `yaml:"budget_key" env:"MEDIASPEC_BUDGET_KEY"`
	BudgetKeyCredits Credits `yaml:"budget_key_credits" env:"MEDIASPEC_BUDGET_KEY_CREDITS"`
	// LowBalanceKey is a read+generate key of a workspace whose balance is too low for a submit
	// (insufficient credits).
	LowBalanceKey string `yaml:"low_balance_key" env:"MEDIASPEC_LOW_BALANCE_KEY"`
	// NoAgentAPIKey is a key of a workspace whose plan lacks the agent API (403 required_plan).
	NoAgentAPIKey string `yaml:"no_agent_api_key" env:"MEDIASPEC_NO_AGENT_API_KEY"`
	// LowerPlanKey is a read+generate key of a workspace whose plan lacks a capability that a
	// higher plan has (its capability list shows that one requires_plan).
	LowerPlanKey string `yaml:"lower_plan_key" env:"MEDIASPEC_LOWER_PLAN_KEY"`
	// GenerateOnlyKey is a key holding only the generate scope, of a workspace with credits (the
	// text: read endpoints accept it).
	GenerateOnlyKey string `yaml:"generate_only_key" env:"MEDIASPEC_GENERATE_ONLY_KEY"`
	// DeletedWorkspaceKey is a key of a workspace that was deleted (the text: 410
	// workspace_unavailable).
	DeletedWorkspaceKey string `yaml:"deleted_workspace_key" env:"MEDIASPEC_DELETED_WORKSPACE_KEY"`
	// AllowanceUsedKey is a key that used its whole request allowance (the text: 429
	// quota_exceeded, not retryable).
	AllowanceUsedKey string `yaml:"allowance_used_key" env:"MEDIASPEC_ALLOWANCE_USED_KEY"`
	// BusinessKey is a read+generate key of a workspace on the business plan, the plan that
	// unlocks every requires_plan capability and preset (CAP-030); the suite never spends on it.
	BusinessKey string `yaml:"business_key" env:"MEDIASPEC_BUSINESS_KEY"`
	// OwnCatalogueKey is a read+generate key of a workspace (not Key's) in which the operator
	// made OwnActorID, an actor (ready, made without tags), and OwnClonedVoiceID, an active cloned
	// voice: that workspace's own, which the suite cannot make without the control API
	// (ownfixtures.go). The three are declared together.
	OwnCatalogueKey  string `yaml:"own_catalogue_key" env:"MEDIASPEC_OWN_CATALOGUE_KEY"`
	OwnActorID       string `yaml:"own_actor_id" env:"MEDIASPEC_OWN_ACTOR_ID"`
	OwnClonedVoiceID string `yaml:"own_cloned_voice_id" env:"MEDIASPEC_OWN_CLONED_VOICE_ID"`
	// Catalogue states the operator made in their app or catalogue admin (catalogstates.go), which
	// only the control API makes otherwise. WithheldCapabilityID is a capability withheld from
	// agents (not listed); InternalPresetID a preset withheld from agents (internal). The three own_
	// ids are of the workspace of OwnCatalogueKey: an actor still processing, an actor disabled, a
	// cloned voice deactivated (none listed there); each is declared only with OwnCatalogueKey.
	WithheldCapabilityID  string `yaml:"withheld_capability_id" env:"MEDIASPEC_WITHHELD_CAPABILITY_ID"`
	InternalPresetID      string `yaml:"internal_preset_id" env:"MEDIASPEC_INTERNAL_PRESET_ID"`
	OwnProcessingActorID  string `yaml:"own_processing_actor_id" env:"MEDIASPEC_OWN_PROCESSING_ACTOR_ID"`
	OwnDisabledActorID    string `yaml:"own_disabled_actor_id" env:"MEDIASPEC_OWN_DISABLED_ACTOR_ID"`
	OwnDeactivatedVoiceID string `yaml:"own_deactivated_voice_id" env:"MEDIASPEC_OWN_DEACTIVATED_VOICE_ID"`
	// Versioning states the operator made in their catalogue (versionstates.go), which only the
	// control API makes otherwise (interface Versioning 5 and 6). RenamedField*: a config field of
	// capability RenamedFieldCapabilityID renamed from RenamedFieldOldName to RenamedFieldNewName
	// (an optional property), the old name still accepted until RenamedFieldStopsIn. EndedField*:
	// one whose window ended, EndedFieldStoppedIn at or before the service's version. RemovedEnum*:
	// the value RemovedEnumValue removed from the enum of property RemovedEnumField. Each group is
	// declared whole or not at all.
	RenamedFieldCapabilityID string `yaml:"renamed_field_capability_id" env:"MEDIASPEC_RENAMED_FIELD_CAPABILITY_ID"`
	RenamedFieldOldName      string `yaml:"renamed_field_old_name" env:"MEDIASPEC_RENAMED_FIELD_OLD_NAME"`
	RenamedFieldNewName      string `yaml:"renamed_field_new_name" env:"MEDIASPEC_RENAMED_FIELD_NEW_NAME"`
	RenamedFieldStopsIn      string `yaml:"renamed_field_stops_in" env:"MEDIASPEC_RENAMED_FIELD_STOPS_IN"`
	EndedFieldCapabilityID   string `yaml:"ended_field_capability_id" env:"MEDIASPEC_ENDED_FIELD_CAPABILITY_ID"`
	EndedFieldOldName        string `yaml:"ended_field_old_name" env:"MEDIASPEC_ENDED_FIELD_OLD_NAME"`
	EndedFieldNewName        string `yaml:"ended_field_new_name" env:"MEDIASPEC_ENDED_FIELD_NEW_NAME"`
	EndedFieldStoppedIn      string `yaml:"ended_field_stopped_in" env:"MEDIASPEC_ENDED_FIELD_STOPPED_IN"`
	RemovedEnumCapabilityID  string `yaml:"removed_enum_capability_id" env:"MEDIASPEC_REMOVED_ENUM_CAPABILITY_ID"`
	RemovedEnumField         string `yaml:"removed_enum_field" env:"MEDIASPEC_REMOVED_ENUM_FIELD"`
	RemovedEnumValue         string `yaml:"removed_enum_value" env:"MEDIASPEC_REMOVED_ENUM_VALUE"`
	// Fixtures made in the operator's app for the workflow and long-list specs (T1, appfixtures.go).
	// SavedWorkflowIDs are saved workflows, one per key set in the order of KeySets (the first is
	// Key's), each of that set's first workspace: taking no inputs, of two or more steps the key
	// can run. LongListsKey is a read-only key of a workspace of its own holding more than 50
	// presets (copies) and more than 50 voices (cloned ones among them), which the operator made.
	SavedWorkflowIDs IDList `yaml:"saved_workflow_ids" env:"MEDIASPEC_SAVED_WORKFLOW_IDS"`
	LongListsKey     string `yaml:"long_lists_key" env:"MEDIASPEC_LONG_LISTS_KEY"`
	// HighLimitKey is a read+generate key of a workspace whose per-generation and daily limits and
	// balance are HighLimitCredits or more (a 75-second actor_ultra recording's hold passes them).
	HighLimitKey string `yaml:"high_limit_key" env:"MEDIASPEC_HIGH_LIMIT_KEY"`
	// LimitedKey is a read+generate key of a workspace whose per-generation and daily limits the
	// operator set under any video hold, to LimitedPerGenerationLimit and LimitedDailyLimit (two
	// different amounts); the three are declared together.
	LimitedKey                string  `yaml:"limited_key" env:"MEDIASPEC_LIMITED_KEY"`
	LimitedPerGenerationLimit Credits `yaml:"limited_key_per_generation_limit" env:"MEDIASPEC_LIMITED_KEY_PER_GENERATION_LIMIT"`
	LimitedDailyLimit         Credits `yaml:"limited_key_daily_limit" env:"MEDIASPEC_LIMITED_KEY_DAILY_LIMIT"`
	// PerGenerationLimit and DailyLimit are the workspace limits the operator set on the workspace
	// of Key (and of every key set): undeclared, the text's defaults (600 and 2000 credits); 0 is a
	// value ("no spend at all").
	PerGenerationLimit Credits `yaml:"workspace_per_generation_limit" env:"MEDIASPEC_WORKSPACE_PER_GENERATION_LIMIT"`
	DailyLimit         Credits `yaml:"workspace_daily_limit" env:"MEDIASPEC_WORKSPACE_DAILY_LIMIT"`
	// Features are the optional test features the target offers (KnownFeatures): test-mode
	// inputs (FeatureTestInputs), the control API (implied by ControlURL).
	Features FeatureList `yaml:"features" env:"MEDIASPEC_FEATURES"`
	// TestKeys are the keys the operator marked as test keys, for which the target honours
	// test-mode inputs (spec/testmode.yaml); declared with the feature test-inputs, and only then.
	// The suite sends a test input only on one of them.
	TestKeys KeyList `yaml:"test_keys" env:"MEDIASPEC_TEST_KEYS"`
	// Natural inputs (naturalinputs.go): what the target's own content checks refuse, with no test
	// mechanism, which the operator knows and declares. RefusedPrompt is a text the server's
	// moderation refuses as a prompt or a script; FlaggedUpload is the path (relative to the
	// profile file when read from it) of an image, PNG, JPEG, WebP or GIF of at most 20 MiB,
	// whose finalize the server's content check flags.
	RefusedPrompt string `yaml:"refused_prompt" env:"MEDIASPEC_REFUSED_PROMPT"`
	FlaggedUpload string `yaml:"flagged_upload" env:"MEDIASPEC_FLAGGED_UPLOAD"`
}

// Off as Config.KeyHeader, DescriptionPath, LivePath or ReadyPath says the target has no such
// thing, even with Reference.
const Off = "off"

// The reference mock's answers to what the text leaves open (Config.Reference fills them in).
const (
	ReferenceKeyHeader       = "X-API-Key"
	ReferenceDescriptionPath = "/openapi.json"
	ReferenceLivePath        = "/health/live"
	ReferenceReadyPath       = "/health/ready"
)

// Named is what the target names for what the text leaves open, after Reference defaults and Off:
// the API key header, the live description's path and the two probe paths ("" where none).
func (c Config) Named() (keyHeader, description, live, ready string) {
	pick := func(v, ref string) string {
		switch {
		case v == Off:
			return ""
		case v == "" && c.Reference:
			return ref
		}
		return v
	}
	return pick(c.KeyHeader, ReferenceKeyHeader), pick(c.DescriptionPath, ReferenceDescriptionPath),
		pick(c.LivePath, ReferenceLivePath), pick(c.ReadyPath, ReferenceReadyPath)
}

// MaxProcs is the most processes a run may use (Config.Procs).
const MaxProcs = 32

// MaxShards is the most shares a run may be split into across machines (Config.Shard).
const MaxShards = 64

// Flags is the handle RegisterFlags returns; pass it to Load after the FlagSet is parsed.
type Flags struct {
	fs         *flag.FlagSet
	configFile string
	values     Config
}

// flagNames maps Config fields to their command-line flag names.
var flagNames = map[string]string{
	"BaseURL": "base-url", "Key": "key", "ReadKey": "read-key", "OtherKey": "other-key", "SiblingKey": "sibling-key",
	"ControlURL": "control-url", "ControlToken": "control-token", "Budget": "budget",
	"ReceiverListen": "receiver-listen", "ReceiverPublicURL": "receiver-url",
	"FilesListen": "files-listen", "FilesPublicURL": "files-url",
	"LabelFilter": "label-filter", "JSONReport": "json-report", "JUnitReport": "junit-report",
	"HTMLReport": "html-report", "TimeScale": "time-scale", "Slow": "slow", "RealTime": "real-time", "Long": "long",
	"Randomize": "randomize", "Seed": "seed", "RetiredCapabilityID": "retired-capability-id",
	"Reference": "reference", "Procs": "procs", "Shard": "shard", "KeySetList": "key-set", "KeysFile": "keys-file",
	"KeyHeader": "key-header", "DescriptionPath": "description-path", "LivePath": "live-path", "ReadyPath": "ready-path",
	"Strict": "strict", "Shapes": "shape", "MaxAnswerBytes": "max-answer-bytes", "MaxJSONBytes": "max-json-bytes",
	"RevokedKey": "revoked-key", "ExpiredKey": "expired-key", "BudgetKey": "budget-key", "BudgetKeyCredits": "budget-key-credits",
	"LowBalanceKey": "low-balance-key", "NoAgentAPIKey": "no-agent-api-key", "LowerPlanKey": "lower-plan-key",
	"GenerateOnlyKey": "generate-only-key", "DeletedWorkspaceKey": "deleted-workspace-key", "AllowanceUsedKey": "allowance-used-key",
	"BusinessKey":     "business-key",
	"OwnCatalogueKey": "own-catalogue-key", "OwnActorID": "own-actor-id", "OwnClonedVoiceID": "own-cloned-voice-id",
	"WithheldCapabilityID": "withheld-capability-id", "InternalPresetID": "internal-preset-id",
	"OwnProcessingActorID": "own-processing-actor-id", "OwnDisabledActorID": "own-disabled-actor-id",
	"OwnDeactivatedVoiceID":    "own-deactivated-voice-id",
	"RenamedFieldCapabilityID": "renamed-field-capability-id", "RenamedFieldOldName": "renamed-field-old-name",
	"RenamedFieldNewName": "renamed-field-new-name", "RenamedFieldStopsIn": "renamed-field-stops-in",
	"EndedFieldCapabilityID": "ended-field-capability-id", "EndedFieldOldName": "ended-field-old-name",
	"EndedFieldNewName": "ended-field-new-name", "EndedFieldStoppedIn": "ended-field-stopped-in",
	"RemovedEnumCapabilityID": "removed-enum-capability-id", "RemovedEnumField": "removed-enum-field",
	"RemovedEnumValue": "removed-enum-value",
	"SavedWorkflowIDs": "saved-workflow-id", "LongListsKey": "long-lists-key",
	"HighLimitKey": "high-limit-key", "LimitedKey": "limited-key", "LimitedPerGenerationLimit": "limited-key-per-generation-limit",
	"LimitedDailyLimit":  "limited-key-daily-limit",
	"PerGenerationLimit": "workspace-per-generation-limit", "DailyLimit": "workspace-daily-limit", "Features": "feature",
	"TestKeys": "test-key", "RefusedPrompt": "refused-prompt", "FlaggedUpload": "flagged-upload",
}

// RegisterFlags defines the suite's flags on fs (--config plus one per Config field) and returns
// the handle Load reads them from.
func RegisterFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{fs: fs}
	fs.StringVar(&f.configFile, "config", "", "YAML file with the suite configuration (env MEDIASPEC_CONFIG)")
	v := &f.values
	fs.StringVar(&v.BaseURL, "base-url", "", "API root of the service under test, e.g. http://127.0.0.1:8080/api/v1 (a path is taken as given; / for a server at its origin's root)")
	fs.StringVar(&v.Key, "key", "", "API key with read and generate scopes (never printed)")
	fs.StringVar(&v.ReadKey, "read-key", "", "read-only API key of the same workspace")
	fs.StringVar(&v.OtherKey, "other-key", "", "API key of a second workspace, for isolation specs")
	fs.StringVar(&v.SiblingKey, "sibling-key", "", "a second read+generate API key of --key's workspace (a profile role), for the specs of the per-key slot")
	fs.StringVar(&v.ControlURL, "control-url", "", "root of the test-control API, e.g. http://127.0.0.1:8080/_control/v1")
	fs.StringVar(&v.ControlToken, "control-token", "", "bearer token of the control API (never printed)")
	fs.StringVar(&v.ReceiverListen, "receiver-listen", "", "listen address of the suite's webhook receiver (default 127.0.0.1:0; off: none)")
	fs.StringVar(&v.ReceiverPublicURL, "receiver-url", "", "URL the target delivers webhooks to (default: the receiver's listener URL)")
	fs.StringVar(&v.FilesListen, "files-listen", "", "listen address of the suite's file server, whose links the from-url specs import (default 127.0.0.1:0)")
	fs.StringVar(&v.FilesPublicURL, "files-url", "", "URL the target fetches the suite's files from (default: the file server's listener URL; a real service refuses loopback links)")
	fs.IntVar(&v.Budget, "budget", 0, "most credits the run may spend; 0 skips specs that spend")
	fs.StringVar(&v.LabelFilter, "label-filter", "", "Ginkgo label filter selecting specs, e.g. 'AUTH-001 || health'")
	fs.StringVar(&v.JSONReport, "json-report", "", "write the JSON report to this path")
	fs.StringVar(&v.JUnitReport, "junit-report", "", "write the JUnit report to this path")
	fs.StringVar(&v.HTMLReport, "html-report", "", "write the HTML rule report to this path")
	fs.Float64Var(&v.TimeScale, "time-scale", 1, "how many times faster than real time the target's clock runs")
	fs.BoolVar(&v.Slow, "slow", false, "run specs labelled slow")
	fs.BoolVar(&v.RealTime, "real-time", false, "without the control API's clock, run the specs that wait out real time (each rate-bucket spec waits a minute of the target's clock first); the first line says how long")
	fs.BoolVar(&v.Long, "long", false, "with --real-time, also run the specs that wait out hours of the target's clock (a webhook delivery's 14.5-hour retry schedule); the first line says how long")
	fs.BoolVar(&v.Randomize, "randomize", false, "randomize the order of all specs")
	fs.Int64Var(&v.Seed, "seed", 0, "random seed for the spec order (0: from the clock)")
	fs.StringVar(&v.RetiredCapabilityID, "retired-capability-id", "", "a capability id the target has retired (not listed, so not discoverable); empty skips the specs that need one")
	fs.IntVar(&v.Procs, "procs", 1, "run the specs in N processes at once: keys only, each with a key set of its own, or the embedded mock, one per process (not with a --base-url target's control API: the processes would share its clock and catalogue)")
	fs.StringVar(&v.Shard, "shard", "", "K/N: run the K-th of N balanced shares of the selected specs (one per CI machine; mediaspec merge-reports joins their JSON reports); not with --procs or a shared target's --control-url")
	fs.Var(&v.KeySetList, "key-set", "KEY,READ_KEY,OTHER_KEY[,SIBLING_KEY]: one more key set for --procs (repeat it; --key, --read-key, --other-key and --sibling-key are the first set)")
	fs.StringVar(&v.KeysFile, "keys-file", "", "file of key sets for --procs, one KEY,READ_KEY,OTHER_KEY[,SIBLING_KEY] per line")
	fs.StringVar(&v.KeyHeader, "key-header", "", "name of the target's API key header, the second key scheme (not shown in the text; default: none, Authorization: Bearer only; with --reference X-API-Key; off: none)")
	fs.StringVar(&v.DescriptionPath, "description-path", "", "path of the live REST description below the API root, e.g. /openapi.json (not shown in the text; default: none, the specs reading it skip; with --reference /openapi.json; off: none)")
	fs.StringVar(&v.LivePath, "live-path", "", "path of the liveness probe below the API root (not shown in the text; default: none; with --reference /health/live; off: none)")
	fs.StringVar(&v.ReadyPath, "ready-path", "", "path of the readiness probe below the API root (not shown in the text; default: none; with --reference /health/ready; off: none)")
	fs.BoolVar(&v.Strict, "strict", false, "hold answers to the reference document as written: a difference from the reference's own choices where the interface text allows it (an advisory otherwise) fails the spec; for checking mediaspec's own mock")
	fs.Var(&v.Shapes, "shape", "NAME=VALUE: what the target chose where the text shows no shape (repeat it), e.g. balance.available=/wallet/available; names: "+shapeNames())
	v.MaxAnswerBytes, v.MaxJSONBytes = DefaultMaxAnswerBytes, DefaultMaxJSONBytes
	fs.Var(&v.MaxAnswerBytes, "max-answer-bytes", "largest answer body the suite reads that is not a JSON document (a file from a link), a `size` such as 64MiB; a larger one fails its call, naming it")
	fs.Var(&v.MaxJSONBytes, "max-json-bytes", "largest JSON answer body the suite reads and decodes, a `size` such as 8MiB (and at most one JSON value per 20 bytes of it); a larger one fails its call, naming it")
	fs.StringVar(&v.RevokedKey, "revoked-key", "", "profile: a revoked key of the target (never printed)")
	fs.StringVar(&v.ExpiredKey, "expired-key", "", "profile: an expired key of the target (never printed)")
	fs.StringVar(&v.BudgetKey, "budget-key", "", "profile: a read+generate key with a rolling 24-hour budget of its own, of --budget-key-credits (never printed)")
	fs.Var(&v.BudgetKeyCredits, "budget-key-credits", "profile: the 24-hour budget of --budget-key, in credits")
	fs.StringVar(&v.LowBalanceKey, "low-balance-key", "", "profile: a read+generate key of a workspace with too low a balance to submit, its limits left at the text's defaults (never printed)")
	fs.StringVar(&v.NoAgentAPIKey, "no-agent-api-key", "", "profile: a key of a workspace whose plan lacks the agent API (never printed)")
	fs.StringVar(&v.BusinessKey, "business-key", "", "profile: a read+generate key of a workspace on the business plan, which unlocks every requires_plan capability (never printed)")
	fs.StringVar(&v.OwnCatalogueKey, "own-catalogue-key", "", "profile: a read+generate key of a workspace holding --own-actor-id and --own-cloned-voice-id (never printed)")
	fs.StringVar(&v.OwnActorID, "own-actor-id", "", "profile: an actor made, without tags, in --own-catalogue-key's workspace (ready)")
	fs.StringVar(&v.OwnClonedVoiceID, "own-cloned-voice-id", "", "profile: a voice cloned in --own-catalogue-key's workspace (active)")
	fs.StringVar(&v.WithheldCapabilityID, "withheld-capability-id", "",
		"profile: a capability withheld from agents (not listed, so not discoverable)")
	fs.StringVar(&v.InternalPresetID, "internal-preset-id", "",
		"profile: a preset withheld from agents, internal (not listed, so not discoverable)")
	fs.StringVar(&v.OwnProcessingActorID, "own-processing-actor-id", "",
		"profile: an actor of --own-catalogue-key's workspace still processing")
	fs.StringVar(&v.OwnDisabledActorID, "own-disabled-actor-id", "",
		"profile: an actor of --own-catalogue-key's workspace that was disabled")
	fs.StringVar(&v.OwnDeactivatedVoiceID, "own-deactivated-voice-id", "",
		"profile: a voice cloned in --own-catalogue-key's workspace and deactivated")
	registerVersionFlags(fs, v)
	fs.Var(&v.SavedWorkflowIDs, "saved-workflow-id", "profile: a saved workflow of a key set's first workspace, taking no inputs (repeat it, or comma-separate: one per key set, in their order)")
	fs.StringVar(&v.LongListsKey, "long-lists-key", "", "profile: a read-only key of a workspace holding more than 50 presets and more than 50 voices (never printed)")
	fs.StringVar(&v.HighLimitKey, "high-limit-key", "",
		fmt.Sprintf("profile: a read+generate key of a workspace whose per-generation and daily limits and balance are %d credits or more (never printed)", HighLimitCredits))
	fs.StringVar(&v.LimitedKey, "limited-key", "",
		"profile: a read+generate key of a workspace whose per-generation and daily limits are set under any video hold (never printed)")
	fs.Var(&v.LimitedPerGenerationLimit, "limited-key-per-generation-limit",
		"profile: the per-generation limit of --limited-key's workspace, in credits")
	fs.Var(&v.LimitedDailyLimit, "limited-key-daily-limit", "profile: the daily limit of --limited-key's workspace, in credits")
	fs.StringVar(&v.LowerPlanKey, "lower-plan-key", "", "profile: a read+generate key of a workspace whose plan lacks a capability a higher plan has (never printed)")
	fs.StringVar(&v.GenerateOnlyKey, "generate-only-key", "", "profile: a key holding only the generate scope, of a workspace with credits (never printed)")
	fs.StringVar(&v.DeletedWorkspaceKey, "deleted-workspace-key", "", "profile: a key of a workspace that was deleted (never printed)")
	fs.StringVar(&v.AllowanceUsedKey, "allowance-used-key", "", "profile: a key that used its whole request allowance (never printed)")
	fs.Var(&v.PerGenerationLimit, "workspace-per-generation-limit", "profile: the per-generation limit set on --key's workspace, in credits (default: the text's "+
		strconv.FormatInt(contract.PerGenerationCap, 10)+")")
	fs.Var(&v.DailyLimit, "workspace-daily-limit", "profile: the rolling 24-hour limit set on --key's workspace, in credits (default: the text's "+
		strconv.FormatInt(contract.DailyBudget, 10)+")")
	fs.Var(&v.Features, "feature", "profile: an optional test feature the target offers (repeat it, or comma-separate); known: "+strings.Join(KnownFeatures(), ", "))
	fs.Var(&v.TestKeys, "test-key", "profile: a test key, for which the target honours test-mode inputs (with --feature test-inputs; repeat it, or comma-separate; never printed)")
	fs.StringVar(&v.RefusedPrompt, "refused-prompt", "", "profile: a text the target's moderation refuses as a prompt or a script (natural, no test mode)")
	fs.StringVar(&v.FlaggedUpload, "flagged-upload", "",
		"profile: an image file (PNG, JPEG, WebP or GIF) whose upload the target's content check flags (a path; in the profile file, relative to it)")
	fs.BoolVar(&v.Reference, "reference", false, "the target is mediaspec's own mock: a state the suite needs and cannot find fails the spec instead of skipping it")
	return f
}

// Load builds the Config: defaults, then the YAML file named by --config (or MEDIASPEC_CONFIG), then
// environment variables read through getenv (os.Getenv when nil), then the flags set on the command
// line. flags may be nil (no flags). The result is not checked: New checks it with Validate, so a
// caller may fill in what is missing (mediaspec check fills in its embedded mock) before that.
func Load(flags *Flags, getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	cfg := Config{TimeScale: 1, Procs: 1}
	file := getenv("MEDIASPEC_CONFIG")
	if flags != nil && flags.configFile != "" {
		file = flags.configFile
	}
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return Config{}, fmt.Errorf("conformance: config: %w", err)
		}
		if err := ParseConfigYAML(data, &cfg); err != nil {
			return Config{}, fmt.Errorf("%s (%s)", err, file)
		}
		cfg.FlaggedUpload = besideFile(cfg.FlaggedUpload, file)
	}
	if err := applyEnv(&cfg, getenv); err != nil {
		return Config{}, err
	}
	if flags != nil {
		set := map[string]bool{}
		flags.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		src := reflect.ValueOf(flags.values)
		dst := reflect.ValueOf(&cfg).Elem()
		for i := 0; i < dst.NumField(); i++ {
			name := dst.Type().Field(i).Name
			switch {
			case !set[flagNames[name]]:
			case name == "Features": // --feature adds to the file's and the environment's features
				cfg.Features = cfg.Features.union(flags.values.Features)
			case name == "TestKeys": // --test-key adds to the file's and the environment's test keys
				cfg.TestKeys = append(cfg.TestKeys, flags.values.TestKeys...)
			case name == "Shapes": // --shape adds to the file's and the environment's shapes
				for k, v := range flags.values.Shapes {
					if cfg.Shapes == nil {
						cfg.Shapes = ShapeList{}
					}
					cfg.Shapes[k] = v
				}
			default:
				dst.Field(i).Set(src.Field(i))
			}
		}
	}
	if err := cfg.loadKeysFile(); err != nil {
		return Config{}, err
	}
	if err := cfg.checkFlaggedUpload(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// ParseConfigYAML reads a YAML config over cfg; unknown keys are refused.
func ParseConfigYAML(data []byte, cfg *Config) error {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("conformance: config file: %s", nameKeys(data, yamlProblem(err)))
	}
	return nil
}

var lineRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+): `) })

// nameKeys puts the setting of each "line N: " of msg after it, where the problem does not name it
// already: "line 2: budget: `lots` is not a whole number".
func nameKeys(data []byte, msg string) string {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return msg
	}
	return lineRef().ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(lineRef().FindStringSubmatch(m)[1])
		key := keyAtLine(&root, n, "")
		if key == "" || strings.Contains(msg, key+":") || strings.Contains(msg, "setting "+key) {
			return m
		}
		return m + key + ": "
	})
}

// keyAtLine is the dotted path of the deepest mapping key whose entry starts on line (or whose
// value does), "" when none.
func keyAtLine(n *yaml.Node, line int, prefix string) string {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			if k := keyAtLine(c, line, prefix); k != "" {
				return k
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			path := k.Value
			if prefix != "" {
				path = prefix + "." + k.Value
			}
			if deeper := keyAtLine(v, line, path); deeper != "" {
				return deeper
			}
			if k.Line == line || v.Line == line {
				return path
			}
		}
	}
	return ""
}

var (
	unknownKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`field (\S+) not found in type \S+`) })
	wrongType  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("cannot unmarshal !!\\w+ (`[^`]*`) into (\\S+)") })
	// goKinds names, for a reader of the YAML file, the Go types of Config's fields.
	goKinds = map[string]string{"int": "a whole number", "int64": "a whole number", "float64": "a number",
		"bool": "true or false", "string": "a string", "[]string": "a list of strings", "time.Duration": "a duration such as 30s"}
)

// yamlProblem is a YAML decoding error as one line in the file's terms: each problem with its line,
// an unknown key named as a setting (not as a field of a Go type) and a wrong value with what the
// setting takes.
func yamlProblem(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return strings.TrimPrefix(err.Error(), "yaml: ")
	}
	parts := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		e = unknownKey().ReplaceAllString(e, "unknown setting $1")
		if m := wrongType().FindStringSubmatch(e); m != nil {
			want := goKinds[m[2]]
			if want == "" {
				want = "another kind of value"
			}
			e = strings.Replace(e, m[0], m[1]+" is not "+want, 1)
		}
		parts = append(parts, e)
	}
	return strings.Join(parts, "; ")
}

func applyEnv(cfg *Config, getenv func(string) string) error {
	v := reflect.ValueOf(cfg).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := t.Field(i).Tag.Get("env")
		raw := getenv(name)
		if name == "" || raw == "" {
			continue
		}
		f := v.Field(i)
		if fv, ok := f.Addr().Interface().(flag.Value); ok {
			if err := fv.Set(raw); err != nil {
				return fmt.Errorf("conformance: %s: %v", name, err)
			}
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString(raw)
		case reflect.Int, reflect.Int64:
			n, err := strconv.ParseInt(raw, 10, 64)
			if err != nil {
				return fmt.Errorf("conformance: %s: not an integer: %q", name, raw)
			}
			f.SetInt(n)
		case reflect.Float64:
			x, err := strconv.ParseFloat(raw, 64)
			if err != nil {
				return fmt.Errorf("conformance: %s: not a number: %q", name, raw)
			}
			f.SetFloat(x)
		case reflect.Bool:
			b, err := strconv.ParseBool(raw)
			if err != nil {
				return fmt.Errorf("conformance: %s: not a boolean: %q", name, raw)
			}
			f.SetBool(b)
		}
	}
	return nil
}

// Validate checks that the Config names a target and can authenticate: a base URL, and either a key
// or control access to make one. Secrets are never part of an error message.
func (c Config) Validate() error {
	if c.BaseURL == "" {
		return errors.New("conformance: no base URL: give --base-url or MEDIASPEC_BASE_URL")
	}
	if _, err := c.APIRoot(); err != nil {
		return err
	}
	if c.ControlURL != "" {
		if _, err := c.ControlRoot(); err != nil {
			return err
		}
		if c.ControlToken == "" {
			return errors.New("conformance: a control URL needs a control token: give --control-token or MEDIASPEC_CONTROL_TOKEN")
		}
	}
	if c.Procs < 0 || c.Procs > MaxProcs {
		return fmt.Errorf("conformance: --procs %d: want 1 to %d", c.Procs, MaxProcs)
	}
	if c.Shard != "" {
		if _, _, err := report.ParseShard(c.Shard, MaxShards); err != nil {
			return fmt.Errorf("conformance: --%s", err)
		}
		if c.Procs > 1 {
			return fmt.Errorf("conformance: --shard %s with --procs %d: split one way (--shard across machines, --procs on one)", c.Shard, c.Procs)
		}
	}
	if c.Key == "" && c.ControlURL == "" {
		return errors.New("conformance: no API key and no control API: give --key (MEDIASPEC_KEY) or --control-url and --control-token so the suite can make its own workspace")
	}
	if c.Budget < 0 {
		return fmt.Errorf("conformance: --budget %d: want zero or more credits", c.Budget)
	}
	if c.MaxAnswerBytes < 0 || c.MaxJSONBytes < 0 {
		return errors.New("conformance: --max-answer-bytes and --max-json-bytes: want a size above zero")
	}
	if c.TimeScale <= 0 {
		return fmt.Errorf("conformance: --time-scale %g: want above zero", c.TimeScale)
	}
	if h := c.KeyHeader; h != "" && h != Off && (strings.EqualFold(h, "Authorization") || strings.ContainsAny(h, " :\t\r\n")) {
		return fmt.Errorf("conformance: --key-header %q: want a header name other than Authorization", h)
	}
	if err := c.checkShapes(); err != nil {
		return err
	}
	if err := c.checkProfile(); err != nil {
		return err
	}
	for _, p := range []struct{ flag, v string }{{"--description-path", c.DescriptionPath}, {"--live-path", c.LivePath}, {"--ready-path", c.ReadyPath}} {
		if p.v != "" && p.v != Off && !strings.HasPrefix(p.v, "/") {
			return fmt.Errorf("conformance: %s %q: want a path below the API root, starting with /", p.flag, p.v)
		}
	}
	return nil
}

// APIRoot is BaseURL parsed, with /api/v1 appended when it has no path.
func (c Config) APIRoot() (*url.URL, error) {
	return root(c.BaseURL, "/api/v1", "base URL")
}

// ControlRoot is ControlURL parsed, with /_control/v1 appended when it does not end in it.
func (c Config) ControlRoot() (*url.URL, error) {
	u, err := root(c.ControlURL, "/_control/v1", "control URL")
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(u.Path, "/_control/v1") {
		u.Path = strings.TrimRight(u.Path, "/") + "/_control/v1"
	}
	return u, nil
}

func root(raw, defPath, what string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("conformance: %s %q is not an http(s) URL", what, raw)
	}
	// A URL with no path gets the default; any path is taken as given, "/" being the origin's root
	// (a server that serves the API there, e.g. a mock of the document at its root).
	if u.Path == "" {
		u.Path = defPath
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}
