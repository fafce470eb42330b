package specs

import (
	. "github.com/onsi/ginkgo/v2" //nolint:revive
	. "github.com/onsi/gomega"    //nolint:revive

	"github.com/mediaspec/mediaspec/conformance/internal/framework"
)

// Upload helpers: reservations, file PUTs, finalizes, sample files and configs that name uploads.

// assetRowKeys are the fields every asset row carries.
var assetRowKeys = []string{"asset_id", "kind", "source", "file_name", "content_type", "size_bytes", "width", "height",
	"duration_ms", "scan_status", "usable", "generation_id", "created_at"}

// acceptedTypes are the accepted upload types of the interface spec with their kind and ceiling.
var acceptedTypes = []struct {
	ct, kind string
	max      int64
}{
	{"image/jpeg", "image", 20971520}, {"image/png", "image", 20971520}, {"image/webp", "image", 20971520},
	{"image/gif", "image", 20971520}, {"video/mp4", "video", 104857600}, {"video/webm", "video", 104857600},
	{"video/quicktime", "video", 104857600}, {"audio/mpeg", "audio", 26214400}, {"audio/mp3", "audio", 26214400},
	{"audio/wav", "audio", 26214400}, {"audio/x-wav", "audio", 26214400}, {"audio/webm", "audio", 26214400},
	{"audio/ogg", "audio", 26214400},
}

// assetSays checks that the asset read a (GET /assets/{id}) says want in asset.key when it carries
// key: the asset record beyond asset_id, kind and the link fields is not shown (Other records), so
// scan_status and usable there are the reference's names, judged only when sent.
func assetSays(a *framework.Response, key string, want any, what string) {
	GinkgoHelper()
	if v, has := recordView(a, "asset_id", "the asset read").Lookup(key); has {
		Expect(v).To(Equal(want), what+a.Describe())
	}
}
