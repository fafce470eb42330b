package specs

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/framework"
	fixtures "github.com/mediaspec/mediaspec/fixtures/media"
)

// Specs of list settings that run once per value (fan-out).

// fanOut is a capability with a list setting, discovered by its schema's shape.
type fanOut struct {
	d      *framework.Response
	id     string
	field  string   // the list setting: an array of enum strings
	values []string // its enum values
	base   map[string]any
}

// fanOutCapability finds an available capability whose config schema has an array property of
// enum strings (a list setting such as languages), and returns its example_config with every
// upload it names replaced by a finalized sample file of the kind the field's name says (video,
// image or audio). It skips the spec when there is none.
func fanOutCapability(ctx context.Context, s *framework.Spec, c *framework.Client) fanOut {
	GinkgoHelper()
	for _, row := range catalogue(ctx, c) {
		if row["status"] != "available" {
			continue
		}
		d := c.Get(ctx, "/capabilities/"+row["capability_id"].(string)).ExpectOK(http.StatusOK)
		props := schemaProps(d)
		for name, v := range props {
			p, _ := v.(map[string]any)
			items, _ := p["items"].(map[string]any)
			enum, _ := items["enum"].([]any)
			if p["type"] != "array" || items["type"] != "string" || len(enum) < 2 {
				continue
			}
			if mx, ok := framework.AsInt(p["maxItems"]); ok && mx < 2 {
				continue
			}
			fo := fanOut{d: d, id: d.String("capability_id"), field: name}
			for _, e := range enum {
				if str, ok := e.(string); ok {
					fo.values = append(fo.values, str)
				}
			}
			base, ok := withSampleUploads(ctx, s, c, props, objectAt(d, "example_config"))
			if !ok {
				continue
			}
			fo.base = base
			return fo
		}
	}
	Skip("unsupported: the target lists no available capability with a list setting (an array of enum strings) whose uploads the suite can supply")
	return fanOut{}
}

// withSampleUploads returns config with every plain id array naming an upload replaced by a
// fresh finalized sample file whose kind the field's name gives; false when a field names no kind.
func withSampleUploads(ctx context.Context, s *framework.Spec, c *framework.Client, props map[string]any, config map[string]any) (map[string]any, bool) {
	GinkgoHelper()
	out := clone(config)
	for name, v := range out {
		arr, isArr := v.([]any)
		if !isArr || !namesUpload(arr) {
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
		id, _ := uploadClean(ctx, s, c, f.Name, f.ContentType, data)
		out[name] = []any{id}
	}
	return out, true
}

// withValues is the fan-out capability's config with the list setting set to values.
func (fo fanOut) withValues(values ...string) map[string]any {
	cfg := clone(fo.base)
	list := make([]any, len(values))
	for i, v := range values {
		list[i] = v
	}
	cfg[fo.field] = list
	return cfg
}

func coverageFanOutSpecs(f *framework.Framework) {
	Describe("fan-out list settings", func() {
		f.Rule("VAR-012", "VAR-013").Needs(framework.Spends, framework.Uploads).It("two values answer a batch_group_id and one generation per value, each labelled with its value and charged on its own", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			fo := fanOutCapability(ctx, s, sp.c)
			two := fo.values[:2]
			one, needOne := estimateOf(ctx, sp.c, fo.id, fo.withValues(two[0]), nil)
			priceOne, _ := framework.AsInt(one.Field("credits"))
			before, _ := balanceOf(ctx, sp.c)
			j := submit(ctx, s, sp.c, fo.id, fo.withValues(two...), nil)
			Expect(j.r.String("batch_group_id")).To(MatchRegexp(bgIDPattern), "two values fan out into a batch"+j.r.Describe())
			Expect(j.ids).To(HaveLen(2), "one generation per value"+j.r.Describe())
			Expect(j.ids[0]).NotTo(Equal(j.ids[1]), j.r.Describe())
			Expect(j.ids).To(ContainElement(j.id), "generation_id is one of generation_ids"+j.r.Describe())
			Expect(j.need).To(Equal(2*needOne), "the hold is one padded price per value")
			Expect(j.r.Int("credits.credits_held")).To(Equal(2*needOne), "each value holds its own padded price"+j.r.Describe())
			labels := map[string]string{}
			for i, id := range j.ids {
				r := readGen(ctx, sp.c, id)
				checkGeneration(r, "generation")
				Expect(r.String("generation.batch_group_id")).To(Equal(j.r.String("batch_group_id")), r.Describe())
				Expect(r.Int("generation.batch_index")).To(Equal(int64(i)), r.Describe())
				label := r.String("generation.fan_out_label")
				Expect(label).To(BeElementOf(two[0], two[1]), "fan_out_label names the generation's value"+r.Describe())
				labels[label] = id
				Expect(r.Int("generation.credits.credits_held")).To(Equal(needOne), "each fanned-out generation holds one value's padded price"+r.Describe())
				Expect(r.Int("generation.credits_estimated")).To(Equal(priceOne), "each fanned-out generation is priced as one value"+r.Describe())
			}
			Expect(labels).To(HaveLen(2), fmt.Sprintf("each value labels one generation: %v", labels))
			var charged int64
			for _, id := range j.ids {
				s.Finish(ctx, sp.c, id)
				r := readGen(ctx, sp.c, id)
				Expect(r.Bool("generation.credits.terminal")).To(BeTrue(), r.Describe())
				c := r.Int("generation.credits.credits_charged")
				if r.String("generation.status") == "completed" {
					Expect(c).To(Equal(priceOne), "each completed value is charged its own price"+r.Describe())
				}
				charged += c
			}
			if sp.ws != nil {
				after, held := balanceOf(ctx, sp.c)
				Expect(held).To(BeZero())
				Expect(before-after).To(Equal(charged), "the balance moved by the sum of the values' charges")
			}
		})

		f.Rule("VAR-015", "SUBMIT-004").Needs(framework.Spends, framework.Uploads).It("a single value makes one generation without batch_group_id", func(ctx context.Context, s *framework.Spec) {
			sp := newSpender(ctx, s)
			fo := fanOutCapability(ctx, s, sp.c)
			j := submit(ctx, s, sp.c, fo.id, fo.withValues(fo.values[0]), nil)
			Expect(j.r.Doc()).NotTo(HaveKey("batch_group_id"), "one value is no batch"+j.r.Describe())
			Expect(j.ids).To(Equal([]string{j.id}), "generation_ids is [generation_id]"+j.r.Describe())
			r := readGen(ctx, sp.c, j.id)
			checkGeneration(r, "generation")
			Expect(r.Field("generation.batch_group_id")).To(BeNil(), r.Describe())
			Expect(r.Field("generation.batch_index")).To(BeNil(), r.Describe())
		})
	})
}
