package framework

import (
	"context"
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
)

// ControlAPI calls the optional test-control API (spec/control.yaml) with the run's control token.
// Its exchanges are checked against the control description and recorded in the transcript like
// any other. Methods return errors rather than failing the spec, so Setup can use them; specs use
// the failing wrappers on Spec.
type ControlAPI struct {
	f *Framework
}

// WorkspaceOptions are the fields of POST /workspaces; zero values are left to the service.
type WorkspaceOptions struct {
	Name    string // empty: the service names it
	Plan    string // free, pro or business; empty: the default (pro)
	Balance *int   // available credits; nil: the default
}

// Workspace is a workspace made through control.
type Workspace struct {
	ID   string // the workspace id
	Plan string // free, pro or business
}

// KeyOptions are the fields of POST /workspaces/{id}/keys.
type KeyOptions struct {
	Name             string         // empty: the service names it
	Scopes           []string       // read and/or generate; required
	BudgetCredits    *int           // rolling 24 h spend budget; nil: no limit
	RequestAllowance *int           // total calls the key may make; nil: unlimited
	Buckets          map[string]int // bucket name -> calls per minute
	ExpiresAt        *time.Time     // when the key stops working; nil: never
}

// Key is a key made through control. Key is the secret; it is registered with the redactor.
type Key struct {
	ID     string   // the key's id, never secret
	Key    string   // the secret, registered with the redactor
	Scopes []string // read and/or generate
}

// Call makes one control call and returns the answer; a transport error or a violation of the
// control description is an error.
func (c *ControlAPI) Call(ctx context.Context, method, path string, body any) (*Response, error) {
	var opts []CallOption
	if body != nil {
		opts = append(opts, JSONBody(body))
	}
	u := c.f.resolve(c.f.controlRoot, path)
	return c.f.exchange(ctx, validatorChecker(c.f.ctlValid), method, u, c.f.cfg.ControlToken, Bearer, opts)
}

// expect makes a call and requires the status and a JSON object body.
func (c *ControlAPI) expect(ctx context.Context, method, path string, body any, status int) (map[string]any, *Response, error) {
	r, err := c.Call(ctx, method, path, body)
	if err != nil {
		return nil, r, fmt.Errorf("control %s %s: %w", method, path, err)
	}
	if r.Status != status {
		return nil, r, fmt.Errorf("control %s %s answered %d, want %d\n%s", method, path, r.Status, status, r.Exchange)
	}
	doc, err := r.object()
	if err != nil {
		return nil, r, fmt.Errorf("control %s %s: %w\n%s", method, path, err, r.Exchange)
	}
	return doc, r, nil
}

// CreateWorkspace calls POST /workspaces.
func (c *ControlAPI) CreateWorkspace(ctx context.Context, o WorkspaceOptions) (Workspace, error) {
	body := map[string]any{}
	if o.Name != "" {
		body["name"] = o.Name
	}
	if o.Plan != "" {
		body["plan"] = o.Plan
	}
	if o.Balance != nil {
		body["balance"] = *o.Balance
	}
	doc, r, err := c.expect(ctx, http.MethodPost, "/workspaces", body, http.StatusCreated)
	if err != nil {
		return Workspace{}, err
	}
	id, _ := doc["workspace_id"].(string)
	plan, _ := doc["plan"].(string)
	if id == "" {
		return Workspace{}, fmt.Errorf("control POST /workspaces: no workspace_id\n%s", r.Exchange)
	}
	return Workspace{ID: id, Plan: plan}, nil
}

// CreateKey calls POST /workspaces/{id}/keys. The new key is registered with the redactor before
// anything can print it.
func (c *ControlAPI) CreateKey(ctx context.Context, workspaceID string, o KeyOptions) (Key, error) {
	body := map[string]any{"scopes": o.Scopes}
	if o.Name != "" {
		body["name"] = o.Name
	}
	if o.BudgetCredits != nil {
		body["budget_credits"] = *o.BudgetCredits
	}
	if o.RequestAllowance != nil {
		body["request_allowance"] = *o.RequestAllowance
	}
	if len(o.Buckets) > 0 {
		body["buckets"] = o.Buckets
	}
	if o.ExpiresAt != nil {
		body["expires_at"] = o.ExpiresAt.UTC().Format(time.RFC3339)
	}
	doc, r, err := c.expect(ctx, http.MethodPost, "/workspaces/"+workspaceID+"/keys", body, http.StatusCreated)
	if err != nil {
		return Key{}, err
	}
	k := Key{}
	k.ID, _ = doc["key_id"].(string)
	k.Key, _ = doc["key"].(string)
	c.f.redactor.Add(k.Key)
	if k.ID == "" || k.Key == "" {
		return Key{}, fmt.Errorf("control POST /workspaces/{id}/keys: no key_id or key\n%s", r.Exchange)
	}
	if s, ok := doc["scopes"].([]any); ok {
		for _, x := range s {
			if str, ok := x.(string); ok {
				k.Scopes = append(k.Scopes, str)
			}
		}
	}
	return k, nil
}

// RevokeKey calls DELETE /keys/{key_id}.
func (c *ControlAPI) RevokeKey(ctx context.Context, keyID string) error {
	_, _, err := c.expect(ctx, http.MethodDelete, "/keys/"+keyID, nil, http.StatusOK)
	return err
}

// PatchWorkspace calls PATCH /workspaces/{id} with body.
func (c *ControlAPI) PatchWorkspace(ctx context.Context, workspaceID string, body map[string]any) error {
	_, _, err := c.expect(ctx, http.MethodPatch, "/workspaces/"+workspaceID, body, http.StatusOK)
	return err
}

// DeleteWorkspace calls DELETE /workspaces/{id}.
func (c *ControlAPI) DeleteWorkspace(ctx context.Context, workspaceID string) error {
	_, _, err := c.expect(ctx, http.MethodDelete, "/workspaces/"+workspaceID, nil, http.StatusOK)
	return err
}

// AdvanceClock calls POST /clock/advance, moving the service clock forward.
func (c *ControlAPI) AdvanceClock(ctx context.Context, seconds float64) error {
	doc, r, err := c.expect(ctx, http.MethodPost, "/clock/advance", map[string]any{"seconds": seconds}, http.StatusOK)
	if err != nil {
		return err
	}
	raw, _ := doc["now"].(string)
	now, perr := time.Parse(time.RFC3339Nano, raw)
	if perr != nil {
		return fmt.Errorf("control POST /clock/advance: now is not a date-time\n%s", r.Exchange)
	}
	// The jump started where the clock stood seconds before the answer's now; an attempt stamped
	// then may still arrive.
	c.f.noteJump(now.Add(-time.Duration(seconds * float64(time.Second))))
	return nil
}

// Catalogue state (spec/control.yaml, tag catalogue): prices, deprecated config names, templates,
// voices and actors. Each method answers the operation's JSON object; a status other than the
// operation's success is a *HookError, so a spec can tell a control API that lacks the operation
// (404 for an id the spec read from the API) from one that refused the body.

// HookError is a control answer with another status than the operation's success.
type HookError struct {
	Op     string // the control call: method and path
	Status int    // the status it answered
	Detail string // the exchange as a transcript shows it, redacted
}

// Error says which control operation answered what.
func (e *HookError) Error() string {
	return fmt.Sprintf("control %s answered %d\n%s", e.Op, e.Status, e.Detail)
}

// hook makes a catalogue call and requires status.
func (c *ControlAPI) hook(ctx context.Context, method, path string, body any, status int) (map[string]any, error) {
	r, err := c.Call(ctx, method, path, body)
	if err != nil {
		return nil, fmt.Errorf("control %s %s: %w", method, path, err)
	}
	if r.Status != status {
		return nil, &HookError{Op: method + " " + path, Status: r.Status, Detail: r.Exchange.String()}
	}
	doc, err := r.object()
	if err != nil {
		return nil, fmt.Errorf("control %s %s: %w\n%s", method, path, err, r.Exchange)
	}
	return doc, nil
}

// SetPriced calls PATCH /capabilities/{id}: priced false withdraws the capability's published
// price, true publishes it again.
func (c *ControlAPI) SetPriced(ctx context.Context, capabilityID string, priced bool) error {
	_, err := c.hook(ctx, http.MethodPatch, "/capabilities/"+capabilityID, map[string]any{"priced": priced}, http.StatusOK)
	return err
}

// SetAlias calls PUT /capabilities/{id}/aliases/{alias}: alias becomes the deprecated old name of
// the optional config property field, accepted until stopsIn ("" for the service's default, the
// next minor version). It answers the installed alias object.
func (c *ControlAPI) SetAlias(ctx context.Context, capabilityID, alias, field, stopsIn string) (map[string]any, error) {
	body := map[string]any{"field": field}
	if stopsIn != "" {
		body["stops_in"] = stopsIn
	}
	doc, err := c.hook(ctx, http.MethodPut, "/capabilities/"+capabilityID+"/aliases/"+alias, body, http.StatusOK)
	if err != nil {
		return nil, err
	}
	a, _ := doc["alias"].(map[string]any)
	return a, nil
}

// RemoveAlias calls DELETE /capabilities/{id}/aliases/{alias}.
func (c *ControlAPI) RemoveAlias(ctx context.Context, capabilityID, alias string) error {
	_, err := c.hook(ctx, http.MethodDelete, "/capabilities/"+capabilityID+"/aliases/"+alias, nil, http.StatusOK)
	return err
}

// SetTemplateLive calls PATCH /templates/{id}: live false withdraws the template.
func (c *ControlAPI) SetTemplateLive(ctx context.Context, templateID string, live bool) error {
	_, err := c.hook(ctx, http.MethodPatch, "/templates/"+templateID, map[string]any{"live": live}, http.StatusOK)
	return err
}

// AddTemplate calls POST /presets/{id}/templates and answers the new template_id.
func (c *ControlAPI) AddTemplate(ctx context.Context, presetID, name string, galleryOrder int) (string, error) {
	doc, err := c.hook(ctx, http.MethodPost, "/presets/"+presetID+"/templates", map[string]any{"name": name, "gallery_order": galleryOrder}, http.StatusCreated)
	if err != nil {
		return "", err
	}
	id, _ := doc["template_id"].(string)
	return id, nil
}

// SetVoiceActive calls PATCH /voices/{id}: active false deactivates the voice.
func (c *ControlAPI) SetVoiceActive(ctx context.Context, voiceID string, active bool) error {
	_, err := c.hook(ctx, http.MethodPatch, "/voices/"+voiceID, map[string]any{"active": active}, http.StatusOK)
	return err
}

// CloneVoice calls POST /workspaces/{id}/voices and answers the cloned voice's voice_id.
func (c *ControlAPI) CloneVoice(ctx context.Context, workspaceID, name string) (string, error) {
	doc, err := c.hook(ctx, http.MethodPost, "/workspaces/"+workspaceID+"/voices", map[string]any{"name": name}, http.StatusCreated)
	if err != nil {
		return "", err
	}
	id, _ := doc["voice_id"].(string)
	return id, nil
}

// SetActorState calls PATCH /actors/{id} with state ready, processing or disabled.
func (c *ControlAPI) SetActorState(ctx context.Context, actorID, state string) error {
	_, err := c.hook(ctx, http.MethodPatch, "/actors/"+actorID, map[string]any{"state": state}, http.StatusOK)
	return err
}

// AddActor adds an actor and answers its actor_id: the workspace's own (POST
// /workspaces/{id}/actors) when workspaceID is set, else a cast actor (POST /actors). body holds
// the actor's fields (name required; created_at, state, core_cast, ...).
func (c *ControlAPI) AddActor(ctx context.Context, workspaceID string, body map[string]any) (string, error) {
	path := "/actors"
	if workspaceID != "" {
		path = "/workspaces/" + workspaceID + "/actors"
	}
	doc, err := c.hook(ctx, http.MethodPost, path, body, http.StatusCreated)
	if err != nil {
		return "", err
	}
	id, _ := doc["actor_id"].(string)
	return id, nil
}

// HomeWorkspace is the workspace of the spec's Client (its own when the run made workspaces
// through control), for hooks that act on it; "" when the run was given keys and no workspace id.
func (s *Spec) HomeWorkspace() string {
	GinkgoHelper()
	return s.homeWorkspace(s.f.envCopy())
}

// SetOffered calls PATCH /capabilities/{id}: offered false withholds the capability from agents,
// true offers it again.
func (c *ControlAPI) SetOffered(ctx context.Context, capabilityID string, offered bool) error {
	_, err := c.hook(ctx, http.MethodPatch, "/capabilities/"+capabilityID, map[string]any{"offered": offered}, http.StatusOK)
	return err
}

// StartAppGeneration calls POST /workspaces/{id}/generations: a generation started in the app, as
// a person does (no key, no spend limit), and answers its generation_id.
func (c *ControlAPI) StartAppGeneration(ctx context.Context, workspaceID, capabilityID string, config map[string]any) (string, error) {
	doc, err := c.hook(ctx, http.MethodPost, "/workspaces/"+workspaceID+"/generations", map[string]any{"capability_id": capabilityID, "config": config}, http.StatusCreated)
	if err != nil {
		return "", err
	}
	id, _ := doc["generation_id"].(string)
	return id, nil
}

// CopyCapability calls POST /workspaces/{id}/capabilities: a copy of listed capability copyOf
// under capabilityID that only that workspace's lists show (status coming_soon), for lists of
// more than 50 rows.
func (c *ControlAPI) CopyCapability(ctx context.Context, workspaceID, copyOf, capabilityID string) error {
	_, err := c.hook(ctx, http.MethodPost, "/workspaces/"+workspaceID+"/capabilities", map[string]any{"copy_of": copyOf, "capability_id": capabilityID}, http.StatusCreated)
	return err
}
