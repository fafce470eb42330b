package uploads

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/catalogue"
	"github.com/mediaspec/mediaspec/conformance/internal/framework"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// WithAsset returns a copy of config with every upload id in it (catalogue.MapUploads: plain ids
// and file objects' assetId) replaced by id.
func WithAsset(config map[string]any, id string) map[string]any {
	return catalogue.MapUploads(catalogue.Clone(config), func(string) string { return id }).(map[string]any)
}

// WithoutUploads returns a copy of config without the fields that name an upload.
func WithoutUploads(config map[string]any) map[string]any {
	out := catalogue.Clone(config)
	for k, v := range out {
		if catalogue.NamesUpload(v) {
			delete(out, k)
		}
	}
	return out
}

// WithSampleUploads returns config with every plain id array naming an upload replaced by a
// fresh finalized sample file whose kind the field's name gives; false when a field names no kind.
func WithSampleUploads(ctx context.Context, s *framework.Spec, c *framework.Client, props map[string]any,
	config map[string]any) (map[string]any, bool) {
	GinkgoHelper()
	out := catalogue.Clone(config)
	for name, v := range out {
		arr, isArr := v.([]any)
		if !isArr || !catalogue.NamesUpload(arr) {
			continue
		}
		var sample string
		switch {
		case strings.Contains(name, "video"):
			sample = "video.mp4"
		case strings.Contains(name, "image"):
			sample = "image.png"
		case strings.Contains(name, "audio"):
			sample = "audio.wav"
		default:
			return nil, false
		}
		if _, ok := props[name]; !ok {
			return nil, false
		}
		f, data := fixtures.Get(sample)
		id, _ := Clean(ctx, s, c, f.Name, f.ContentType, data)
		out[name] = []any{id}
	}
	return out, true
}

// ReadyConfig returns config with every upload it names replaced by a usable image uploaded in c's
// workspace (config unchanged when it names none).
func ReadyConfig(ctx context.Context, s *framework.Spec, c *framework.Client, config map[string]any) map[string]any {
	GinkgoHelper()
	if !catalogue.NamesUpload(config) {
		return catalogue.Clone(config)
	}
	name, ct, data := Sample("image", 0)
	id, _ := Clean(ctx, s, c, name, ct, data)
	return WithAsset(config, id)
}
