package framework

import (
	"context"
	"fmt"
	"net/http"
	"time"
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
	Name    string
	Plan    string // free, pro or business; empty: the default (pro)
	Balance *int   // available credits; nil: the default
}

// Workspace is a workspace made through control.
type Workspace struct {
	ID   string
	Plan string
}

// KeyOptions are the fields of POST /workspaces/{id}/keys.
type KeyOptions struct {
	Name             string
	Scopes           []string // read and/or generate; required
	BudgetCredits    *int
	RequestAllowance *int
	Buckets          map[string]int // bucket name -> calls per minute
	ExpiresAt        *time.Time     // when the key stops working; nil: never
}

// Key is a key made through control. Key is the secret; it is registered with the redactor.
type Key struct {
	ID     string
	Key    string
	Scopes []string
}

// Call makes one control call and returns the answer; a transport error or a violation of the
// control description is an error.
func (c *ControlAPI) Call(ctx context.Context, method, path string, body any) (*Response, error) {
	var opts []CallOption
	if body != nil {
		opts = append(opts, JSONBody(body))
	}
	u := c.f.resolve(c.f.controlRoot, path)
	return c.f.exchange(ctx, c.f.ctlValid, method, u, c.f.cfg.ControlToken, Bearer, opts)
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
	doc, err := decodeObject(r.Body)
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
