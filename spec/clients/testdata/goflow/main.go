// Command goflow is the generated-client check's Go program: it uses only the client that
// oapi-codegen generates from spec/openapi.yaml (package mediaspec, written beside this file by the
// test) and runs a short flow against a running service: balance, voices, estimate, submit, wait,
// a generation.completed delivery dispatched through the generated event union, and an error answer
// decoded through the generated types.
//
// Usage: goflow BASE_URL API_KEY
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"mediaspec.example/goflow/mediaspec"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: goflow BASE_URL API_KEY")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "goflow:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, base, key string) error {
	c, err := mediaspec.NewClientWithResponses(base, mediaspec.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key)
		return nil
	}))
	if err != nil {
		return err
	}

	bal, err := c.GetCreditBalanceWithResponse(ctx)
	if err != nil {
		return fmt.Errorf("balance: %w", err)
	}
	if bal.JSON200 == nil {
		return unexpected("balance", bal.StatusCode(), bal.Body)
	}
	fmt.Printf("balance: %d credits available\n", bal.JSON200.AvailableCredits)

	voices, err := c.ListVoicesWithResponse(ctx, &mediaspec.ListVoicesParams{Limit: ptr(1)})
	if err != nil {
		return fmt.Errorf("voices: %w", err)
	}
	if voices.JSON200 == nil || len(voices.JSON200.Voices) == 0 {
		return unexpected("voices", voices.StatusCode(), voices.Body)
	}
	voice := voices.JSON200.Voices[0].VoiceId

	// A local receiver for the generation.completed delivery (the service under test must admit a
	// loopback endpoint, as the mock does with --allow-loopback-webhooks).
	deliveries := make(chan []byte, 8)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			deliveries <- b
			w.WriteHeader(http.StatusNoContent)
		}))
	}()
	hook, err := c.CreateWebhookWithResponse(ctx, mediaspec.WebhookCreateRequest{
		Url:    "http://" + ln.Addr().String() + "/hooks",
		Events: []mediaspec.WebhookEventType{mediaspec.WebhookEventTypeGenerationCompleted},
	})
	if err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	if hook.JSON201 == nil {
		return unexpected("webhook", hook.StatusCode(), hook.Body)
	}

	config := map[string]interface{}{"script": "Meet the bottle that keeps coffee hot for 12 hours."}
	est, err := c.CreateEstimateWithResponse(ctx, mediaspec.EstimateRequest{CapabilityId: "tts", Config: config, VoiceId: &voice})
	if err != nil {
		return fmt.Errorf("estimate: %w", err)
	}
	if est.JSON200 == nil {
		return unexpected("estimate", est.StatusCode(), est.Body)
	}
	var credits float64 = est.JSON200.Credits // a number (the text's estimate table); max_credits_needed is an integer
	fmt.Printf("estimate: %g credits, submit with max_credits %d\n", credits, est.JSON200.MaxCreditsNeeded)

	sub, err := c.CreateGenerationWithResponse(ctx, mediaspec.GenerationRequest{
		CapabilityId: "tts", Config: config, VoiceId: &voice, MaxCredits: est.JSON200.MaxCreditsNeeded,
	})
	if err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	if sub.JSON201 == nil {
		return unexpected("submit", sub.StatusCode(), sub.Body)
	}
	id := sub.JSON201.GenerationId
	fmt.Printf("submit: %s, %d credits held\n", id, sub.JSON201.Credits.CreditsHeld)

	var done *mediaspec.GenerationWaitResponse
	for i := 0; i < 100 && done == nil; i++ {
		w, err := c.WaitGenerationWithResponse(ctx, id)
		if err != nil {
			return fmt.Errorf("wait: %w", err)
		}
		if w.JSON200 == nil {
			return unexpected("wait", w.StatusCode(), w.Body)
		}
		if !w.JSON200.StillRunning {
			done = w.JSON200
		}
	}
	if done == nil {
		return errors.New("wait: still running after 100 waits")
	}
	g := done.Generation
	if g.Status != mediaspec.GenerationStatusCompleted || len(g.Outputs) == 0 || g.Outputs[0].AssetId == nil {
		return fmt.Errorf("wait: finished as %s with %d outputs", g.Status, len(g.Outputs))
	}
	if g.OutputKind == nil || *g.OutputKind != mediaspec.OutputKindAudio || (g.Purpose != nil && !g.Purpose.Valid()) {
		return fmt.Errorf("wait: output_kind %v, purpose %v", g.OutputKind, g.Purpose)
	}
	fmt.Printf("wait: %s %s, output %s, charged %d\n", g.Status, *g.OutputKind, *g.Outputs[0].AssetId, deref(g.Credits.CreditsCharged))

	// The delivery, dispatched on its type through the generated discriminated union.
	select {
	case b := <-deliveries:
		var ev mediaspec.WebhookEvent
		if err := json.Unmarshal(b, &ev); err != nil {
			return fmt.Errorf("event: %w", err)
		}
		v, err := ev.ValueByDiscriminator()
		if err != nil {
			return fmt.Errorf("event: %w", err)
		}
		done, ok := v.(mediaspec.GenerationCompletedEvent)
		if !ok || done.Data.GenerationId != id {
			return fmt.Errorf("event: got %T for %s", v, b)
		}
		fmt.Printf("event: %s for %s (delivery %s)\n", done.Type, done.Data.GenerationId, done.Id)
	case <-time.After(60 * time.Second):
		return errors.New("event: no generation.completed delivery within 60 seconds")
	}

	missing := "gen_" + strings.Repeat("0", 32)
	nf, err := c.GetGenerationWithResponse(ctx, missing)
	if err != nil {
		return fmt.Errorf("error answer: %w", err)
	}
	if nf.JSON404 == nil {
		return unexpected("error answer", nf.StatusCode(), nf.Body)
	}
	if nf.JSON404.Error.Code != mediaspec.ErrorCodeNotFound || nf.JSON404.Error.Retryable {
		return fmt.Errorf("error answer: code %s retryable %v", nf.JSON404.Error.Code, nf.JSON404.Error.Retryable)
	}
	fmt.Printf("error: %d %s (retryable %v)\n", nf.StatusCode(), nf.JSON404.Error.Code, nf.JSON404.Error.Retryable)
	fmt.Println("go flow: ok")
	return nil
}

// unexpected describes an answer the flow did not expect.
func unexpected(step string, status int, body []byte) error {
	return fmt.Errorf("%s: unexpected answer %d: %s", step, status, body)
}

func ptr[T any](v T) *T { return &v }

func deref(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}
