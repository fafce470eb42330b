package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/mediaspec/mediaspec/conformance"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/mediaspec/mediaspec/fixtures"
	"github.com/mediaspec/mediaspec/fixtures/media"
	"github.com/mediaspec/mediaspec/mock"
	"github.com/mediaspec/mediaspec/mock/clock"
	"github.com/mediaspec/mediaspec/spec"
)

// runMock starts the stateful mock and serves until ctx is done (Ctrl-C).
func runMock(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mock", "[flags]", stderr)
	var cfg mock.Config
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:8080", "listen address (use 127.0.0.1:0 for any free port) [$MEDIASPEC_MOCK_ADDR]")
	fs.StringVar(&cfg.PublicURL, "public-url", "", "scheme and host written into links and printed (default http://<addr>) [$MEDIASPEC_MOCK_PUBLIC_URL]")
	fs.Uint64Var(&cfg.Seed, "seed", 0, "seed for ids, keys, rendered bytes and fault decisions (0: random, printed) [$MEDIASPEC_MOCK_SEED]")
	fs.Float64Var(&cfg.TimeScale, "time-scale", 1, "run service time N times faster than wall time [$MEDIASPEC_MOCK_TIME_SCALE]")
	clockMode := fs.String("clock", "real", "service clock: real (wall time times --time-scale) or manual (moves only through POST /_control/v1/clock/advance) [$MEDIASPEC_MOCK_CLOCK]")
	fs.StringVar(&cfg.ControlToken, "control-token", "", "token for the control API (default: random, printed) [$MEDIASPEC_MOCK_CONTROL_TOKEN]")
	fs.BoolVar(&cfg.NoControl, "no-control", false, "turn the control API off [$MEDIASPEC_MOCK_NO_CONTROL]")
	fs.BoolVar(&cfg.TestInputs, "test-inputs", false, "honour test-mode inputs (the Mediaspec-Test-Input header, mediaspec spec --test-mode) for the start state's keys, its test keys; --profile-out then declares the feature and those keys [$MEDIASPEC_MOCK_TEST_INPUTS]")
	fs.Int64Var(&cfg.Balance, "balance", mock.DefaultBalance, "starting balance of the default workspace, in credits [$MEDIASPEC_MOCK_BALANCE]")
	fs.IntVar(&cfg.KeySets, "key-sets", 1, "key sets in the start state, each a workspace with a generate and a read key plus a second workspace with its key; listed as key_sets (check --procs N takes N) [$MEDIASPEC_MOCK_KEY_SETS]")
	fs.BoolVar(&cfg.AllowLoopbackFetch, "allow-loopback-fetch", false, "let POST /uploads/from-url fetch from 127.0.0.0/8, ::1 and localhost (nothing else private) [$MEDIASPEC_MOCK_ALLOW_LOOPBACK_FETCH]")
	fs.BoolVar(&cfg.AllowLoopbackWebhooks, "allow-loopback-webhooks", false, "also admit webhook URLs on http(s)://127.0.0.1:* and http(s)://localhost:* (nothing else private) [$MEDIASPEC_MOCK_ALLOW_LOOPBACK_WEBHOOKS]")
	fs.BoolVar(&cfg.ValidateResponses, "validate-responses", false, "check every answer against the REST description and log violations [$MEDIASPEC_MOCK_VALIDATE_RESPONSES]")
	fs.StringVar(&cfg.LogFormat, "log-format", "text", "log format: text or json [$MEDIASPEC_MOCK_LOG_FORMAT]")
	lim := &cfg.Limits
	d := mock.DefaultLimits
	fs.DurationVar(&lim.ShutdownGrace, "shutdown-grace", d.ShutdownGrace, "on SIGTERM/SIGINT, how long requests in flight may finish (parked waits answer at once) [$MEDIASPEC_MOCK_SHUTDOWN_GRACE]")
	fs.DurationVar(&lim.ReadHeaderTimeout, "read-header-timeout", d.ReadHeaderTimeout, "time to read a request's headers [$MEDIASPEC_MOCK_READ_HEADER_TIMEOUT]")
	fs.DurationVar(&lim.ReadTimeout, "read-timeout", d.ReadTimeout, "time to read a whole request, body included [$MEDIASPEC_MOCK_READ_TIMEOUT]")
	fs.DurationVar(&lim.WriteTimeout, "write-timeout", d.WriteTimeout, "time from a request's headers to the end of its answer (longer than a wait) [$MEDIASPEC_MOCK_WRITE_TIMEOUT]")
	fs.DurationVar(&lim.IdleTimeout, "idle-timeout", d.IdleTimeout, "close a keep-alive connection idle this long [$MEDIASPEC_MOCK_IDLE_TIMEOUT]")
	fs.DurationVar(&lim.UploadTimeout, "upload-timeout", d.UploadTimeout, "read and write time of one PUT to an upload link [$MEDIASPEC_MOCK_UPLOAD_TIMEOUT]")
	fs.IntVar(&lim.MaxConns, "max-conns", d.MaxConns, "most connections served at once; at the cap a new client closes the longest-idle keep-alive connection, or waits while none is idle [$MEDIASPEC_MOCK_MAX_CONNS]")
	fs.Int64Var(&cfg.UploadBytesLimit, "upload-bytes-limit", mock.DefaultUploadBytesLimit, "most bytes of pending uploads (reserved in the last 15 minutes, not finalized) of all workspaces together; a reservation past it answers 429 quota_exceeded [$MEDIASPEC_MOCK_UPLOAD_BYTES_LIMIT]")
	fs.DurationVar(&cfg.Retain, "retain", 0, fmt.Sprintf("forget what ended this long ago on the service clock: finished generations and batches with their output records, ended workflow runs, finished webhook deliveries, uploads unused that long (0: keep until reset; else at least %s) [$MEDIASPEC_MOCK_RETAIN]", mock.MinRetain))
	specFile := fs.String("spec", "", "serve (and validate answers with) the REST description in FILE instead of the embedded one [$MEDIASPEC_MOCK_SPEC]")
	catalogDir := fs.String("catalog", "", "serve the capability catalogue in DIR (a copy of fixtures/catalog) instead of the embedded one [$MEDIASPEC_MOCK_CATALOG]")
	quiet := fs.Bool("quiet", false, "log only warnings and errors: no request lines (by default each request is logged: method, path, status, duration, key id, error code) and no other information, such as an upload refused at finalize [$MEDIASPEC_MOCK_QUIET]")
	fs.BoolVar(&cfg.Audit, "audit", false, "audit the client: record each breach of a client duty of the interface (rule id, key id, request, advice) at GET /_control/v1/audit and print a summary per rule at shutdown [$MEDIASPEC_MOCK_AUDIT]")
	auditFail := fs.Bool("audit-fail", false, "with the audit (implies --audit): exit 1 at shutdown when any MUST finding was recorded, so a client's CI can gate on it [$MEDIASPEC_MOCK_AUDIT_FAIL]")
	profileOut := fs.String("profile-out", "", "write the target profile of the mock's pre-made fixtures (base URL, keys by role, retired capability, key header, probe and description paths, open shapes) to FILE once it listens, for mediaspec check --config FILE: the mock checked as a keys-plus-profile target (docs/staging.md) [$MEDIASPEC_MOCK_PROFILE_OUT]")
	infoJSON := fs.Bool("json", false, "print the start information as one JSON object instead of text [$MEDIASPEC_MOCK_JSON]")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := applyEnv(fs, "MEDIASPEC_MOCK_"); err != nil {
		return err
	}
	cfg.LogRequests = !*quiet
	cfg.Audit = cfg.Audit || *auditFail
	logOpts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if *quiet {
		logOpts.Level = slog.LevelWarn
	}
	// The log goes out through a writer of its own, so a request does not wait for the terminal's
	// write (many lines go in one write under load); it is drained when the mock stops.
	logOut := mock.NewLogWriter(stderr)
	defer func() { _ = logOut.Close() }()
	switch cfg.LogFormat {
	case "text":
		cfg.Logger = slog.New(mock.NewTextLogHandler(logOut, logOpts))
	case "json":
		cfg.Logger = slog.New(slog.NewJSONHandler(logOut, logOpts))
	default:
		return usageError{msg: fmt.Sprintf("--log-format %q: want text or json", cfg.LogFormat)}
	}
	if cfg.Retain < 0 || (cfg.Retain > 0 && cfg.Retain < mock.MinRetain) {
		return usageError{msg: fmt.Sprintf("--retain %s: want 0 (keep until reset) or at least %s, the longest time the interface sends a client back to an ended record (the last webhook retry, its timeout and the link a read hands out)", cfg.Retain, mock.MinRetain)}
	}
	if cfg.UploadBytesLimit <= 0 {
		return usageError{msg: "--upload-bytes-limit must be above 0"}
	}
	if cfg.TimeScale <= 0 {
		return usageError{msg: "--time-scale must be above 0"}
	}
	defer collectLazily(cfg.UploadBytesLimit)()
	switch *clockMode {
	case "real":
	case "manual":
		// Service time starts at the wall clock's whole second and moves only when the control API
		// advances it, so an out-of-process conformance run is as deterministic as the in-process
		// harness.
		if cfg.NoControl {
			return usageError{msg: "--clock manual needs the control API (it is the only way to move time): drop --no-control"}
		}
		cfg.Clock = clock.NewManual(time.Now().UTC().Truncate(time.Second))
	default:
		return usageError{msg: fmt.Sprintf("--clock %q: want real or manual", *clockMode)}
	}
	if *specFile != "" {
		doc, err := spec.LoadDocumentFile(ctx, *specFile)
		if err != nil {
			return setupError{fmt.Errorf("--spec: %w", err)}
		}
		if cfg.OpenAPIJSON, err = json.Marshal(doc); err != nil {
			return setupError{fmt.Errorf("--spec: %w", err)}
		}
	}
	if *catalogDir != "" {
		fx, err := fixtures.LoadDir(*catalogDir)
		if err != nil {
			return setupError{fmt.Errorf("--catalog: %w", err)}
		}
		cfg.Fixtures = fx
	}
	// The profile declares keys by role: the start state holds them only when one is written.
	cfg.RoleKeys = *profileOut != ""
	srv, err := mock.New(cfg)
	if err != nil {
		return setupError{err}
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return setupError{listenError(cfg.Addr, err)}
	}
	srv.SetPublicURL("http://" + ln.Addr().String())
	info := srv.Info()
	// The profile is in place before the start line, which a script waits for.
	if *profileOut != "" {
		if err := writeMockProfile(*profileOut, info, cfg); err != nil {
			_ = ln.Close()
			return setupError{err}
		}
	}
	if *infoJSON {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(info); err != nil {
			_ = ln.Close()
			return err
		}
	} else {
		fmt.Fprintln(stdout, "mediaspec mock is serving the media generation API. Ctrl-C stops it.")
		if err := info.Format(stdout); err != nil {
			_ = ln.Close()
			return err
		}
		fmt.Fprintf(stdout, "\ntry:  curl -s -H 'Authorization: Bearer %s' %s/credits/balance\n", info.GenerateKey, info.BaseURL)
	}
	if f, ok := stdout.(*os.File); ok {
		_ = f.Sync()
	}
	if err := srv.Serve(ctx, ln); err != nil {
		return err
	}
	_ = logOut.Close() // every line out before the summary
	return auditVerdict(srv, stderr, *auditFail)
}

// auditVerdict prints the audit's summary when the mock stops (nothing without --audit) and, with
// --audit-fail, fails when a MUST finding was recorded.
func auditVerdict(srv *mock.Server, stderr io.Writer, failOnMust bool) error {
	if !srv.Auditing() {
		return nil
	}
	if err := srv.WriteAuditSummary(stderr); err != nil {
		return err
	}
	if failOnMust && srv.AuditBrokeMust() {
		return errors.New("audit: the client broke a MUST duty (see the summary above and GET /_control/v1/audit)")
	}
	return nil
}

// listenError says why addr cannot be listened on in one line, with what to do when it is taken.
func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("listen on %s: the address is in use (stop what listens there, or pick another port; 127.0.0.1:0 takes any free one)", addr)
	}
	return fmt.Errorf("listen on %s: %w", addr, err)
}

// applyEnv sets every flag that was not given on the command line from the environment variable
// PREFIX + NAME (upper case, dashes as underscores), when that variable is set.
func applyEnv(fs *flag.FlagSet, prefix string) error {
	names := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		names[f.Name] = prefix + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
	})
	return applyEnvNames(fs, names)
}

// collectLazily sets the garbage collector for a serving mock and returns what restores it. The
// mock's heap is small next to its memory ceiling (docs/mock-limits.md: 128 MiB plus the
// pending-upload limit), so the heap may grow by 300 % between collections instead of 100 %,
// which took about a tenth of the CPU of each request under load; a soft limit at the ceiling
// makes the collector work harder rather than pass it. GOGC or GOMEMLIMIT in the environment win.
func collectLazily(uploadBytesLimit int64) (restore func()) {
	gc, limit := -2, int64(-1)
	if os.Getenv("GOGC") == "" {
		gc = debug.SetGCPercent(300)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		limit = debug.SetMemoryLimit(128<<20 + uploadBytesLimit)
	}
	return func() {
		if gc != -2 {
			debug.SetGCPercent(gc)
		}
		if limit >= 0 {
			debug.SetMemoryLimit(limit)
		}
	}
}

// writeMockProfile writes the target profile of the mock's start state to path (mock
// --profile-out): what the operator of a staging server would declare about it. It holds the keys
// by role (every key set with its sibling key, for check --procs; the revoked, expired, budget,
// low-balance and free-plan keys of mock.RoleKeys), a retired capability of its catalogue, and the
// mock's answers where the text names nothing (the key header, the probe and description paths,
// the open shapes), its clock's time scale when it is not 1; no control URL, no receiver settings (the suite's default listener is on
// loopback, which --allow-loopback-webhooks admits) and no run settings. The file holds keys: it
// is written readable by its owner only.
func writeMockProfile(path string, info mock.StartInfo, cfg mock.Config) error {
	fx := cfg.Fixtures
	if fx == nil {
		var err error
		if fx, err = fixtures.Shared(); err != nil {
			return fmt.Errorf("--profile-out: %w", err)
		}
	}
	p := conformance.Config{
		BaseURL: info.BaseURL, Key: info.GenerateKey, ReadKey: info.ReadKey, OtherKey: info.OtherKey,
		RetiredCapabilityID: firstCapability(fx, retired),
		KeyHeader:           conformance.ReferenceKeyHeader, DescriptionPath: conformance.ReferenceDescriptionPath,
		LivePath: conformance.ReferenceLivePath, ReadyPath: conformance.ReferenceReadyPath,
		Shapes: conformance.ReferenceShapes(),
	}
	if r := info.Roles; r != nil {
		p.RevokedKey, p.ExpiredKey, p.LowBalanceKey, p.NoAgentAPIKey = r.Revoked, r.Expired, r.LowBalance, r.NoAgentAPI
		p.BudgetKey, p.BudgetKeyCredits = r.Budget, conformance.CreditsOf(r.BudgetCredits)
		p.GenerateOnlyKey, p.DeletedWorkspaceKey, p.AllowanceUsedKey = r.GenerateOnly, r.DeletedWorkspace, r.AllowanceUsed
		p.BusinessKey, p.OwnCatalogueKey, p.OwnActorID, p.OwnClonedVoiceID = r.Business, r.OwnCatalogue, r.OwnActor, r.OwnClonedVoice
		if len(r.Siblings) > 0 {
			p.SiblingKey = r.Siblings[0]
		}
		p.OwnProcessingActorID, p.OwnDisabledActorID, p.OwnDeactivatedVoiceID = r.OwnProcessingActor, r.OwnDisabledActor, r.OwnDeactivatedVoice
		p.WithheldCapabilityID, p.InternalPresetID = firstCapability(fx, withheld(false)), firstCapability(fx, withheld(true))
		if f := r.Renamed; f != nil {
			p.RenamedFieldCapabilityID, p.RenamedFieldOldName, p.RenamedFieldNewName, p.RenamedFieldStopsIn = f.Capability, f.OldName, f.NewName, f.StopsIn
		}
		if f := r.Ended; f != nil {
			p.EndedFieldCapabilityID, p.EndedFieldOldName, p.EndedFieldNewName, p.EndedFieldStoppedIn = f.Capability, f.OldName, f.NewName, f.StopsIn
		}
		p.HighLimitKey, p.LimitedKey = r.HighLimit, r.Limited
		p.LimitedPerGenerationLimit, p.LimitedDailyLimit = conformance.CreditsOf(r.LimitedPerGeneration), conformance.CreditsOf(r.LimitedDaily)
		if e := r.RemovedEnum; e != nil {
			p.RemovedEnumCapabilityID, p.RemovedEnumField, p.RemovedEnumValue = e.Capability, e.Field, e.Value
		}
		// The long lists and the saved workflows (one per key set, in their order) an operator
		// makes in their app.
		p.LongListsKey, p.SavedWorkflowIDs = r.LongLists, conformance.IDList(r.SavedWorkflows)
	}
	if info.TimeScale != 1 && info.TimeScale > 0 {
		// A scaled clock is part of what the target is: the suite's waits and windows follow it.
		p.TimeScale = info.TimeScale
	}
	for n, ks := range info.KeySets {
		set := conformance.KeySet{Key: ks.GenerateKey, ReadKey: ks.ReadKey, OtherKey: ks.OtherKey}
		if r := info.Roles; r != nil && n < len(r.Siblings) {
			set.SiblingKey = r.Siblings[n] // the sibling key of this set's workspace
		}
		p.KeySetList = append(p.KeySetList, set)
	}
	if cfg.TestInputs {
		// The test keys of a mock started with --test-inputs are the generate, read and other keys
		// of its key sets, made before the role keys: role and sibling keys are not test keys.
		p.Features = conformance.FeatureList{conformance.FeatureTestInputs}
		for _, k := range []string{info.GenerateKey, info.ReadKey, info.OtherKey} {
			_ = p.TestKeys.Set(k)
		}
		for _, ks := range info.KeySets {
			_ = p.TestKeys.Set(ks.GenerateKey + "," + ks.ReadKey + "," + ks.OtherKey)
		}
	}
	// Natural inputs (its documented triggers, no test mode): a prompt carrying the moderation
	// marker word, and an image carrying the scanner marker, written beside the profile.
	p.RefusedPrompt = "A street poster that reads " + fixtures.ModerationMarker + " in large letters."
	flagged, err := writeFlaggedImage(path)
	if err != nil {
		return err
	}
	p.FlaggedUpload = flagged
	out, err := p.ProfileYAML(
		"Target profile of a mediaspec mock (mediaspec mock --profile-out; schema: spec/profile.schema.json).",
		"Check it as a keys-plus-profile target: mediaspec check --config THIS_FILE (docs/staging.md).",
		"It holds the mock's keys: keep it out of version control.")
	if err != nil {
		return fmt.Errorf("--profile-out: %w", err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		return fmt.Errorf("--profile-out: %w", err)
	}
	return nil
}

// writeFlaggedImage writes the sample image the mock's scanner flags (it carries the scanner
// marker, fixtures/media) beside the profile at path, named after it, and returns its name relative
// to the profile (flagged_upload).
func writeFlaggedImage(path string) (string, error) {
	_, data, err := media.Lookup("flagged.png")
	if err != nil {
		return "", fmt.Errorf("--profile-out: %w", err)
	}
	base := filepath.Base(path)
	name := strings.TrimSuffix(base, filepath.Ext(base)) + "-flagged.png"
	if err := os.WriteFile(filepath.Join(filepath.Dir(path), name), data, 0o600); err != nil {
		return "", fmt.Errorf("--profile-out: %w", err)
	}
	return name, nil
}

// firstCapability is the id of the catalogue's first capability that is, "" when it has none (the
// specs that need one then skip, naming the setting).
func firstCapability(fx *fixtures.Catalog, is func(c *fixtures.Capability) bool) string {
	for _, c := range fx.Capabilities {
		if is(c) {
			return c.ID
		}
	}
	return ""
}

// retired is a retired capability, not a preset: actor_classic in the embedded catalogue.
func retired(c *fixtures.Capability) bool { return c.Status == fixtures.StatusRetired && !c.IsPreset() }

// withheld is a capability withheld from agents (offered_to_agents false), not retired, and a
// preset when preset: image_internal_eval and preset_internal_review in the embedded catalogue.
func withheld(preset bool) func(c *fixtures.Capability) bool {
	return func(c *fixtures.Capability) bool {
		return !c.OfferedToAgents && c.Status != fixtures.StatusRetired && c.IsPreset() == preset
	}
}
