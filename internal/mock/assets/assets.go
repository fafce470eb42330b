// Package assets is the mock's asset registry: every file a workspace owns — uploads and generated
// outputs — with the metadata GET /assets answers. Bytes live in package blob; this package holds
// only records.
//
// Ownership is part of every lookup: a record of another workspace is reported as absent, so the
// API answers not_found, never forbidden. A Registry is safe for concurrent use.
package assets

import (
	"sort"
	"sync"
	"time"
)

// Source says where an asset came from.
type Source string

// The sources GET /assets filters on.
const (
	SourceUpload Source = "upload"
	SourceOutput Source = "output"
)

// Asset is one file record. Pointer fields are null in answers when nil.
type Asset struct {
	ID          string
	WorkspaceID string
	Kind        string // image, video, audio or text
	Source      Source
	FileName    string
	ContentType string
	SizeBytes   int64
	Width       *int
	Height      *int
	DurationMS  *int64
	// ScanStatus is clean, flagged or pending for uploads and "" (null) for outputs.
	ScanStatus   string
	Usable       bool
	GenerationID string // the generation that made an output; "" for uploads
	// Listed is false while an upload is only reserved (reservations are not assets yet).
	Listed    bool
	CreatedAt time.Time
}

// Registry holds the asset records of every workspace.
type Registry struct {
	mu   sync.Mutex // guards byID
	byID map[string]*Asset
	seq  map[string]int64 // insertion order, to break created_at ties deterministically
	next int64
}

// NewRegistry makes an empty registry.
func NewRegistry() *Registry {
	return &Registry{byID: map[string]*Asset{}, seq: map[string]int64{}}
}

// Put adds or replaces a record.
func (r *Registry) Put(a Asset) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.seq[a.ID]; !ok {
		r.next++
		r.seq[a.ID] = r.next
	}
	c := a
	r.byID[a.ID] = &c
}

// Get returns the record of id when workspaceID owns it.
func (r *Registry) Get(workspaceID, id string) (Asset, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.byID[id]
	if !ok || a.WorkspaceID != workspaceID {
		return Asset{}, false
	}
	return *a, true
}

// Update applies f to the record of id when workspaceID owns it, under the registry's lock, and
// returns the updated record. f must not call back into the Registry.
func (r *Registry) Update(workspaceID, id string, f func(*Asset)) (Asset, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.byID[id]
	if !ok || a.WorkspaceID != workspaceID {
		return Asset{}, false
	}
	f(a)
	return *a, true
}

// Delete forgets the record of id when workspaceID owns it.
func (r *Registry) Delete(workspaceID, id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.byID[id]
	if !ok || a.WorkspaceID != workspaceID {
		return false
	}
	delete(r.byID, id)
	delete(r.seq, id)
	return true
}

// Reset forgets every record.
func (r *Registry) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byID = map[string]*Asset{}
	r.seq = map[string]int64{}
	r.next = 0
}

// Filter selects listed assets of one workspace; empty fields match everything.
type Filter struct {
	Kind   string
	Source Source
}

// List returns one page of the workspace's listed assets, newest first (creation time, then most
// recently added). cursor is the id of the last row of the previous page; a cursor naming no listed
// asset of the workspace restarts from the first page. next is "" on the last page.
func (r *Registry) List(workspaceID string, f Filter, cursor string, limit int) (page []Asset, next string) {
	r.mu.Lock()
	var rows []*Asset
	seq := map[string]int64{}
	for _, a := range r.byID {
		if a.WorkspaceID != workspaceID || !a.Listed {
			continue
		}
		if (f.Kind != "" && a.Kind != f.Kind) || (f.Source != "" && a.Source != f.Source) {
			continue
		}
		c := *a
		rows = append(rows, &c)
		seq[a.ID] = r.seq[a.ID]
	}
	r.mu.Unlock()
	sort.Slice(rows, func(i, j int) bool {
		if !rows[i].CreatedAt.Equal(rows[j].CreatedAt) {
			return rows[i].CreatedAt.After(rows[j].CreatedAt)
		}
		return seq[rows[i].ID] > seq[rows[j].ID]
	})
	start := 0
	if cursor != "" {
		for i, a := range rows {
			if a.ID == cursor {
				start = i + 1
				break
			}
		}
	}
	if limit <= 0 {
		limit = 1
	}
	end := min(start+limit, len(rows))
	for _, a := range rows[start:end] {
		page = append(page, *a)
	}
	if end < len(rows) && len(page) > 0 {
		next = page[len(page)-1].ID
	}
	return page, next
}
